// `modmirror serve --upstream` as a process: its flags and config, the
// upstream's token read from a file or a variable (never the command line)
// and sent to the upstream's origin only, not to the host its download
// locations name; and flags that make no sense refused with exit 2.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/serve/index.js';
import { runCli, spawnServe, tempDir, writeFiles } from '../helpers.js';
import { countingProxy, emptyMirror, type CountingProxy } from './site.js';

const dir = tempDir('mm-upstream-command-');
let upstream: RunningServer;
let registry: CountingProxy;
let files: CountingProxy;

beforeAll(async () => {
  // Its download locations are absolute, on another origin (as a registry whose archives are in a bucket).
  files = await countingProxy('http://127.0.0.1:1/');
  writeFiles(join(dir, 'upstream'), {
    'mirror.config.yaml': `baseUrl: ${files.url}\nsources:\n  - folder: mods\n`,
    'mods/acme/net/aws/1.0.0/main.tf': 'variable "a" {}\n',
    'mods/acme/app/aws/1.0.0/main.tf': 'module "dns" {\n  source  = "acme/dns/aws"\n  version = "~> 1.0"\n}\n',
    'mods/acme/dns/aws/1.0.0/main.tf': 'variable "zone" {}\n',
  });
  expect((await runCli(['build'], join(dir, 'upstream'))).code).toBe(0);
  upstream = await startServer({ dir: join(dir, 'upstream/dist'), host: '127.0.0.1', port: 0, dataDir: join(dir, 'upstream/data'), log: () => {} });
  files.target = upstream.url;
  registry = await countingProxy(upstream.url);
  await emptyMirror(dir);
});
afterAll(async () => {
  await registry?.close();
  await files?.close();
  await upstream?.close();
});

describe('serve --upstream (command)', () => {
  it('sends the token from --upstream-token-file to the upstream only, and takes the TTL from the config', async () => {
    writeFileSync(join(dir, 'token'), 'secret-token\n');
    writeFiles(dir, { 'mirror.config.yaml': `out: cache\nupstream:\n  url: ${registry.url}\n  ttl: 2m\n  tokenFile: token\n` });
    const serve = await spawnServe(['--port', '0', '--data', 'data'], dir, /at (http:\/\/127\.0\.0\.1:\d+\/)/);
    try {
      expect(serve.stdout()).toContain(`filling the mirror from ${registry.url} (version lists kept 120 s)`);
      const download = await fetch(new URL('v1/modules/acme/net/aws/1.0.0/download', serve.url));
      expect(download.status).toBe(200);
      expect(download.headers.get('x-modmirror-cache')).toBe('miss');
      expect(registry.authorizations.length).toBeGreaterThan(0);
      expect(new Set(registry.authorizations)).toEqual(new Set(['Bearer secret-token']));
      expect(files.count('/net-aws-1.0.0.tar.gz')).toBe(1);
      expect(new Set(files.authorizations)).toEqual(new Set(['']));
      expect(serve.stdout()).toMatch(
        /upstream: acme\/net\/aws 1\.0\.0: fetched from http:\/\/127\.0\.0\.1:\d+\/v1\/modules\/acme\/net\/aws\/1\.0\.0\/net-aws-1\.0\.0\.tar\.gz \(archive sha256 [0-9a-f]{64}\)/,
      );
    } finally {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
  });

  it('fills only what clients ask for with followCalls: false in the config', async () => {
    writeFiles(dir, { 'mirror.config.yaml': `out: cache\nupstream:\n  url: ${registry.url}\n  followCalls: false\n` });
    const serve = await spawnServe(['--port', '0', '--mirror', 'asked-only', '--data', 'asked-only-data'], dir, /at (http:\/\/127\.0\.0\.1:\d+\/)/);
    try {
      expect((await fetch(new URL('v1/modules/acme/app/aws/1.0.0/download', serve.url))).status).toBe(200);
      // A window in which a cache that follows calls would ask for acme/dns/aws (it does so in milliseconds).
      await new Promise((resolve) => setTimeout(resolve, 1000));
    } finally {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
    // The upstream's documents name the other origin (its base URL): what was asked is on both.
    const asked = [...registry.paths, ...files.paths];
    expect(asked.filter((p) => p.endsWith('/acme/app/aws/1.0.0/download'))).toHaveLength(1);
    expect(asked.filter((p) => p.includes('/acme/dns/'))).toEqual([]);
  });

  it('starts an empty mirror where none is yet, and fills it', async () => {
    writeFiles(dir, { 'mirror.config.yaml': 'out: cache\n' });
    const serve = await spawnServe(
      ['--port', '0', '--mirror', 'fresh', '--data', 'fresh-data', '--upstream', upstream.url],
      dir,
      /at (http:\/\/127\.0\.0\.1:\d+\/)/,
    );
    try {
      expect(serve.stdout()).toContain('started an empty mirror at fresh/ to fill from the upstream');
      const download = await fetch(new URL('v1/modules/acme/net/aws/1.0.0/download', serve.url));
      expect(download.status).toBe(200);
    } finally {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
    const verified = await runCli(['verify', '--mirror', 'fresh'], dir);
    expect(verified.code, verified.stderr).toBe(0);
    // Only a folder that does not exist: one that exists and holds no mirror is a mistake to report.
    mkdirSync(join(dir, 'not-a-mirror'));
    const refused = await runCli(['serve', '--mirror', 'not-a-mirror', '--upstream', upstream.url], dir);
    expect(refused.stderr).toMatch(/not-a-mirror holds no built mirror/);
    expect(refused.code).toBe(2);
  });

  it('refuses what makes no sense, with exit 2', async () => {
    writeFiles(dir, { 'mirror.config.yaml': 'out: cache\n', 'not-a-ca.txt': 'hello\n' });
    const cases: [string[], RegExp][] = [
      [['--upstream-ttl', '5m'], /--upstream-ttl needs --upstream URL/],
      [['--upstream', 'registry.example.com'], /Invalid --upstream "registry\.example\.com"/],
      [['--upstream', 'https://registry.example.com/', '--upstream-ttl', 'soon'], /Invalid --upstream-ttl "soon"/],
      [['--upstream', 'https://registry.example.com/', '--upstream-token-env', 'MM_NOT_SET_ANYWHERE'], /names MM_NOT_SET_ANYWHERE, which is not set/],
      [['--upstream', 'https://registry.example.com/', '--upstream-ca', 'not-a-ca.txt'], /holds no PEM certificate/],
    ];
    for (const [flags, message] of cases) {
      const r = await runCli(['serve', ...flags], dir);
      expect(r.stderr, flags.join(' ')).toMatch(message);
      expect(r.code, flags.join(' ')).toBe(2);
    }
    writeFiles(dir, { 'mirror.config.yaml': 'out: cache\nupstream:\n  url: https://registry.example.com/\n  ttl: soon\n' });
    const bad = await runCli(['serve'], dir);
    expect(bad.stderr).toMatch(/mirror\.config\.yaml:4.*upstream\.ttl/);
    // An invalid config is a failure (1), as for every command.
    expect(bad.code).toBe(1);
  });
});
