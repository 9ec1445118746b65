// Every command reads the mirror's place and base URL the same way: the
// config's `out` and `baseUrl` (flags override them), one base-URL rule, and
// one table that decides how many positional arguments a command takes.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { baseUrlFlag, moduleMeta, normalizeBaseUrl, resolveMirrorConfig } from '../../src/config/index.js';
import { isRemoteRepository } from '../../src/config/sources.js';
import { runCli, spawnServe, tempDir, writeFiles, mirrorManifest } from '../helpers.js';

const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8'));

describe('the base-URL rule', () => {
  it('keeps relative locations and ends an absolute URL with one slash', () => {
    expect(normalizeBaseUrl('')).toBe('');
    expect(normalizeBaseUrl('https://x.example.com')).toBe('https://x.example.com/');
    expect(normalizeBaseUrl('https://x.example.com/registry/')).toBe('https://x.example.com/registry/');
    expect(baseUrlFlag(undefined, 'serve')).toBeUndefined();
    expect(() => baseUrlFlag('x.example.com', 'serve')).toThrow(/Invalid --base-url "x.example.com"/);
  });

  it('publish --base-url without a trailing slash writes locations under it, and the mirror verifies', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'drop/acme/thing/aws/1.0.0/main.tf': 'variable "x" {}\n' });
    const published = await runCli(
      ['publish', '--source', 'drop/acme/thing/aws/1.0.0', '--base-url', 'https://x.example.com', '--mirror', 'dist', '--new-mirror', '--json'],
      dir,
    );
    expect(published.stderr).toBe('');
    expect(published.code).toBe(0);
    expect(readJson(join(dir, 'dist/v1/modules/acme/thing/aws/1.0.0/download'))).toEqual({
      location: 'https://x.example.com/v1/modules/acme/thing/aws/1.0.0/thing-aws-1.0.0.tar.gz',
    });
    expect((await runCli(['verify', '--mirror', 'dist'], dir)).code).toBe(0);
  });
});

describe("the config's out", () => {
  it('is where serve, verify, bundle, unbundle and hosting look, unless a flag says otherwise', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'mirror.config.yaml': 'out: public\nsources:\n  - folder: mods\n', 'mods/acme/thing/aws/1.0.0/main.tf': 'variable "x" {}\n' });
    expect((await runCli(['build', '--json'], dir)).code).toBe(0);
    expect(existsSync(join(dir, 'public/manifest.json'))).toBe(true);

    const verified = await runCli(['verify', '--json'], dir);
    expect(mirrorManifest(join(dir, 'public'))).toBeTruthy();
    expect(JSON.parse(verified.stdout)).toMatchObject({ dir: join(dir, 'public'), ok: true });

    const nginx = await runCli(['hosting', 'nginx', '--listen', '8080'], dir);
    expect(nginx.stdout).toContain(`root "${join(dir, 'public')}";`);

    expect((await runCli(['bundle', '--out', 'b.tar.gz'], dir)).code).toBe(0);
    const elsewhere = tempDir();
    writeFiles(elsewhere, { 'mirror.config.yaml': 'out: site\nsources:\n  - folder: not-here-yet\n' });
    const unbundled = await runCli(['unbundle', join(dir, 'b.tar.gz')], elsewhere);
    expect(unbundled.stderr).toBe('');
    expect(existsSync(join(elsewhere, 'site/v1/modules/acme/thing/aws/1.0.0/thing-aws-1.0.0.tar.gz'))).toBe(true);

    const { child, url } = await spawnServe(['--port', '0', '--quiet'], dir, /serving public at (http:\/\/\S+)/);
    try {
      const versions = await fetch(new URL('/v1/modules/acme/thing/aws/versions', url));
      expect(versions.status).toBe(200);
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('needs no config, and no sources that exist, to read a mirror', () => {
    const dir = tempDir();
    expect(resolveMirrorConfig({}, dir)).toMatchObject({ configFile: undefined, outDir: join(dir, 'dist'), baseUrl: '' });
    writeFiles(dir, { 'mirror.config.yaml': 'out: www\nbaseUrl: https://m.example.com\nsources:\n  - git: ../gone\n    namespace: acme\n' });
    expect(resolveMirrorConfig({}, dir)).toMatchObject({ outDir: join(dir, 'www'), baseUrl: 'https://m.example.com/' });
    expect(resolveMirrorConfig({ out: 'other', baseUrl: 'https://o.example.com/' }, dir)).toMatchObject({
      outDir: join(dir, 'other'),
      baseUrl: 'https://o.example.com/',
    });
  });
});

describe('shared rules', () => {
  it('tells clone URLs from local paths', () => {
    for (const url of ['https://git.example.com/a.git', 'ssh://git@host/a', 'git@github.com:acme/a.git']) expect(isRemoteRepository(url), url).toBe(true);
    for (const path of ['../terraform-aws-vpc', '/srv/repos/a', 'C-drive/a:b']) expect(isRemoteRepository(path), path).toBe(false);
  });

  it("layers a module's metadata: defaults, the config's entry, the source's own keys", () => {
    const address = { namespace: 'acme', name: 'vpc', provider: 'aws' };
    const config = { modules: new Map([['acme/vpc/aws', { owner: 'net', description: 'From config' }]]) };
    expect(moduleMeta(undefined, address)).toEqual({ owner: '', description: '', source: '', verified: false });
    expect(moduleMeta(config, address, { description: 'Own' })).toEqual({ owner: 'net', description: 'Own', source: '', verified: false });
  });
});

describe('positional arguments', () => {
  it('are checked by the command table: too many, too few, each a usage error', async () => {
    const dir = tempDir();
    for (const [args, message] of [
      [['build', 'extra'], /Unexpected argument "extra"/],
      [['serve', 'dist'], /Unexpected argument "dist"/],
      [['verify', 'a', 'b'], /Unexpected argument "b"/],
      [['edition'], /Missing set NAME/],
      [['edition', 'set'], /Missing NAME/],
      [['unbundle'], /Name the bundle/],
      [['user', 'create', 'more'], /Unexpected argument "more"/],
    ] as const) {
      const result = await runCli([...args], dir);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toMatch(message);
    }
  });
});

describe('publish --version', () => {
  it('takes the normal form a build gives a tag: no leading v, no build metadata', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'drop/main.tf': 'variable "x" {}\n' });
    const published = await runCli(
      ['publish', '--source', 'drop', '--namespace', 'acme', '--name', 'thing', '--provider', 'aws', '--version', 'v1.4.0+build.7', '--new-mirror', '--json'],
      dir,
    );
    expect(published.stderr).toBe('');
    expect(JSON.parse(published.stdout).version).toBe('1.4.0');
    expect(existsSync(join(dir, 'dist/v1/modules/acme/thing/aws/1.4.0/thing-aws-1.4.0.tar.gz'))).toBe(true);
  });
});
