// serve --upstream against an upstream that misbehaves: an HTML page where a
// registry document belongs, a document redirected to another origin, an
// archive that expands past the bound (a gzip bomb), one over the config's
// limits, and one whose body stops mid-way. Each is refused: the client gets
// a 502 or 504 with the registry's JSON error body, the log says why in one
// line, and nothing is written (the mirror holds nothing, verifies, and the
// record is empty).

import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { createGzip } from 'node:zlib';
import { Header } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/serve/index.js';
import { mirrorManifest, runCli, tempDir } from '../helpers.js';
import { emptyMirror, startCache } from './site.js';

const dir = tempDir('mm-upstream-hostile-');
const MiB = 1024 * 1024;
const log: string[] = [];
let hostile: Server;
let elsewhere: Server;
/** Requests the other origin got: none, when the redirect is refused. */
const elsewhereAsked: string[] = [];
let cache: RunningServer;

/** A gzipped tar of one file `name` of `size` bytes of `fill`. */
async function gzippedTar(name: string, size: number, fill: number): Promise<Buffer> {
  const header = Buffer.alloc(512);
  new Header({ path: name, type: 'File', mode: 0o644, size, mtime: new Date('2001-01-01T00:00:00Z') }).encode(header, 0);
  const chunk = Buffer.alloc(MiB, fill);
  async function* parts() {
    yield header;
    for (let done = 0; done < size; done += MiB) yield chunk.subarray(0, Math.min(MiB, size - done));
    yield Buffer.alloc(((512 - (size % 512)) % 512) + 1024);
  }
  return buffer(Readable.from(parts()).pipe(createGzip({ level: 1 })));
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
}

beforeAll(async () => {
  // 600 MiB of zeros: under 3 MiB gzipped.
  const bomb = await gzippedTar('main.tf', 600 * MiB, 0);
  // One file of 8 KiB: over the config's per-file limit below.
  const large = await gzippedTar('main.tf', 8 * 1024, 0x20);
  const stalled = await gzippedTar('main.tf', 64 * 1024, 0x20);
  elsewhere = createServer((req, res) => {
    elsewhereAsked.push(req.url ?? '/');
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"modules":[{"versions":[{"version":"1.0.0"}]}]}');
  });
  const elsewhereUrl = await listen(elsewhere);
  hostile = createServer((req, res) => {
    const path = req.url ?? '/';
    const json = (value: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    if (path === '/.well-known/terraform.json') return json({ 'modules.v1': '/v1/modules/' });
    // A proxy's sign-in page, as a captive portal or an expired session answers.
    if (path === '/v1/modules/acme/html/aws/versions')
      return void res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><html><body>Please sign in</body></html>');
    if (path === '/v1/modules/acme/moved/aws/versions') return void res.writeHead(302, { location: `${elsewhereUrl}v1/modules/acme/moved/aws/versions` }).end();
    const versions = /^\/v1\/modules\/acme\/(bomb|large|stalled)\/aws\/versions$/.exec(path);
    if (versions) return json({ modules: [{ versions: [{ version: '1.0.0' }] }] });
    const download = /^\/v1\/modules\/acme\/(bomb|large|stalled)\/aws\/1\.0\.0\/download$/.exec(path);
    if (download) return void res.writeHead(204, { 'x-terraform-get': `/${download[1]}.tar.gz` }).end();
    if (path === '/v1/modules/acme/moved/aws/1.0.0') return json({ id: 'acme/moved/aws/1.0.0', version: '1.0.0' });
    if (path === '/bomb.tar.gz') return void res.writeHead(200, { 'content-type': 'application/gzip', 'content-length': String(bomb.length) }).end(bomb);
    if (path === '/large.tar.gz') return void res.writeHead(200, { 'content-type': 'application/gzip', 'content-length': String(large.length) }).end(large);
    if (path === '/stalled.tar.gz') {
      // The whole length announced, half sent, then nothing more: the connection stays open.
      res.writeHead(200, { 'content-type': 'application/gzip', 'content-length': String(stalled.length) });
      res.write(stalled.subarray(0, stalled.length >> 1));
      return;
    }
    // Module details the fill reads beside the download.
    if (/^\/v1\/modules\/acme\/\w+\/aws\/1\.0\.0$/.test(path)) return json({ version: '1.0.0' });
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"errors":["Not found"]}');
  });
  const hostileUrl = await listen(hostile);
  await emptyMirror(dir);
  cache = await startCache(
    dir,
    { url: new URL(hostileUrl), ttlSeconds: 600, timeoutMs: 1000, maxAttempts: 1, limits: { file: 4 * 1024, version: 64 * 1024 } },
    log,
  );
}, 60_000);
afterAll(async () => {
  await cache?.close();
  for (const server of [hostile, elsewhere]) {
    server?.closeAllConnections();
    server?.close();
  }
});

async function refused(path: string, status: number): Promise<string> {
  const answer = await fetch(new URL(path, cache.url));
  expect(answer.status, path).toBe(status);
  expect(answer.headers.get('content-type'), path).toBe('application/json');
  const body = (await answer.json()) as { errors: string[] };
  expect(body.errors, path).toHaveLength(1);
  return body.errors[0]!;
}

describe('serve --upstream against a hostile upstream', () => {
  it('refuses an HTML page where a version list belongs, with a 502', async () => {
    expect(await refused('v1/modules/acme/html/aws/versions', 502)).toMatch(
      /could not give the versions of acme\/html\/aws: .*did not answer JSON \(<!doctype html>/,
    );
    expect(log.some((l) => /^upstream: .*could not give the versions of acme\/html\/aws: .*did not answer JSON/.test(l))).toBe(true);
  });

  it('refuses a version list redirected to another origin, and never asks there', async () => {
    expect(await refused('v1/modules/acme/moved/aws/versions', 502)).toMatch(/redirects to http:\/\/127\.0\.0\.1:\d+, not its own origin: refused/);
    expect(elsewhereAsked).toEqual([]);
  });

  it('refuses an archive that expands past 512 MiB before writing it', async () => {
    expect(await refused('v1/modules/acme/bomb/aws/1.0.0/download', 502)).toMatch(/bomb\.tar\.gz expands to more than 512 MiB/);
    expect(log.some((l) => /^upstream: .*acme\/bomb\/aws 1\.0\.0.*expands to more than 512 MiB/.test(l))).toBe(true);
  });

  it("refuses a version over the config's limits", async () => {
    expect(await refused('v1/modules/acme/large/aws/1.0.0/download', 502)).toMatch(/acme\/large\/aws 1\.0\.0 from .* cannot be kept in the mirror: .*main\.tf/);
    expect(log.some((l) => /^upstream: acme\/large\/aws 1\.0\.0 from .* cannot be kept in the mirror/.test(l))).toBe(true);
  });

  it('answers 504 when an archive stops coming mid-way', async () => {
    const started = performance.now();
    expect(await refused('v1/modules/acme/stalled/aws/1.0.0/download', 504)).toMatch(/could not give acme\/stalled\/aws 1\.0\.0: .*Body Timeout/i);
    // The body timeout (1 s here), not Terraform's 10 s or undici's 60 s.
    expect(performance.now() - started).toBeLessThan(8000);
  });

  it('wrote nothing: the mirror holds no module, verifies, and records no fill', async () => {
    expect(Object.keys((mirrorManifest(join(dir, 'cache')) as { modules: object }).modules)).toEqual([]);
    const verified = await runCli(['verify', '--mirror', 'cache'], dir);
    expect(verified.code, verified.stderr).toBe(0);
    const record = join(dir, 'data/upstream-cache.jsonl');
    expect(existsSync(record) ? readFileSync(record, 'utf8') : '').toBe('');
  });
});
