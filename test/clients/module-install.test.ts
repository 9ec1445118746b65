// `modmirror serve` as Terraform sees it: the module-install client, built
// from the libraries `terraform init` installs modules with (disco,
// go-version, go-getter), installs from it over HTTP (a CLI host block) and
// HTTPS (real discovery, trusting a CA this test makes), with relative and
// absolute download locations, a bearer token, and a mirror changed by
// publish while served. Every install must give the module's files, byte for byte.

import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/serve/index.js';
import { startNginx } from '../hosting/nginx-server.js';
import { freePort, makeCertificates, runCli, tempDir } from '../helpers.js';
import { expectSameFiles, install, moduleInstallClient, recordingProxy, writeModules, type RecordingProxy } from './install.js';

const dir = tempDir('mm-client-');
const source = (v: string, sub = '') => join(dir, 'mods/acme/hello/null', v, sub);
const servers: { close(): Promise<void> }[] = [];
let plain: RunningServer;
let secure: RunningServer;
let absolute: RunningServer;
let absolutePort = 0;
let certs: ReturnType<typeof makeCertificates>;

beforeAll(async () => {
  // Compile (or find) the client first: on a fresh machine this is the slow part.
  await moduleInstallClient();
  certs = makeCertificates(dir);
  writeModules(dir);
  absolutePort = await freePort();
  expect((await runCli(['build', '--modules', 'mods', '--mirror', 'dist', '--json'], dir)).code).toBe(0);
  expect((await runCli(['build', '--modules', 'mods', '--mirror', 'dist-tls', '--json'], dir)).code).toBe(0);
  const base = `http://127.0.0.1:${absolutePort}/`;
  expect((await runCli(['build', '--modules', 'mods', '--mirror', 'dist-abs', '--base-url', base, '--json'], dir)).code).toBe(0);
  const common = { host: '127.0.0.1', log: () => {} };
  plain = await startServer({ ...common, dir: join(dir, 'dist'), port: 0, dataDir: join(dir, 'data') });
  secure = await startServer({ ...common, dir: join(dir, 'dist-tls'), port: 0, dataDir: join(dir, 'data-tls'), tls: { cert: certs.cert, key: certs.key } });
  absolute = await startServer({ ...common, dir: join(dir, 'dist-abs'), port: absolutePort, dataDir: join(dir, 'data-abs'), baseUrl: base });
  servers.push(plain, secure, absolute);
});
afterAll(async () => {
  for (const s of servers) await s.close();
});

/** A document without its `downloads` counts, which serve fills in from its data as it answers. */
const withoutCounts = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(withoutCounts)
    : typeof value === 'object' && value !== null
      ? Object.fromEntries(
          Object.entries(value)
            .filter(([k]) => k !== 'downloads')
            .map(([k, v]) => [k, withoutCounts(v)]),
        )
      : value;
const hostOf = (server: { url: string }) => new URL(server.url).host;
const modulesUrl = (server: { url: string }) => new URL('v1/modules/', server.url).href;

describe('module-install against modmirror serve over HTTP (a CLI host block)', () => {
  it('resolves "~> 1.2" to the newest 1.x release, passing over the 1.3.0 pre-release', async () => {
    const got = await install({ source: `${hostOf(plain)}/acme/hello/null`, version: '~> 1.2', dest: join(dir, 'i-range'), modulesUrl: modulesUrl(plain) });
    expect(got.version).toBe('1.2.3');
    // Terraform takes 200 or 204; serve answers 200, as nginx does.
    expect(got.downloadStatus).toBe(200);
    expect(got.location).toBe('./hello-null-1.2.3.tar.gz');
    expect(got.package).toBe(`${plain.url}v1/modules/acme/hello/null/1.2.3/hello-null-1.2.3.tar.gz`);
    expectSameFiles(got, source('1.2.3'));
  });

  it('installs the //modules/x submodule of the chosen version', async () => {
    const got = await install({
      source: `${hostOf(plain)}/acme/hello/null//modules/x`,
      version: '~> 1.2.0',
      dest: join(dir, 'i-sub'),
      modulesUrl: modulesUrl(plain),
    });
    expect(got.version).toBe('1.2.3');
    expect(got.dir).toBe(join(dir, 'i-sub/modules/x'));
    expectSameFiles(got, source('1.2.3', 'modules/x'));
  });

  it('installs a pre-release only when pinned exactly', async () => {
    for (const pin of ['1.3.0-rc.1', '= 1.3.0-rc.1']) {
      const got = await install({ source: `${hostOf(plain)}/acme/hello/null`, version: pin, dest: join(dir, 'i-pre'), modulesUrl: modulesUrl(plain) });
      expect(got.version, pin).toBe('1.3.0-rc.1');
      expectSameFiles(got, source('1.3.0-rc.1'));
    }
    // A range never picks a pre-release, even one that names it as a bound.
    for (const [range, want] of [
      ['>= 1.2.3, < 2.0.0', '1.2.3'],
      ['>= 1.3.0-rc.1', '2.0.0'],
      ['', '2.0.0'],
    ] as const) {
      const got = await install({ source: `${hostOf(plain)}/acme/hello/null`, version: range, dest: join(dir, 'i-not-pre'), modulesUrl: modulesUrl(plain) });
      expect(got.version, range).toBe(want);
    }
    await expect(
      install({ source: `${hostOf(plain)}/acme/hello/null`, version: '>= 1.3.0-rc.1, < 2.0.0', dest: join(dir, 'i-not-pre'), modulesUrl: modulesUrl(plain) }),
    ).rejects.toThrow(/no version among/);
  });

  it('fails, as Terraform does, when no version matches', async () => {
    await expect(
      install({ source: `${hostOf(plain)}/acme/hello/null`, version: '~> 3.0', dest: join(dir, 'i-none'), modulesUrl: modulesUrl(plain) }),
    ).rejects.toThrow(/no version among .* matches "~> 3.0"/);
  });
});

describe('module-install against modmirror serve over HTTPS (real discovery)', () => {
  it('discovers modules.v1 at /.well-known/terraform.json, trusting the test CA', async () => {
    expect(secure.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/$/);
    const got = await install({ source: `${hostOf(secure)}/acme/hello/null`, version: '~> 1.2', dest: join(dir, 'i-tls'), ca: certs.ca });
    expect(got.versionsUrl).toBe(`${secure.url}v1/modules/acme/hello/null/versions`);
    expectSameFiles(got, source('1.2.3'));
  });

  it('refuses a server its CA does not vouch for', async () => {
    await expect(install({ source: `${hostOf(secure)}/acme/hello/null`, version: '~> 1.2', dest: join(dir, 'i-untrusted') })).rejects.toThrow(/certificate/);
  });

  it('sends the token on discovery, versions and download, never on the archive fetch', async () => {
    // An HTTPS proxy in front of the plain server records what each request carried.
    const proxy: RecordingProxy = await recordingProxy(plain.url, { cert: certs.cert, key: certs.key });
    servers.push(proxy);
    const got = await install({ source: `${hostOf(proxy)}/acme/hello/null`, version: '~> 1.2', dest: join(dir, 'i-token'), ca: certs.ca, token: 'sekret' });
    expectSameFiles(got, source('1.2.3'));
    const auth = (p: string) => proxy.seen.filter((s) => s.path.startsWith(p)).map((s) => s.authorization ?? null);
    expect(auth('/.well-known/terraform.json')).toEqual(['Bearer sekret']);
    expect(auth('/v1/modules/acme/hello/null/versions')).toEqual(['Bearer sekret']);
    expect(auth('/v1/modules/acme/hello/null/1.2.3/download')).toEqual(['Bearer sekret']);
    const archive = auth('/v1/modules/acme/hello/null/1.2.3/hello-null-1.2.3.tar.gz');
    expect(archive.length).toBeGreaterThan(0);
    expect(archive.every((a) => a === null)).toBe(true);
    // Go's HTTP client asks for gzip on every GET, the archive's too: the
    // archive must come back as its own bytes all the same.
    expect(proxy.seen.filter((s) => s.method === 'GET').map((s) => s.acceptEncoding)).toEqual(proxy.seen.filter((s) => s.method === 'GET').map(() => 'gzip'));
  });
});

describe('module-install against modmirror serve with an absolute baseUrl', () => {
  it('follows absolute download locations', async () => {
    const got = await install({ source: `${hostOf(absolute)}/acme/hello/null`, version: '~> 1.2', dest: join(dir, 'i-abs'), modulesUrl: modulesUrl(absolute) });
    expect(got.location).toBe(`${absolute.url}v1/modules/acme/hello/null/1.2.3/hello-null-1.2.3.tar.gz`);
    expectSameFiles(got, source('1.2.3'));
    const sub = await install({
      source: `${hostOf(absolute)}/acme/hello/null//modules/x`,
      version: '1.3.0-rc.1',
      dest: join(dir, 'i-abs-sub'),
      modulesUrl: modulesUrl(absolute),
    });
    expectSameFiles(sub, source('1.3.0-rc.1', 'modules/x'));
  });
});

describe('module-install against a mirror changed by publish while served', () => {
  it('installs the newly published version', async () => {
    writeModules(dir, ['1.4.0'], 'incoming');
    const published = await runCli(['publish', '--source', 'incoming/acme/hello/null/1.4.0', '--mirror', 'dist', '--json'], dir);
    expect(published.stderr).toBe('');
    expect(published.code).toBe(0);
    const got = await install({ source: `${hostOf(plain)}/acme/hello/null`, version: '~> 1.2', dest: join(dir, 'i-published'), modulesUrl: modulesUrl(plain) });
    expect(got.version).toBe('1.4.0');
    expectSameFiles(got, join(dir, 'incoming/acme/hello/null/1.4.0'));

    // The same mirror, changed in place, from a real nginx configured by `hosting nginx`; and curl --compressed
    // gets each document the publish wrote: from nginx as it is on disk, from serve the same but for its live download counts.
    const port = await freePort();
    const block = await runCli(['hosting', 'nginx', '--mirror', 'dist', '--listen', `127.0.0.1:${port}`], dir);
    expect(block.code, block.stderr).toBe(0);
    const nginx = await startNginx(join(dir, 'nginx'), [block.stdout], [port]);
    try {
      const fromNginx = { url: `http://127.0.0.1:${port}/` };
      const viaNginx = await install({
        source: `${hostOf(fromNginx)}/acme/hello/null`,
        version: '~> 1.2',
        dest: join(dir, 'i-published-nginx'),
        modulesUrl: modulesUrl(fromNginx),
      });
      expect(viaNginx.version).toBe('1.4.0');
      expectSameFiles(viaNginx, join(dir, 'incoming/acme/hello/null/1.4.0'));
      const changed: string[] = JSON.parse(published.stdout).changed;
      for (const rel of changed.filter((r) => !r.endsWith('.tar.gz') && r !== '_headers')) {
        const onDisk = readFileSync(join(dir, 'dist', rel));
        const curl = async (base: string) =>
          (await promisify(execFile)('curl', ['-s', '-f', '--compressed', new URL(rel, base).href], { encoding: 'buffer' })).stdout;
        expect((await curl(fromNginx.url)).equals(onDisk), `nginx ${rel}`).toBe(true);
        expect(withoutCounts(JSON.parse((await curl(plain.url)).toString())), `serve ${rel}`).toEqual(withoutCounts(JSON.parse(onDisk.toString())));
      }
    } finally {
      nginx.stop();
    }
  });
});
