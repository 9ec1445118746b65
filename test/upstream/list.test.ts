// `modmirror cache list`: what a cache holds, read back from the mirror and
// the data folder serve --upstream records in: each version with when it was
// fetched, when it was last downloaded and its sha256; a version published
// another way is listed without a fetch. Then the air-gap trip: the cache's
// mirror bundled and unbundled holds exactly what cache list listed.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/serve/index.js';
import { runCli, tempDir, writeFiles } from '../helpers.js';
import { emptyMirror, startCache, startUpstream } from './site.js';

const dir = tempDir('mm-upstream-list-');
let upstream: RunningServer;

beforeAll(async () => {
  upstream = await startUpstream(join(dir, 'upstream'), {
    'mods/acme/net/aws/1.0.0/main.tf': 'variable "a" {}\n',
    'mods/acme/net/aws/1.1.0/main.tf': 'variable "b" {}\n',
    'mods/acme/dns/aws/0.1.0/main.tf': 'variable "zone" {}\n',
  });
  await emptyMirror(dir);
});
afterAll(async () => {
  await upstream?.close();
});

interface Listed {
  modules: { module: string; version: string; sha256: string; fetched: string | null; upstream_sha256: string | null; last_used: string | null }[];
  providers: unknown[];
}

async function list(...flags: string[]): Promise<Listed> {
  const r = await runCli(['cache', 'list', '--json', ...flags], dir);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Listed;
}

describe('modmirror cache list', () => {
  it('lists each version held with when it was fetched, when it was last used and its sha256', async () => {
    const log: string[] = [];
    const started = new Date().toISOString();
    const cache = await startCache(dir, { url: new URL(upstream.url), ttlSeconds: 600 }, log);
    try {
      // 1.1.0 downloaded whole (the archive), dns only asked for: fetched, never used.
      const get = (path: string) => fetch(new URL(path, cache.url));
      expect((await get('v1/modules/acme/net/aws/1.1.0/download')).status).toBe(200);
      const archive = await get('v1/modules/acme/net/aws/1.1.0/net-aws-1.1.0.tar.gz');
      expect(archive.status).toBe(200);
      await archive.arrayBuffer();
      expect((await get('v1/modules/acme/dns/aws/0.1.0/download')).status).toBe(200);
    } finally {
      // Closing writes the last uses noted.
      await cache.close();
    }
    writeFiles(dir, { 'local/acme/net/aws/0.9.0/main.tf': 'variable "ours" {}\n' });
    const published = await runCli(['publish', '--source', 'local/acme/net/aws/0.9.0', '--mirror', 'cache'], dir);
    expect(published.code, published.stderr).toBe(0);

    const listed = await list('--mirror', 'cache', '--data', 'data');
    const byVersion = Object.fromEntries(listed.modules.map((m) => [`${m.module} ${m.version}`, m]));
    expect(Object.keys(byVersion).sort()).toEqual(['acme/dns/aws 0.1.0', 'acme/net/aws 0.9.0', 'acme/net/aws 1.1.0']);
    const used = byVersion['acme/net/aws 1.1.0']!;
    expect(used.fetched! >= started).toBe(true);
    expect(used.last_used! >= used.fetched!).toBe(true);
    expect(used.upstream_sha256).toBe(used.sha256);
    expect(used.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(byVersion['acme/dns/aws 0.1.0']).toMatchObject({ last_used: null });
    expect(byVersion['acme/dns/aws 0.1.0']!.fetched).not.toBeNull();
    expect(byVersion['acme/net/aws 0.9.0']).toMatchObject({ fetched: null, upstream_sha256: null, last_used: null });
    expect(listed.providers).toEqual([]);

    const text = await runCli(['cache', 'list', '--mirror', 'cache'], dir);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`^acme/net/aws 1\\.1\\.0 +\\S+ +\\S+ +${used.sha256}$`, 'm'));
    expect(text.stdout).toMatch(/^acme\/net\/aws 0\.9\.0 +- \(not from the upstream\) +- +[0-9a-f]{64}$/m);
    expect(text.stdout).toContain('3 module versions, 0 provider packages; 2 fetched from the upstream.');
  });

  it('bundles exactly what it lists: the mirror on the other side holds the same versions with the same sha256', async () => {
    const outside = await list('--mirror', 'cache');
    expect((await runCli(['verify', '--mirror', 'cache', '--complete'], dir)).code).toBe(0);
    const bundled = await runCli(['bundle', '--mirror', 'cache', '--out', 'cache.tar.gz', '--json'], dir);
    expect(bundled.code, bundled.stderr).toBe(0);
    expect((JSON.parse(bundled.stdout) as { versions: number }).versions).toBe(outside.modules.length);
    const unbundled = await runCli(['unbundle', 'cache.tar.gz', '--mirror', 'inside'], dir);
    expect(unbundled.code, unbundled.stderr).toBe(0);
    const inside = await list('--mirror', 'inside', '--data', 'inside-data');
    const held = (l: Listed) => l.modules.map((m) => `${m.module} ${m.version} ${m.sha256}`);
    expect(held(inside)).toEqual(held(outside));
    // Nothing was fetched on the inside: it holds what was carried.
    expect(inside.modules.every((m) => m.fetched === null)).toBe(true);
  });

  it('refuses what is not a cache command or not a mirror, with exit 2', async () => {
    const unknown = await runCli(['cache', 'show', '--mirror', 'cache'], dir);
    expect(unknown.stderr).toMatch(/Unknown cache command "show"/);
    expect(unknown.code).toBe(2);
    const missing = await runCli(['cache', 'list', '--mirror', 'nowhere'], dir);
    expect(missing.stderr).toMatch(/nowhere/);
    expect(missing.code).toBe(2);
  });
});
