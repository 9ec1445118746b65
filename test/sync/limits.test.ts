// sync against upstreams at the byte level: an archive too large to hold in
// memory while it comes is taken in on disk, whole, and leaves nothing
// behind; and upstreams that misbehave: an archive that
// expands far past what a module ever is (stopped at the cap on the bytes it
// would write, before writing them), and one whose server closes the
// connection in the middle of the body (a clean failure or a retry, never a
// crash, and no scratch folder left behind).

import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type Server as NetServer } from 'node:net';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { createGzip } from 'node:zlib';
import { create, Header } from 'tar';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers.js';

const dir = tempDir('mm-sync-limits-');
const MiB = 1024 * 1024;
let registry: Server;
let cutter: NetServer;
let base = '';
let cutterUrl = '';
let bomb: Buffer;
let big: Buffer;
let large: Buffer;
const blob = randomBytes(6 * 1024 * 1024);

/** A tar of one file of `size` bytes from `chunks`, gzipped as it is made: a 600 MiB file of zeros is under 4 MiB. */
async function gzippedTar(name: string, size: number, chunk: (i: number) => Buffer): Promise<Buffer> {
  const header = Buffer.alloc(512);
  new Header({ path: name, type: 'File', mode: 0o644, size, mtime: new Date('2001-01-01T00:00:00Z') }).encode(header, 0);
  async function* parts() {
    yield header;
    for (let done = 0, i = 0; done < size; i++) {
      const part = chunk(i).subarray(0, Math.min(MiB, size - done));
      done += part.length;
      yield part;
    }
    yield Buffer.alloc(((512 - (size % 512)) % 512) + 1024);
  }
  return buffer(Readable.from(parts()).pipe(createGzip({ level: 1 })));
}

async function listen(server: Server | NetServer): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
}

beforeAll(async () => {
  const zeros = Buffer.alloc(MiB);
  bomb = await gzippedTar('main.tf', 600 * MiB, () => zeros);
  const noise = randomBytes(MiB);
  big = await gzippedTar('main.tf', 16 * MiB, () => noise);
  const files = join(dir, 'large-files');
  mkdirSync(files, { recursive: true });
  writeFileSync(join(files, 'main.tf'), 'variable "x" {}\n');
  writeFileSync(join(files, 'blob.bin'), blob);
  large = await buffer(create({ gzip: true, cwd: files, portable: true }, ['main.tf', 'blob.bin']));
  registry = createServer((req, res) => {
    const path = req.url ?? '/';
    const json = (value: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    if (path === '/.well-known/terraform.json') return json({ 'modules.v1': '/v1/modules/' });
    const versions = /^\/v1\/modules\/acme\/(bomb|cut|large)\/aws\/versions$/.exec(path);
    if (versions) return json({ modules: [{ source: `acme/${versions[1]}/aws`, versions: [{ version: '1.0.0' }] }] });
    if (path === '/v1/modules/acme/bomb/aws/1.0.0/download') return void res.writeHead(204, { 'x-terraform-get': '/bomb.tar.gz' }).end();
    if (path === '/v1/modules/acme/cut/aws/1.0.0/download') return void res.writeHead(204, { 'x-terraform-get': `${cutterUrl}cut.tar.gz` }).end();
    if (path === '/v1/modules/acme/large/aws/1.0.0/download') return void res.writeHead(204, { 'x-terraform-get': '/large.tar.gz' }).end();
    if (path === '/large.tar.gz') return void res.writeHead(200, { 'content-type': 'application/gzip' }).end(large);
    if (path === '/bomb.tar.gz') return void res.writeHead(200, { 'content-type': 'application/gzip', 'content-length': String(bomb.length) }).end(bomb);
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"errors":["Not found"]}');
  });
  // Says the whole archive is coming, sends half of it at once, then closes the connection (FIN).
  cutter = createNetServer((socket) => {
    socket.once('data', () => {
      socket.write(`HTTP/1.1 200 OK\r\nContent-Type: application/gzip\r\nContent-Length: ${big.length}\r\nConnection: close\r\n\r\n`);
      socket.write(big.subarray(0, big.length >> 1));
      socket.end();
    });
    socket.on('error', () => {});
  });
  base = await listen(registry);
  cutterUrl = await listen(cutter);
}, 120_000);
afterAll(() => {
  registry?.closeAllConnections();
  registry?.close();
  cutter?.close();
});

const sync = (module: string) => runCli(['sync', '--from', base, '--module', module, '--into', 'mods'], dir);
const leftovers = (module: string) => {
  const folder = join(dir, 'mods/acme', module, 'aws');
  return existsSync(folder) ? readdirSync(folder) : [];
};

it('takes in an archive too large to hold in memory on disk, whole, and removes it after', async () => {
  expect(large.length).toBeGreaterThan(4 * MiB);
  const tmp = join(dir, 'tmp');
  mkdirSync(tmp, { recursive: true });
  const r = await runCli(['sync', '--from', base, '--module', 'acme/large/aws', '--into', 'mods'], dir, { TMPDIR: tmp });
  expect(r.code, r.stderr).toBe(0);
  expect(readFileSync(join(dir, 'mods/acme/large/aws/1.0.0/blob.bin')).equals(blob)).toBe(true);
  expect(readdirSync(tmp)).toEqual([]);
}, 120_000);

it('stops an archive that expands past the cap before writing it, whatever its compressed size', async () => {
  expect(bomb.length).toBeLessThan(4 * MiB);
  const r = await sync('acme/bomb/aws');
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/error: The archive http:\/\/127\.0\.0\.1:\d+\/bomb\.tar\.gz expands to more than 512 MiB/);
  expect(leftovers('bomb')).toEqual([]);
}, 120_000);

it('fails cleanly when the upstream closes the connection in the middle of an archive, leaving no scratch folder', async () => {
  const r = await sync('acme/cut/aws');
  expect(r.stderr).not.toMatch(/AssertionError|assert\(/);
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/error: acme\/cut\/aws 1\.0\.0 archive: GET http:\/\/127\.0\.0\.1:\d+\/cut\.tar\.gz failed/);
  expect(leftovers('cut')).toEqual([]);
}, 120_000);
