// serve --upstream over HTTP, with a counting proxy between the cache and
// its upstream (a modmirror serve): one upstream request however many
// clients miss at once; a version held is kept whatever the upstream says
// later, and bytes other than the held ones are refused with both digests
// logged; a version list is asked for again after the TTL; and an upstream
// that fails or is gone gives stale answers from what is held, or a 502 with
// a JSON body, never a 500.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/serve/index.js';
import { mirrorManifest, runCli, tempDir, writeFiles } from '../helpers.js';
import { countingProxy, emptyMirror, startCache, startUpstream, type CountingProxy } from './site.js';

const dir = tempDir('mm-upstream-cache-');
const log: string[] = [];
let upstream: RunningServer;
let changed: RunningServer;
let proxy: CountingProxy;
let cache: RunningServer;

const main = (n: string) => ({ 'main.tf': `variable "v${n.replace(/\W/g, '_')}" {}\n` });
const files = (versions: Record<string, string>) => Object.fromEntries(Object.entries(versions).map(([v, text]) => [`mods/acme/net/aws/${v}/main.tf`, text]));

beforeAll(async () => {
  upstream = await startUpstream(join(dir, 'upstream'), {
    ...files({ '1.0.0': main('1.0.0')['main.tf'], '1.1.0': main('1.1.0')['main.tf'] }),
    'mods/acme/dns/aws/0.1.0/main.tf': 'variable "zone" {}\n',
    'mods/acme/dns/aws/0.2.0/main.tf': 'variable "zone" {}\nvariable "ttl" {}\n',
    'mods/acme/lb/aws/0.1.0/main.tf': 'variable "listeners" {}\n',
  });
  // The same upstream later: 1.1.0 re-pushed with other content, 1.0.0 gone, 2.0.0 new.
  changed = await startUpstream(join(dir, 'changed'), files({ '1.1.0': 'variable "changed" {}\n', '2.0.0': main('2.0.0')['main.tf'] }));
  proxy = await countingProxy(upstream.url);
  await emptyMirror(dir);
  cache = await startCache(dir, { url: new URL(proxy.url), ttlSeconds: 1 }, log);
});
afterAll(async () => {
  await cache?.close();
  await proxy?.close();
  await upstream?.close();
  await changed?.close();
});

const get = (path: string, signal?: AbortSignal) => fetch(new URL(path, cache.url), signal ? { signal } : {});
const MODULE = 'v1/modules/acme/net/aws';
const versionsOf = async (response: Response) =>
  ((await response.json()) as { modules: { versions: { version: string }[] }[] }).modules[0]!.versions.map((v) => v.version);
const heldSha = (version: string) =>
  (mirrorManifest(join(dir, 'cache')) as { modules: Record<string, { versions: { version: string; sha256: string }[] }> }).modules[
    'acme/net/aws'
  ]!.versions.find((v) => v.version === version)?.sha256;
const upstreamSha = (folder: string, version: string) =>
  (mirrorManifest(join(dir, folder, 'dist')) as { modules: Record<string, { versions: { version: string; sha256: string }[] }> }).modules[
    'acme/net/aws'
  ]!.versions.find((v) => v.version === version)!.sha256;
const sha256Of = async (response: Response) =>
  createHash('sha256')
    .update(Buffer.from(await response.arrayBuffer()))
    .digest('hex');
/** Holds what the cache asks upstream for `pathEnd` until `clients` have all sent their requests, then lets it through. */
async function together<T>(pathEnd: string, clients: (() => Promise<T>)[]): Promise<T[]> {
  proxy.hold(pathEnd);
  const answers = Promise.all(clients.map((c) => c()));
  await proxy.held();
  await new Promise((resolve) => setTimeout(resolve, 200));
  proxy.release();
  return answers;
}

describe('serve --upstream', () => {
  it('asks the upstream once for 20 clients missing the same version list and the same version at once', async () => {
    const lists = await together(
      '/acme/net/aws/versions',
      Array.from({ length: 20 }, () => () => get(`${MODULE}/versions`)),
    );
    expect(lists.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(await versionsOf(lists[0]!)).toEqual(['1.1.0', '1.0.0']);
    expect(lists[0]!.headers.get('x-modmirror-cache')).toBe('miss');

    const downloads = await together(
      '/net-aws-1.1.0.tar.gz',
      Array.from({ length: 20 }, () => () => get(`${MODULE}/1.1.0/download`)),
    );
    expect(downloads.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(new Set(downloads.map((r) => r.headers.get('x-terraform-get')))).toEqual(new Set(['./net-aws-1.1.0.tar.gz']));
    expect(proxy.count('/acme/net/aws/versions')).toBe(1);
    expect(proxy.count('/acme/net/aws/1.1.0/download')).toBe(1);
    expect(proxy.count('/net-aws-1.1.0.tar.gz')).toBe(1);

    // An ordinary published version: the same archive as the upstream's, recorded with the upstream's digest, and verified.
    const archive = await get(`${MODULE}/1.1.0/net-aws-1.1.0.tar.gz`);
    expect(await sha256Of(archive)).toBe(upstreamSha('upstream', '1.1.0'));
    const record = JSON.parse(readFileSync(join(dir, 'data/upstream-cache.jsonl'), 'utf8').trim()) as Record<string, string>;
    expect(record).toMatchObject({ module: 'acme/net/aws', version: '1.1.0', upstream_sha256: upstreamSha('upstream', '1.1.0'), sha256: heldSha('1.1.0') });
    const verified = await runCli(['verify', '--mirror', 'cache'], dir);
    expect(verified.code, verified.stderr).toBe(0);
    const bundled = await runCli(['bundle', '--mirror', 'cache', '--out', 'cache.tar.gz'], dir);
    expect(bundled.code, bundled.stderr).toBe(0);
  });

  it('keeps what it holds when other bytes come for the same version, and logs both digests', async () => {
    // Another writer publishes 1.0.0 with other content while the cache is fetching the upstream's.
    proxy.hold('/net-aws-1.0.0.tar.gz');
    const answer = get(`${MODULE}/1.0.0/download`);
    await proxy.held();
    writeFiles(join(dir, 'other/acme/net/aws/1.0.0'), { 'main.tf': 'variable "theirs" {}\n' });
    const published = await runCli(['publish', '--source', 'other/acme/net/aws/1.0.0', '--mirror', 'cache'], dir);
    expect(published.code, published.stderr).toBe(0);
    const ours = heldSha('1.0.0')!;
    proxy.release();
    expect((await answer).status).toBe(200);
    expect(await sha256Of(await get(`${MODULE}/1.0.0/net-aws-1.0.0.tar.gz`))).toBe(ours);
    const refusal = log.find((l) => l.includes("refused the upstream's bytes"));
    expect(refusal).toContain(`archive sha256 ${upstreamSha('upstream', '1.0.0')}`);
    expect(refusal).toContain(`sha256 ${ours}`);
  });

  it('lists a new upstream version after the TTL, and keeps serving the versions it holds whatever the upstream does', async () => {
    // A list fresh from the first upstream, then the upstream changes: the list kept is served until the TTL is over.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await get(`${MODULE}/versions`)).headers.get('x-modmirror-cache')).toBe('miss');
    proxy.target = changed.url;
    const before = await get(`${MODULE}/versions`);
    expect(await versionsOf(before)).toEqual(['1.1.0', '1.0.0']);
    expect(before.headers.get('x-modmirror-cache')).toBe('hit');
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const after = await get(`${MODULE}/versions`);
    expect(after.headers.get('x-modmirror-cache')).toBe('miss');
    // 1.0.0 is gone upstream, and still here.
    expect(await versionsOf(after)).toEqual(['2.0.0', '1.1.0', '1.0.0']);
    // 1.1.0 was re-pushed upstream: the cache never asks for it again and serves its own bytes.
    const held = await get(`${MODULE}/1.1.0/download`);
    expect(held.headers.get('x-modmirror-cache')).toBe('hit');
    expect(await sha256Of(await get(`${MODULE}/1.1.0/net-aws-1.1.0.tar.gz`))).toBe(upstreamSha('upstream', '1.1.0'));
    expect(proxy.count('/acme/net/aws/1.1.0/download')).toBe(1);
  });

  it('finishes a fill whose client gave up waiting, so the next request is answered from the mirror', async () => {
    proxy.target = upstream.url;
    proxy.hold('/lb-aws-0.1.0.tar.gz');
    const impatient = new AbortController();
    const gaveUp = get('v1/modules/acme/lb/aws/0.1.0/download', impatient.signal).catch((error: unknown) => error);
    await proxy.held();
    impatient.abort();
    expect(await gaveUp).toBeInstanceOf(Error);
    proxy.release();
    // The fill goes on without its client: its record is written once the version is published.
    const recorded = () => readFileSync(join(dir, 'data/upstream-cache.jsonl'), 'utf8').includes('"module":"acme/lb/aws"');
    for (let i = 0; i < 100 && !recorded(); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(recorded()).toBe(true);
    const next = await get('v1/modules/acme/lb/aws/0.1.0/download');
    expect(next.status).toBe(200);
    expect(next.headers.get('x-modmirror-cache')).toBe('hit');
    expect(proxy.count('/lb-aws-0.1.0.tar.gz')).toBe(1);
  });

  it('answers from what it holds when the upstream fails, marked stale, and 502 with a JSON body when it holds nothing', async () => {
    proxy.mode = 'fail';
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const stale = await get(`${MODULE}/versions`);
    expect(stale.status).toBe(200);
    expect(stale.headers.get('x-modmirror-cache')).toBe('stale');
    expect(await versionsOf(stale)).toEqual(['1.1.0', '1.0.0']);
    expect(log.some((l) => /could not give the versions of acme\/net\/aws: .*answered 503.*answering from what the mirror holds/.test(l))).toBe(true);
    const held = await get(`${MODULE}/1.0.0/download`);
    expect(held.status).toBe(200);

    const unknownModule = await get('v1/modules/acme/dns/aws/versions');
    expect(unknownModule.status).toBe(502);
    expect(((await unknownModule.json()) as { errors: string[] }).errors[0]).toMatch(/upstream .* could not give the versions of acme\/dns\/aws/);
    const unknownVersion = await get(`${MODULE}/2.0.0/download`);
    expect(unknownVersion.status).toBe(502);
    expect(unknownVersion.headers.get('content-type')).toBe('application/json');

    // Gone altogether: nothing listens where the upstream was.
    await proxy.close();
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const gone = await get(`${MODULE}/versions`);
    expect(gone.status).toBe(200);
    expect(gone.headers.get('x-modmirror-cache')).toBe('stale');
    const metrics = await (await get('metrics')).text();
    expect(metrics).toMatch(/^modmirror_upstream_answers_total\{state="stale"\} [2-9]\d*$/m);
    expect(metrics).toMatch(/^modmirror_upstream_answers_total\{state="miss"\} \d+$/m);
    for (const path of ['v1/modules/acme/dns/aws/versions', `${MODULE}/2.0.0/download`, `${MODULE}/2.0.0`]) {
      const answer = await get(path);
      expect(answer.status, path).toBe(502);
      expect(((await answer.json()) as { errors: string[] }).errors[0], path).toMatch(/ECONNREFUSED/);
    }
  });

  it('waits for a silent upstream only a moment when it holds the answer, and answers 504 when it holds nothing', async () => {
    // Takes connections and never answers.
    const sockets: Socket[] = [];
    const silent = createNetServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const url = new URL(`http://127.0.0.1:${(silent.address() as AddressInfo).port}/`);
    const log2: string[] = [];
    const patient = await startCache(dir, { url, ttlSeconds: 600, timeoutMs: 2000, maxAttempts: 1, patienceMs: 200 }, log2);
    try {
      const started = performance.now();
      const stale = await fetch(new URL(`${MODULE}/versions`, patient.url));
      expect(stale.status).toBe(200);
      expect(stale.headers.get('x-modmirror-cache')).toBe('stale');
      // Well before the upstream's own timeout (2 s): the patience (0.2 s), with room for a loaded machine.
      expect(performance.now() - started).toBeLessThan(1500);
      expect(log2.some((l) => l.includes('did not give the versions of acme/net/aws within 0.2 s; answering from what the mirror holds'))).toBe(true);
      const paths = ['v1/modules/acme/dns/aws/versions', `${MODULE}/2.0.0/download`];
      const answers = await Promise.all(paths.map((path) => fetch(new URL(path, patient.url))));
      for (const [i, answer] of answers.entries()) {
        expect(answer.status, paths[i]).toBe(504);
        expect(((await answer.json()) as { errors: string[] }).errors[0], paths[i]).toMatch(/could not give .*Headers Timeout/i);
      }
    } finally {
      await patient.close();
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it("fills a module's newest version for its latest detail, and answers 404 for what the upstream does not have", async () => {
    // The cache's upstream is gone by now: a fresh cache, on the upstream itself.
    const log2: string[] = [];
    const other = await startCache(join(dir), { url: new URL(upstream.url), ttlSeconds: 600 }, log2);
    try {
      const missing = await fetch(new URL('v1/modules/acme/nothing/aws/versions', other.url));
      expect(missing.status).toBe(404);
      const missingVersion = await fetch(new URL(`${MODULE}/9.9.9/download`, other.url));
      expect(missingVersion.status).toBe(404);
      const latest = await fetch(new URL('v1/modules/acme/dns/aws', other.url));
      expect(latest.status).toBe(200);
      expect(latest.headers.get('x-modmirror-cache')).toBe('miss');
      expect(((await latest.json()) as { version: string }).version).toBe('0.2.0');
      const download = await fetch(new URL('v1/modules/acme/dns/aws/download', other.url), { redirect: 'manual' });
      expect(download.status).toBe(302);
      expect(download.headers.get('location')).toBe('/v1/modules/acme/dns/aws/0.2.0/download');
      expect(download.headers.get('x-modmirror-cache')).toBe('hit');
    } finally {
      await other.close();
    }
  });
});
