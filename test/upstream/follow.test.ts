// serve --upstream fills the registry modules a filled version calls before a
// client asks, as `terraform init` will ask next: each at the newest version
// its constraint allows, through the root's local calls but not the
// examples', following each filled version's own calls in turn; never a call
// to another host; each fetched once, the client's later request answered
// from the mirror. `followCalls: false` fills only what clients ask for.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RunningServer } from '../../src/serve/index.js';
import { CACHE_HEADER } from '../../src/serve/upstream.js';
import { mirrorManifest, runCli, tempDir } from '../helpers.js';
import { countingProxy, emptyMirror, startCache, startUpstream, type CountingProxy } from './site.js';

const call = (name: string, source: string, version?: string) =>
  `module "${name}" {\n  source = "${source}"\n${version === undefined ? '' : `  version = "${version}"\n`}}\n`;

let upstream: RunningServer;
let proxy: CountingProxy;
const caches: RunningServer[] = [];

beforeAll(async () => {
  upstream = await startUpstream(tempDir('mm-upstream-follow-up-'), {
    'mods/acme/app/aws/1.0.0/main.tf': [
      call('net', 'acme/net/aws', '~> 1.0'),
      call('inner', './modules/inner'),
      call('elsewhere', 'other.example.com/acme/zone/aws', '1.0.0'),
      call('git', 'git::https://example.com/acme/x.git?ref=v1'),
      call('nowhere', 'acme/ghost/aws', '1.0.0'),
    ].join('\n'),
    'mods/acme/app/aws/1.0.0/modules/inner/main.tf': call('dns', 'registry.terraform.io/acme/dns/aws', '>= 0.1'),
    // An example's calls are not installed by a configuration calling the module.
    'mods/acme/app/aws/1.0.0/examples/basic/main.tf': call('lb', 'acme/lb/aws', '0.1.0'),
    'mods/acme/net/aws/1.0.0/main.tf': 'variable "a" {}\n',
    'mods/acme/net/aws/1.2.0/main.tf': call('sg', 'acme/sg/aws', '~> 0.1.0'),
    'mods/acme/net/aws/2.0.0/main.tf': 'variable "c" {}\n',
    'mods/acme/sg/aws/0.1.0/main.tf': 'variable "a" {}\n',
    'mods/acme/sg/aws/0.1.5/main.tf': 'variable "b" {}\n',
    'mods/acme/sg/aws/0.2.0/main.tf': 'variable "c" {}\n',
    'mods/acme/dns/aws/0.1.0/main.tf': 'variable "a" {}\n',
    'mods/acme/dns/aws/0.2.0/main.tf': 'variable "b" {}\n',
    'mods/acme/dns/aws/0.3.0-rc.1/main.tf': 'variable "c" {}\n',
    'mods/acme/lb/aws/0.1.0/main.tf': 'variable "a" {}\n',
  });
  proxy = await countingProxy(upstream.url);
});

afterAll(async () => {
  for (const cache of caches) await cache.close();
  await proxy?.close();
  await upstream?.close();
});

async function cacheIn(dir: string, log: string[], followCalls?: boolean): Promise<RunningServer> {
  await emptyMirror(dir);
  const cache = await startCache(dir, { url: new URL(proxy.url), ttlSeconds: 60, ...(followCalls === undefined ? {} : { followCalls }) }, log);
  caches.push(cache);
  return cache;
}

const held = (dir: string) =>
  Object.fromEntries(
    Object.entries((mirrorManifest(join(dir, 'cache')) as { modules: Record<string, { versions: { version: string }[] }> }).modules).map(([key, m]) => [
      key,
      m.versions.map((v) => v.version),
    ]),
  );

describe('serve --upstream follows the calls of what it fills', () => {
  it('fills each called module at the version terraform init picks, once, before the client asks', async () => {
    const dir = tempDir('mm-upstream-follow-');
    const log: string[] = [];
    const cache = await cacheIn(dir, log);
    const asked = await fetch(new URL('v1/modules/acme/app/aws/1.0.0/download', cache.url));
    expect(asked.status).toBe(200);
    await vi.waitFor(
      () =>
        expect(held(dir)).toEqual({
          'acme/app/aws': ['1.0.0'],
          'acme/net/aws': ['1.2.0'],
          'acme/sg/aws': ['0.1.5'],
          'acme/dns/aws': ['0.2.0'],
        }),
      { timeout: 15_000, interval: 50 },
    );
    // Nothing else was asked of the upstream: not the examples' call, not another host's, not a version no constraint picks.
    const asks = (pathPart: string) => proxy.paths.filter((p) => p.includes(pathPart));
    expect(asks('/acme/lb/')).toEqual([]);
    expect(asks('/zone/')).toEqual([]);
    expect(proxy.paths.filter((p) => p.endsWith('/download')).sort()).toEqual([
      '/v1/modules/acme/app/aws/1.0.0/download',
      '/v1/modules/acme/dns/aws/0.2.0/download',
      '/v1/modules/acme/net/aws/1.2.0/download',
      '/v1/modules/acme/sg/aws/0.1.5/download',
    ]);
    // The client's own requests for them are answered from the mirror.
    for (const path of ['acme/net/aws/1.2.0', 'acme/sg/aws/0.1.5', 'acme/dns/aws/0.2.0']) {
      const answer = await fetch(new URL(`v1/modules/${path}/download`, cache.url));
      expect(answer.status, path).toBe(200);
      expect(answer.headers.get(CACHE_HEADER), path).toBe('hit');
    }
    expect(proxy.paths.filter((p) => p.endsWith('/download'))).toHaveLength(4);
    // The call the upstream has no module for is left for the client to be told.
    expect(asks('/acme/ghost/aws/versions')).toHaveLength(1);
    expect((await runCli(['verify', '--mirror', 'cache'], dir)).code).toBe(0);
  });

  it('with followCalls: false fills only what the client asks for', async () => {
    const dir = tempDir('mm-upstream-nofollow-');
    const cache = await cacheIn(dir, [], false);
    expect((await fetch(new URL('v1/modules/acme/app/aws/1.0.0/download', cache.url))).status).toBe(200);
    // close() waits for any fill under way, so what the mirror holds now is all the cache did.
    await cache.close();
    expect(held(dir)).toEqual({ 'acme/app/aws': ['1.0.0'] });
  });
});
