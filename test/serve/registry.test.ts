// The registry server over real HTTP on 127.0.0.1: every endpoint, query
// parameter, error status and the traversal list of the serve issue.

import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/serve/index.js';
import { runCli, serveMirror, tempDir, writeFiles } from '../helpers.js';
import { clientRequest } from '../http-client.js';

const dir = tempDir();
const dist = join(dir, 'dist');
let server: RunningServer;

/** 20 modules: 12 in `acme` (aws and google), 8 in `beta`; `acme/net` is verified. */
function corpus(): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < 12; i++) {
    const name = i === 0 ? 'net' : `svc${String(i).padStart(2, '0')}`;
    const provider = i % 3 === 0 ? 'google' : 'aws';
    files[`mods/acme/${name}/${provider}/1.0.0/main.tf`] = 'variable "x" {}\n';
    files[`mods/acme/${name}/${provider}/1.0.0/README.md`] = `# ${name}\n\nService ${i} of the acme network.\n`;
  }
  files['mods/acme/net/google/1.1.0/main.tf'] = 'variable "x" {}\nvariable "y" { default = 1 }\n';
  files['mods/acme/net/google/2.0.0-beta.1/main.tf'] = 'variable "x" {}\n';
  files['mods/acme/net/aws/0.9.0/main.tf'] = 'output "o" { value = 1 }\n';
  for (let i = 0; i < 8; i++) files[`mods/beta/network${i}/aws/0.1.${i}/main.tf`] = 'variable "x" {}\n';
  files['mirror.config.yaml'] = 'sources:\n  - folder: mods\nmodules:\n  acme/net/google:\n    verified: true\n    description: The network module\n';
  return files;
}

const get = (path: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' | 'POST' | 'DELETE' = 'GET') =>
  clientRequest(new URL(path, server.url), { method, headers });

beforeAll(async () => {
  writeFiles(dir, corpus());
  const built = await runCli(['build', '--json'], dir);
  expect(built.code).toBe(0);
  server = await serveMirror(dir);
});

describe('listings (spec 4.4, 8)', () => {
  it('lists the latest version of each module once, first page by default', async () => {
    const res = await get('/v1/modules');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    const body = res.json();
    expect(body.meta).toEqual({ limit: 15, current_offset: 0, next_offset: 15, next_url: '/v1/modules/?offset=15&limit=15' });
    expect(body.modules).toHaveLength(15);
    expect(body.modules[0].id).toBe('acme/net/aws/0.9.0');
    expect(body.modules[1].id).toBe('acme/net/google/1.1.0');
  });

  it('pages with offset and limit; prev_offset only past the first page', async () => {
    const second = (await get('/v1/modules?offset=15&limit=15')).json();
    expect(second.meta).toEqual({ limit: 15, current_offset: 15, prev_offset: 0 });
    expect(second.modules).toHaveLength(6);
    const middle = (await get('/v1/modules?offset=5&limit=5')).json();
    expect(middle.meta).toEqual({ limit: 5, current_offset: 5, next_offset: 10, prev_offset: 0, next_url: '/v1/modules/?offset=10&limit=5' });
    const past = (await get('/v1/modules?offset=100')).json();
    expect(past.modules).toEqual([]);
    expect(past.meta).toEqual({ limit: 15, current_offset: 100, prev_offset: 85 });
  });

  it('replaces a limit above the maximum by the maximum', async () => {
    const body = (await get('/v1/modules?limit=5000')).json();
    expect(body.meta.limit).toBe(100);
    expect(body.modules).toHaveLength(21);
  });

  it('filters by provider, and by verified only when it is "true"', async () => {
    const google = (await get('/v1/modules?provider=google&limit=2')).json();
    expect(google.modules.every((m: { provider: string }) => m.provider === 'google')).toBe(true);
    expect(google.meta.next_url).toBe('/v1/modules/?provider=google&limit=2&offset=2');
    const verified = (await get('/v1/modules?verified=true')).json();
    expect(verified.modules.map((m: { id: string }) => m.id)).toEqual(['acme/net/google/1.1.0']);
    expect((await get('/v1/modules?verified=false')).json().modules).toHaveLength(15);
    expect((await get('/v1/modules?verified=yes')).json().modules).toHaveLength(15);
  });

  it('lists one namespace', async () => {
    const body = (await get('/v1/modules/beta?limit=100')).json();
    expect(body.modules.map((m: { name: string }) => m.name)).toEqual(Array.from({ length: 8 }, (_, i) => `network${i}`));
    expect((await get('/v1/modules/nobody')).json()).toEqual({ meta: { limit: 15, current_offset: 0 }, modules: [] });
  });

  it('ignores unknown query keys', async () => {
    expect((await get('/v1/modules?foo=bar&limit=1')).json().modules).toHaveLength(1);
  });

  it('answers 400 with a body for bad offset and limit', async () => {
    for (const query of ['offset=-1', 'offset=abc', 'limit=0', 'limit=-5', 'limit=1.5', 'offset=1e3', 'offset=99999999999999999999']) {
      const res = await get(`/v1/modules?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.json().errors[0]).toMatch(/^Invalid (offset|limit)/);
    }
  });

  it('lists the latest version for every provider of a name', async () => {
    const body = (await get('/v1/modules/acme/net')).json();
    expect(body.modules.map((m: { id: string }) => m.id)).toEqual(['acme/net/aws/0.9.0', 'acme/net/google/1.1.0']);
    expect(body.meta).toEqual({ limit: 15, current_offset: 0 });
    expect((await get('/v1/modules/acme/net?limit=1')).json().meta.next_url).toBe('/v1/modules/acme/net?limit=1&offset=1');
    expect((await get('/v1/modules/acme/nothing')).status).toBe(404);
  });
});

describe('search', () => {
  it('matches namespace, name, provider and description, exact names first', async () => {
    const body = (await get('/v1/modules/search?q=net')).json();
    const ids = body.modules.map((m: { id: string }) => m.id);
    expect(ids.slice(0, 2)).toEqual(['acme/net/aws/0.9.0', 'acme/net/google/1.1.0']);
    expect(ids).toContain('beta/network0/aws/0.1.0');
    expect(ids).toContain('acme/svc01/aws/1.0.0'); // "network" in its description
    expect((await get('/v1/modules/search?q=google')).json().modules.every((m: { provider: string }) => m.provider === 'google')).toBe(true);
    expect((await get('/v1/modules/search?q=SERVICE%207')).json().modules.map((m: { id: string }) => m.id)).toEqual(['acme/svc07/aws/1.0.0']);
  });

  it('filters search by namespace, provider and verified, and pages it', async () => {
    expect((await get('/v1/modules/search?q=net&namespace=beta')).json().modules).toHaveLength(8);
    expect((await get('/v1/modules/search?q=net&provider=google&verified=true')).json().modules).toHaveLength(1);
    const paged = (await get('/v1/modules/search?q=network&limit=3&namespace=beta')).json();
    expect(paged.meta.next_url).toBe('/v1/modules/search?q=network&limit=3&namespace=beta&offset=3');
  });

  it('answers 400 without q', async () => {
    for (const path of ['/v1/modules/search', '/v1/modules/search?q=', '/v1/modules/search?q=%20']) {
      const res = await get(path);
      expect(res.status).toBe(400);
      expect(res.json()).toEqual({ errors: ['Missing query parameter "q"'] });
    }
  });
});

describe('module documents', () => {
  it('serves versions, the latest detail and each version detail', async () => {
    const versions = (await get('/v1/modules/acme/net/google/versions')).json();
    expect(versions.modules[0].versions.map((v: { version: string }) => v.version)).toEqual(['2.0.0-beta.1', '1.1.0', '1.0.0']);
    const latest = (await get('/v1/modules/acme/net/google')).json();
    expect(latest).toMatchObject({ id: 'acme/net/google/1.1.0', verified: true, providers: ['aws', 'google'] });
    expect((await get('/v1/modules/acme/net/google/1.0.0')).json().version).toBe('1.0.0');
    expect((await get('/v1/modules/acme/net/google/2.0.0-beta.1')).json().version).toBe('2.0.0-beta.1');
  });

  it('answers 404 for an unknown module, version or path', async () => {
    for (const path of [
      '/v1/modules/acme/nope/aws',
      '/v1/modules/acme/net/azure/versions',
      '/v1/modules/acme/net/google/9.9.9',
      '/v1/modules/acme/net/google/not-a-version',
      '/v1/modules/acme/net/google/1.0.0/download/extra',
      '/nowhere',
      '/v2/modules/acme/net/google/downloads',
    ]) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expect(res.json().errors).toHaveLength(1);
    }
  });

  it('answers download with 200, both location headers and the JSON body', async () => {
    const res = await get('/v1/modules/acme/net/google/1.1.0/download');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.json()).toEqual({ location: './net-google-1.1.0.tar.gz' });
    expect(res.headers['cache-control']).toBe('public, max-age=60');
    expect(res.headers['x-terraform-get']).toBe('./net-google-1.1.0.tar.gz');
    expect(res.headers['x-service-get']).toBe('./net-google-1.1.0.tar.gz');
    expect((await get('/v1/modules/acme/net/google/3.0.0/download')).status).toBe(404);
  });

  it('redirects download of the latest release with a short HTML body', async () => {
    const res = await get('/v1/modules/acme/net/google/download');
    expect(res.status).toBe(302);
    expect(res.headers['location']).toBe('/v1/modules/acme/net/google/1.1.0/download');
    expect(res.text).toContain('<a href="/v1/modules/acme/net/google/1.1.0/download">');
  });
});

describe('download counts', () => {
  it('counts each archive fetch once and shows the totals everywhere', async () => {
    const archive = '/v1/modules/beta/network3/aws/0.1.3/network3-aws-0.1.3.tar.gz';
    const first = await get(archive);
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toBe('application/gzip');
    // The archive is the gzip file itself: a client that asked for gzip must not be told to undo it.
    expect(first.wireEncoding).toBeUndefined();
    expect(first.body.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    expect(first.body).toEqual(readFileSync(join(dist, archive)));
    await get(archive);
    await get(archive, {}, 'HEAD');
    await get('/v1/modules/beta/network3/aws/0.1.3/download');
    const summary = (await get('/v2/modules/beta/network3/aws/downloads/summary')).json();
    expect(summary).toEqual({ data: { type: 'module-downloads-summary', id: 'beta/network3/aws', attributes: { week: 2, month: 2, year: 2, total: 2 } } });
    expect((await get('/v1/modules/beta/network3/aws')).json().downloads).toBe(2);
    expect((await get('/v1/modules/beta/network3/aws/0.1.3')).json().downloads).toBe(2);
    const listed = (await get('/v1/modules/beta?limit=100')).json().modules.find((m: { name: string }) => m.name === 'network3');
    expect(listed.downloads).toBe(2);
    expect((await get('/v2/modules/beta/nothing/aws/downloads/summary')).status).toBe(404);
  });

  it('keeps the counts across a restart', async () => {
    await get('/v1/modules/beta/network5/aws/0.1.5/network5-aws-0.1.5.tar.gz');
    await server.close();
    server = await serveMirror(dir);
    expect((await get('/v2/modules/beta/network5/aws/downloads/summary')).json().data.attributes.total).toBe(1);
    expect((await get('/v2/modules/beta/network3/aws/downloads/summary')).json().data.attributes.total).toBe(2);
  });
});

describe('HTTP behaviour', () => {
  it('serves discovery', async () => {
    expect((await get('/.well-known/terraform.json')).json()).toEqual({ 'modules.v1': '/v1/modules/' });
  });

  it('answers HEAD like GET without a body, and 405 to other methods', async () => {
    const head = await get('/v1/modules/acme/net/google/versions', {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(Number(head.headers['content-length'])).toBeGreaterThan(0);
    for (const method of ['POST', 'DELETE'] as const) {
      const res = await get('/v1/modules', {}, method);
      expect(res.status).toBe(405);
      expect(res.headers['allow']).toBe('GET, HEAD');
      expect(res.json().errors[0]).toMatch(/not allowed/);
    }
  });

  it('answers If-None-Match with 304 and gzips JSON on request', async () => {
    const first = await get('/v1/modules/acme/net/google');
    const etag = String(first.headers['etag']);
    expect((await get('/v1/modules/acme/net/google', { 'if-none-match': etag })).status).toBe(304);
    const listing = await get('/v1/modules?limit=100');
    expect((await get('/v1/modules?limit=100', { 'if-none-match': String(listing.headers['etag']) })).status).toBe(304);
    const gzipped = await get('/v1/modules?limit=100');
    expect(gzipped.wireEncoding).toBe('gzip');
    expect(gzipped.json()).toEqual(listing.json());
    const plain = await request(new URL('/v1/modules?limit=100', server.url));
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(await plain.body.text())).toEqual(listing.json());
  });

  it('never serves a file outside dist/, nor dotfiles', async () => {
    writeFileSync(join(dir, 'secret.txt'), 'secret');
    mkdirSync(join(dist, 'assets'), { recursive: true });
    symlinkSync(join(dir, 'secret.txt'), join(dist, 'assets', 'link.txt'));
    writeFileSync(join(dist, '.hidden'), 'hidden');
    const attempts = [
      '/../secret.txt',
      '/%2e%2e/secret.txt',
      '/assets/%2e%2e%2f..%2fsecret.txt',
      '/assets/..%5c..%5csecret.txt',
      '/assets\\..\\..\\secret.txt',
      '/v1/modules/%00',
      '//etc/passwd',
      '/assets/link.txt',
      '/.hidden',
      '/%2ehidden',
      '/manifest.json%00.txt',
    ];
    for (const path of attempts) {
      const res = await request(`${server.url.replace(/\/$/, '')}${path}`);
      const text = await res.body.text();
      expect([400, 404], path).toContain(res.statusCode);
      expect(text, path).not.toContain('secret');
      expect(JSON.parse(text).errors).toHaveLength(1);
    }
  });

  it('answers 414 to an oversized URL and 431 to oversized headers, and keeps running', async () => {
    expect((await get(`/v1/modules?q=${'a'.repeat(5000)}`)).status).toBe(414);
    const big = await get('/v1/modules', { 'x-big': 'b'.repeat(20_000) });
    expect(big.status).toBe(431);
    expect((await get('/v1/modules')).status).toBe(200);
  });

  it('serves a rebuilt mirror without a restart', async () => {
    writeFiles(dir, { 'mods/gamma/fresh/aws/1.0.0/main.tf': 'variable "z" {}\n' });
    expect((await runCli(['build', '--json'], dir)).code).toBe(0);
    expect((await get('/v1/modules/gamma/fresh/aws')).json().id).toBe('gamma/fresh/aws/1.0.0');
    expect((await get('/v1/modules/search?q=fresh')).json().modules).toHaveLength(1);
  });

  const swapIn = (next: string, previous: string) => {
    execFileSync('mv', ['-T', dist, join(dir, previous)]);
    execFileSync('mv', ['-T', join(dir, next), dist]);
  };

  it('answers from a mirror another program swapped in on the very next request', async () => {
    writeFiles(dir, { 'mods/gamma/swift/aws/1.0.0/main.tf': 'variable "z" {}\n' });
    expect((await runCli(['build', '--mirror', 'dist-next', '--json'], dir)).code).toBe(0);
    expect((await get('/v1/modules/gamma/swift/aws')).status).toBe(404);
    // A deploy script's swap: two `mv`s, done in a few milliseconds.
    swapIn('dist-next', 'dist-before-swift');
    expect((await get('/v1/modules/gamma/swift/aws')).json().id).toBe('gamma/swift/aws/1.0.0');
    expect((await get('/v1/modules/gamma/swift/aws/versions')).json().modules[0].versions.map((v: { version: string }) => v.version)).toEqual(['1.0.0']);
  });

  it('keeps answering from the last good mirror while a broken one is in place, then takes it once whole', async () => {
    writeFiles(dir, { 'mods/gamma/late/aws/1.0.0/main.tf': 'variable "z" {}\n' });
    expect((await runCli(['build', '--mirror', 'dist-next', '--json'], dir)).code).toBe(0);
    // Copied in file by file: the manifest is there, the new module's state only half.
    const state = 'state/gamma/late.aws.json';
    const whole = readFileSync(join(dir, 'dist-next', state));
    writeFileSync(join(dir, 'dist-next', state), whole.subarray(0, 40));
    swapIn('dist-next', 'dist-before-late');
    expect((await get('/v1/modules/gamma/late/aws')).status).toBe(404);
    expect((await get('/v1/modules/gamma/swift/aws')).status).toBe(200);
    writeFileSync(join(dist, state), whole);
    await expect.poll(async () => (await get('/v1/modules/gamma/late/aws')).status).toBe(200);
    expect((await get('/v1/modules/search?q=late')).json().modules).toHaveLength(1);
  });
});
