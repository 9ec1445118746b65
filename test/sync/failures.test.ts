// sync against an upstream of our own on 127.0.0.1 that fails on purpose:
// a 503 then success, a 429 with Retry-After, a truncated archive, a
// location pointing at a missing file, a certificate from a private CA; plus
// the location forms registries use (relative, JSON body only, //subdir,
// git:: over HTTP) and the token.

import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { join, normalize } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Header, Pack, ReadEntry } from 'tar';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { git, makeCertificates, makeRepo, runCli, spawnCli, tempDir } from '../helpers.js';

const dir = tempDir('mm-sync-fail-');
const TOKEN = 'sekret-token';

/** A plain (uncompressed) tar of these files; gzipped where an archive is served. */
async function tarOf(files: Record<string, string>): Promise<Buffer> {
  const pack = new Pack({ portable: true });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve) => {
    pack.on('data', (c: Buffer) => chunks.push(c));
    pack.on('end', () => resolve(Buffer.concat(chunks)));
  });
  for (const [path, text] of Object.entries(files)) {
    const entry = new ReadEntry(new Header({ path, type: 'File', mode: 0o644, size: Buffer.byteLength(text), mtime: new Date('2001-01-01T00:00:00Z') }));
    entry.end(Buffer.from(text));
    pack.add(entry);
  }
  pack.end();
  return done;
}

const files = (v: string) => ({ 'main.tf': `variable "v${v.replace(/\./g, '_')}" {}\n` });
const archives = new Map<string, Buffer>();
const seen: { path: string; at: number; auth: string | undefined }[] = [];
let fixed = false;
let registry: Server;
let cdn: Server;
let base = '';
let cdnBase = '';

function answer(req: IncomingMessage, res: ServerResponse): void {
  const path = req.url ?? '/';
  seen.push({ path, at: Date.now(), auth: req.headers.authorization });
  const count = seen.filter((s) => s.path === path).length;
  const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(value));
  };
  if (path === '/.well-known/terraform.json') return json(200, { 'modules.v1': '/registry/v1/' });
  if (path === '/registry/v1/acme/flaky/aws/versions') {
    if (count === 1) return json(503, { errors: ['warming up'] });
    return json(200, {
      modules: [{ source: 'acme/flaky/aws', versions: ['1.0.0', '1.1.0', '1.2.0', '1.3.0', '1.4.0', '1.5.0', 'not-semver'].map((version) => ({ version })) }],
    });
  }
  const download = /^\/registry\/v1\/acme\/flaky\/aws\/([^/]+)\/download$/.exec(path);
  if (download) {
    const version = download[1]!;
    const locations: Record<string, string> = {
      '1.0.0': './flaky-1.0.0.tar.gz',
      '1.1.0': '/files/flaky-1.1.0.tar.gz',
      '1.2.0': '/files/flaky-1.2.0.tar.gz',
      '1.3.0': fixed ? '/files/flaky-1.3.0.tar.gz' : '/files/missing.tar.gz',
      '1.5.0': `git::${base}git/repo.git//modules/x?ref=v1.5.0`,
    };
    // OpenTofu's form: 200 with the location in the body and no header; on another origin, with a subfolder.
    if (version === '1.4.0') return json(200, { location: `${cdnBase}flaky-1.4.0.tar.gz//sub` });
    res.writeHead(204, { 'x-terraform-get': locations[version]! });
    return void res.end();
  }
  if (path === '/registry/v1/acme/flaky/aws/1.0.0') return json(200, { published_at: '2023-05-06T07:08:09.000Z' });
  const archive = /\/(flaky-[^/]+\.tar\.gz)$/.exec(path)?.[1];
  if (archive && archives.has(archive) && !path.includes('missing')) {
    if (archive === 'flaky-1.1.0.tar.gz' && count === 1) return json(429, { errors: ['slow down'] }, { 'retry-after': '1' });
    const data = archives.get(archive)!;
    // The truncated archive: whole as far as HTTP goes, cut short as a gzip stream.
    const sent = archive === 'flaky-1.2.0.tar.gz' && !fixed ? data.subarray(0, data.length - 30) : data;
    res.writeHead(200, { 'content-type': 'application/gzip', 'content-length': String(sent.length) });
    return void res.end(sent);
  }
  if (path.startsWith('/git/')) {
    // git's dumb HTTP protocol: the bare repository's files, as any static host serves them.
    const file = normalize(join(dir, path.slice(1).split('?')[0]!));
    if (file.startsWith(join(dir, 'git')) && existsSync(file) && statSync(file).isFile()) {
      res.writeHead(200);
      return void res.end(readFileSync(file));
    }
  }
  json(404, { errors: ['Not found'] });
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
}

beforeAll(async () => {
  for (const v of ['1.0.0', '1.1.0', '1.2.0', '1.3.0']) archives.set(`flaky-${v}.tar.gz`, gzipSync(await tarOf(files(v))));
  archives.set('flaky-1.4.0.tar.gz', gzipSync(await tarOf({ 'sub/main.tf': 'variable "sub" {}\n', 'other/main.tf': 'variable "other" {}\n' })));
  makeRepo(join(dir, 'repo'), [
    { date: '2022-01-01T00:00:00Z', files: { 'modules/x/main.tf': 'variable "old" {}\n' }, tags: ['v1.4.9'] },
    { date: '2022-02-02T00:00:00Z', files: { 'modules/x/main.tf': 'variable "git" {}\n', 'README.md': 'root\n' }, tags: ['v1.5.0'] },
  ]);
  execFileSync('git', ['clone', '--bare', '--quiet', join(dir, 'repo'), join(dir, 'git/repo.git')]);
  git(join(dir, 'git/repo.git'), ['update-server-info']);
  registry = createServer(answer);
  cdn = createServer(answer);
  base = await listen(registry);
  cdnBase = await listen(cdn);
});
afterAll(() => {
  for (const server of [registry, cdn]) {
    server?.closeAllConnections();
    server?.close();
  }
});

const sync = () => runCli(['sync', '--from', base, '--module', 'acme/flaky/aws', '--into', 'mods'], dir, { MODMIRROR_SYNC_TOKEN: TOKEN });
const folder = join(dir, 'mods/acme/flaky/aws');
const fetches = (name: string) => seen.filter((s) => s.path.endsWith(`/${name}`)).length;

it('retries 503 and 429 (waiting out Retry-After), keeps every good version and reports the bad ones', async () => {
  const r = await sync();
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/acme\/flaky\/aws versions: answered 503; retrying in 0\.\d s \(attempt 2 of 5\)/);
  expect(r.stderr).toMatch(/acme\/flaky\/aws 1\.1\.0 archive: answered 429; retrying in 1\.0 s/);
  expect(r.stderr).toMatch(/error: The archive http:\/\/127\.0\.0\.1:\d+\/files\/flaky-1\.2\.0\.tar\.gz is damaged or truncated: .*unexpected end of file/);
  expect(r.stderr).toMatch(/error: acme\/flaky\/aws 1\.3\.0 archive: GET http:\/\/127\.0\.0\.1:\d+\/files\/missing\.tar\.gz answered 404: Not found/);
  expect(r.stdout).toMatch(/Fetched 4 version\(s\) into mods\/ \(0 already there\)/);

  const tries = seen.filter((s) => s.path === '/files/flaky-1.1.0.tar.gz').map((s) => s.at);
  expect(tries).toHaveLength(2);
  expect(tries[1]! - tries[0]!).toBeGreaterThanOrEqual(950);

  // Only whole versions, nothing half-written, nothing the build would trip on.
  expect(readdirSync(folder).sort()).toEqual(['1.0.0', '1.1.0', '1.4.0', '1.5.0']);
  expect(readFileSync(join(folder, '1.1.0/main.tf'), 'utf8')).toBe(files('1.1.0')['main.tf']);
  // The upstream's published_at dates the folder.
  expect(statSync(join(folder, '1.0.0/main.tf')).mtime.toISOString()).toBe('2023-05-06T07:08:09.000Z');
  // //sub picks the folder; git:: clones and reads the tag's subfolder.
  expect(readdirSync(join(folder, '1.4.0'))).toEqual(['main.tf']);
  expect(readFileSync(join(folder, '1.4.0/main.tf'), 'utf8')).toBe('variable "sub" {}\n');
  expect(readdirSync(join(folder, '1.5.0'))).toEqual(['main.tf']);
  expect(readFileSync(join(folder, '1.5.0/main.tf'), 'utf8')).toBe('variable "git" {}\n');

  // The token goes to the registry's origin only.
  expect(seen.filter((s) => s.path.startsWith('/registry/')).every((s) => s.auth === `Bearer ${TOKEN}`)).toBe(true);
  expect(seen.find((s) => s.path === '/flaky-1.4.0.tar.gz')?.auth).toBeUndefined();
});

it('finishes on the next run, fetching only what failed, into a folder the build reads', async () => {
  fixed = true;
  const before = { '1.0.0': fetches('flaky-1.0.0.tar.gz'), '1.4.0': fetches('flaky-1.4.0.tar.gz') };
  const r = await sync();
  expect(r.stderr).not.toMatch(/error:/);
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/Fetched 2 version\(s\) into mods\/ \(4 already there\)/);
  expect(fetches('flaky-1.0.0.tar.gz')).toBe(before['1.0.0']);
  expect(fetches('flaky-1.4.0.tar.gz')).toBe(before['1.4.0']);
  expect(readdirSync(folder).sort()).toEqual(['1.0.0', '1.1.0', '1.2.0', '1.3.0', '1.4.0', '1.5.0']);

  const built = await runCli(['build', '--modules', 'mods', '--json'], dir);
  expect(built.code).toBe(0);
  expect(JSON.parse(built.stdout)).toMatchObject({ modules: 1, versions: 6, warnings: [] });
  expect((await runCli(['verify', '--mirror', 'dist'], dir)).code).toBe(0);
});

it('fails clearly on a module the upstream lacks, and on an upstream that is not there', async () => {
  const r = await runCli(['sync', '--from', base, '--module', 'acme/none/aws', '--into', 'mods'], dir);
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/error: acme\/none\/aws versions: GET http:\/\/127\.0\.0\.1:\d+\/registry\/v1\/acme\/none\/aws\/versions answered 404: Not found/);
  const down = await runCli(['sync', '--from', 'http://127.0.0.1:9/', '--module', 'acme/none/aws', '--into', 'mods'], dir);
  expect(down.code).toBe(1);
  expect(down.stderr).toMatch(/error: discovery: GET http:\/\/127\.0\.0\.1:9\/\.well-known\/terraform\.json failed: .*ECONNREFUSED/);
  expect(down.stderr).toMatch(/^hint: /m);
});

it('says an upstream certificate from a private CA is not trusted, and how to trust it', async () => {
  const certificates = makeCertificates(tempDir());
  const server = createHttpsServer({ cert: readFileSync(certificates.cert), key: readFileSync(certificates.key) }, answer);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const https = `https://127.0.0.1:${(server.address() as { port: number }).port}/`;
  try {
    const args = ['sync', '--from', https, '--module', 'acme/none/aws', '--into', 'mods'];
    const untrusted = await runCli(args, dir);
    expect(untrusted.code).toBe(1);
    expect(untrusted.stderr).toMatch(
      /^error: discovery: GET https:\/\/127\.0\.0\.1:\d+\/\.well-known\/terraform\.json failed: unable to verify the first certificate/m,
    );
    expect(untrusted.stderr).toMatch(
      /^hint: The certificate of 127\.0\.0\.1:\d+ is not trusted: if a private CA signed it, set NODE_EXTRA_CA_CERTS=\/path\/ca\.pem/m,
    );
    expect(untrusted.stderr).not.toMatch(/again later/);
    // Node.js reads NODE_EXTRA_CA_CERTS as it starts: a process of its own. Trusted, the upstream answers (it has no such module).
    const trusted = await spawnCli(args, dir, { NODE_EXTRA_CA_CERTS: certificates.ca });
    expect(trusted.stderr).toMatch(/error: acme\/none\/aws versions: GET https:\/\/127\.0\.0\.1:\d+\/registry\/v1\/acme\/none\/aws\/versions answered 404/);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});
