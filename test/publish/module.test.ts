// publish through the CLI: identical to a clean build, immutable, atomic
// under kills, safe with two pipelines at once; and incremental builds.

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deprecationsOf, deprecationsText } from '../../src/mirror/deprecations.js';
import { versionsIndexText } from '../../src/mirror/versions-index.js';
import { git, liveGenerationName, makeRepo, mirrorLeftovers, ROOT, runCli, spawnCli, tempDir, writeFiles, treeOf, mirrorManifest } from '../helpers.js';

/** Staging and old folders, or a lock, left beside the mirror. */
const leftovers = (dir: string) => mirrorLeftovers(dir);

const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8'));
const versionsOf = (dist: string, key: string) => mirrorManifest(dist).modules[key]?.versions.map((v: { version: string }) => v.version);

function moduleFiles(n: number): Record<string, string> {
  return {
    'main.tf': `variable "size" {\n  default = ${n}\n}\nresource "null_resource" "r${n}" {}\n`,
    'README.md': `# Thing\n\nVersion with size ${n}.\n`,
  };
}

describe('publish from git', () => {
  it('adds a tagged version, giving the same tree as a clean build', async () => {
    const dir = tempDir();
    const repo = join(dir, 'terraform-aws-thing');
    makeRepo(repo, [{ date: '2024-01-01T00:00:00Z', files: moduleFiles(1), tags: ['v1.0.0'] }]);
    writeFiles(dir, {
      'mirror.config.yaml': 'sources:\n  - git: terraform-aws-thing\n    namespace: acme\n  - folder: other\n',
      'other/acme/thing/google/0.1.0/main.tf': 'variable "x" {}\n',
    });
    expect((await runCli(['build', '--json'], dir)).code).toBe(0);

    makeRepo(repo, [{ date: '2024-02-01T00:00:00Z', files: moduleFiles(2), tags: ['v1.1.0'] }]);
    const published = await runCli(['publish', '--git', 'terraform-aws-thing', '--ref', 'v1.1.0', '--json'], dir);
    expect(published.stderr).toBe('');
    expect(published.code).toBe(0);
    expect(JSON.parse(published.stdout)).toMatchObject({ module: 'acme/thing/aws', version: '1.1.0', outcome: 'published' });

    const clean = await runCli(['build', '--clean', '--json', '--mirror', 'clean'], dir);
    expect(clean.code).toBe(0);
    expect(treeOf(join(dir, 'dist'))).toEqual(treeOf(join(dir, 'clean')));
    expect(readJson(join(dir, 'dist/v1/modules/acme/thing/aws/index.json')).version).toBe('1.1.0');
    expect((await runCli(['verify', '--mirror', 'dist'], dir)).code).toBe(0);

    // The ref is looked up through the git process the version would be read with: a missing one ends it too.
    const before = treeOf(join(dir, 'dist'));
    for (const ref of ['v9.9.9', 'v1.1.0\nv1.0.0']) {
      const missing = await runCli(['publish', '--git', 'terraform-aws-thing', '--ref', ref], dir);
      // A ref named on the command line that is not there, as a path that is not: a usage error.
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain(`has no commit "${ref}"`);
    }
    expect(treeOf(join(dir, 'dist'))).toEqual(before);
  });
});

describe('publish from a folder', () => {
  const dir = tempDir();
  const dist = join(dir, 'dist');
  const setup = async () => {
    writeFiles(dir, { 'mirror.config.yaml': 'sources:\n  - folder: mods\n' });
    for (const [v, n] of [
      ['1.0.0', 1],
      ['1.1.0', 2],
    ] as const) {
      writeFiles(join(dir, `mods/acme/thing/aws/${v}`), moduleFiles(n));
    }
    writeFiles(join(dir, 'mods/beta/other/aws/0.1.0'), moduleFiles(9));
    expect((await runCli(['build', '--json'], dir)).code).toBe(0);
  };

  it('adds a version and matches a clean build, and says the same content twice is a no-op', async () => {
    await setup();
    writeFiles(join(dir, 'mods/acme/thing/aws/2.0.0'), moduleFiles(3));
    const before = treeOf(dist);
    const dry = await runCli(['publish', '--source', 'mods/acme/thing/aws/2.0.0', '--dry-run', '--json'], dir);
    expect(dry.code).toBe(0);
    const dryResult = JSON.parse(dry.stdout);
    expect(dryResult).toMatchObject({ dryRun: true, outcome: 'would-publish' });
    expect(dryResult.changed).toEqual(
      expect.arrayContaining([
        'manifest.json',
        'state/acme/thing.aws.json',
        'browse/modules/acme/thing.aws.json',
        'v1/modules/acme/thing/aws/2.0.0/thing-aws-2.0.0.tar.gz',
        'v1/modules/acme/thing/aws/versions',
        'v1/modules/acme/thing/aws/1.0.0/index.json',
      ]),
    );
    // The other namespace's module, its state and its browse rows are neither read nor rewritten.
    expect(dryResult.changed.filter((f: string) => /^(v1\/modules|state|browse\/modules)\/beta\b/.test(f))).toEqual([]);
    expect(treeOf(dist)).toEqual(before);

    const first = await runCli(['publish', '--source', 'mods/acme/thing/aws/2.0.0'], dir);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^Published acme\/thing\/aws 2\.0\.0 \(sha256 [0-9a-f]{64}\)/);
    expect(versionsOf(dist, 'acme/thing/aws')).toEqual(['2.0.0', '1.1.0', '1.0.0']);
    expect((await runCli(['build', '--clean', '--json', '--mirror', 'clean'], dir)).code).toBe(0);
    expect(treeOf(dist)).toEqual(treeOf(join(dir, 'clean')));

    const after = treeOf(dist);
    const again = await runCli(['publish', '--source', 'mods/acme/thing/aws/2.0.0', '--json'], dir);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout).outcome).toBe('unchanged');
    expect(JSON.parse(again.stdout).changed).toEqual([]);
    expect(treeOf(dist)).toEqual(after);
  });

  it('reports the files a real run changed: the very list its dry run gave', async () => {
    const own = tempDir();
    writeFiles(own, { 'mirror.config.yaml': 'sources:\n  - folder: mods\n' });
    writeFiles(join(own, 'mods/acme/thing/aws/1.0.0'), moduleFiles(1));
    expect((await runCli(['build'], own)).code).toBe(0);
    writeFiles(join(own, 'mods/acme/thing/aws/2.1.0'), moduleFiles(4));
    const wouldChange = JSON.parse((await runCli(['publish', '--source', 'mods/acme/thing/aws/2.1.0', '--dry-run', '--json'], own)).stdout).changed;
    const real = JSON.parse((await runCli(['publish', '--source', 'mods/acme/thing/aws/2.1.0', '--json'], own)).stdout);
    expect(real).toMatchObject({ outcome: 'published', dryRun: false });
    expect(real.changed).toEqual(wouldChange);
    expect(real.changed).toContain('v1/modules/acme/thing/aws/2.1.0/thing-aws-2.1.0.tar.gz');
  });

  it('refuses different content for a published version, showing both digests, unless --force', async () => {
    writeFiles(join(dir, 'mods/acme/thing/aws/2.0.0'), { 'main.tf': 'variable "changed" {}\n' });
    const refused = await runCli(['publish', '--source', 'mods/acme/thing/aws/2.0.0'], dir);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /acme\/thing\/aws 2\.0\.0 is already published with different content:\n\s+published: sha256 [0-9a-f]{64}\n\s+this one:\s+sha256 [0-9a-f]{64}/,
    );
    expect(refused.stderr).toMatch(/hint: .*--force/);
    const oldSha = mirrorManifest(dist).modules['acme/thing/aws'].versions[0].sha256;

    const forced = await runCli(['publish', '--source', 'mods/acme/thing/aws/2.0.0', '--force', '--json'], dir);
    expect(forced.code).toBe(0);
    const result = JSON.parse(forced.stdout);
    expect(result).toMatchObject({ outcome: 'replaced', previousSha256: oldSha });
    const manifest = mirrorManifest(dist);
    expect(manifest.forced).toEqual([
      { module: 'acme/thing/aws', version: '2.0.0', previous_sha256: oldSha, sha256: result.sha256, at: expect.any(String), by: expect.any(String) },
    ]);
    expect(readJson(join(dist, 'v1/modules/acme/thing/aws/2.0.0/index.json')).root.inputs.map((i: { name: string }) => i.name)).toEqual(['changed']);
    expect((await runCli(['verify', '--mirror', 'dist'], dir)).code).toBe(0);
  });

  it('lists a pre-release without making it the latest', async () => {
    writeFiles(join(dir, 'mods/acme/thing/aws/3.0.0-rc.1'), moduleFiles(4));
    expect((await runCli(['publish', '--source', 'mods/acme/thing/aws/3.0.0-rc.1'], dir)).code).toBe(0);
    expect(versionsOf(dist, 'acme/thing/aws')[0]).toBe('3.0.0-rc.1');
    expect(readJson(join(dist, 'v1/modules/acme/thing/aws/index.json')).version).toBe('2.0.0');
    expect(readJson(join(dist, 'v1/modules/index.json')).modules.find((m: { name: string }) => m.name === 'thing').version).toBe('2.0.0');
  });

  it('publishes a new module and a new provider of an existing name', async () => {
    writeFiles(join(dir, 'drop/acme/thing/google/1.0.0'), moduleFiles(5));
    const r = await runCli(['publish', '--source', 'drop/acme/thing/google/1.0.0'], dir);
    expect(r.code).toBe(0);
    expect(readJson(join(dist, 'v1/modules/acme/thing/aws/1.0.0/index.json')).providers).toEqual(['aws', 'google']);
    expect(readJson(join(dist, 'v1/modules/acme/thing/index.json')).modules.map((m: { provider: string }) => m.provider)).toEqual(['aws', 'google']);
    writeFiles(join(dir, 'loose'), moduleFiles(6));
    const named = await runCli(['publish', '--source', 'loose', '--namespace', 'zed', '--name', 'new', '--provider', 'aws', '--version', '0.0.1'], dir);
    expect(named.code).toBe(0);
    expect(readJson(join(dist, 'v1/modules/zed/index.json')).modules[0].id).toBe('zed/new/aws/0.0.1');
    expect((await runCli(['verify', '--mirror', 'dist'], dir)).code).toBe(0);
  });

  it('says what is missing when the source does not name its module', async () => {
    writeFiles(join(dir, 'somewhere'), moduleFiles(7));
    const r = await runCli(['publish', '--source', 'somewhere', '--version', '1.0.0'], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/Missing the module's namespace/);
    expect((await runCli(['publish'], dir)).code).toBe(2);
    expect((await runCli(['publish', '--source', 'nowhere'], dir)).stderr).toMatch(/does not exist/);
  });

  it('refuses a version with a syntax error, with a hint worded for a publish', async () => {
    await setup();
    const before = readFileSync(join(dist, 'manifest.json'), 'utf8');
    writeFiles(join(dir, 'broken'), { 'main.tf': 'variable "a" {\n' });
    const r = await runCli(['publish', '--source', 'broken', '--namespace', 'acme', '--name', 'thing', '--provider', 'aws', '--version', '9.0.0'], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'error: main.tf:2:1: Unclosed block: expected "}" before end of file\nhint: Fix the syntax error, then publish again; nothing was published.\n',
    );
    expect(readFileSync(join(dist, 'manifest.json'), 'utf8')).toBe(before);
  });
});

describe('publish under pressure', () => {
  const cli = join(ROOT, 'bin/modmirror.js');

  it('lands two concurrent publishes of different versions', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'mirror.config.yaml': 'sources:\n  - folder: mods\n' });
    writeFiles(join(dir, 'mods/acme/thing/aws/1.0.0'), moduleFiles(1));
    expect((await runCli(['build'], dir)).code).toBe(0);
    writeFiles(join(dir, 'next/acme/thing/aws/1.1.0'), moduleFiles(2));
    writeFiles(join(dir, 'next/acme/thing/aws/1.2.0'), moduleFiles(3));
    // Two processes, as two pipelines are.
    const results = await Promise.all([
      spawnCli(['publish', '--source', 'next/acme/thing/aws/1.1.0'], dir),
      spawnCli(['publish', '--source', 'next/acme/thing/aws/1.2.0'], dir),
    ]);
    expect(results.map((r) => r.code)).toEqual([0, 0]);
    expect(versionsOf(join(dir, 'dist'), 'acme/thing/aws')).toEqual(['1.2.0', '1.1.0', '1.0.0']);
    expect((await runCli(['verify', '--mirror', 'dist'], dir)).code).toBe(0);
  });

  it('leaves the previous mirror intact when killed at any point, and the next publish succeeds', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'mirror.config.yaml': 'sources:\n  - folder: mods\n' });
    for (let i = 0; i < 30; i++) writeFiles(join(dir, `mods/acme/m${i}/aws/1.0.0`), moduleFiles(i));
    expect((await runCli(['build'], dir)).code).toBe(0);
    const dist = join(dir, 'dist');
    const before = treeOf(dist);
    writeFiles(join(dir, 'next/acme/m0/aws/1.1.0'), moduleFiles(100));
    let landed = false;
    for (let delay = 0; delay <= 600; delay += 15) {
      const child = spawn(process.execPath, [cli, 'publish', '--source', 'next/acme/m0/aws/1.1.0'], { cwd: dir, stdio: 'ignore' });
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      await new Promise((r) => setTimeout(r, delay));
      child.kill('SIGKILL');
      const code = await exited;
      // Before or after, never between, once the next command has finished or undone what the kill left:
      // the tree is the old one, or it verifies with the new version in it.
      expect((await runCli(['verify', '--mirror', 'dist'], dir)).code).toBe(0);
      const versions = existsSync(join(dist, 'manifest.json')) ? versionsOf(dist, 'acme/m0/aws') : undefined;
      if (versions?.length === 2 || code === 0) {
        landed = true;
        expect((await runCli(['verify', '--mirror', 'dist'], dir)).code).toBe(0);
        break;
      }
      expect(treeOf(dist)).toEqual(before);
    }
    const final = await runCli(['publish', '--source', 'next/acme/m0/aws/1.1.0', '--json'], dir);
    expect(final.code).toBe(0);
    expect(JSON.parse(final.stdout).outcome).toBe(landed ? 'unchanged' : 'published');
    expect(versionsOf(dist, 'acme/m0/aws')).toEqual(['1.1.0', '1.0.0']);
    expect(await leftovers(dir)).toEqual([]);
  });

  it('recovers from a crash at every step of a publish: undone before its journal, finished after it', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'mirror.config.yaml': 'sources:\n  - folder: mods\n' });
    writeFiles(join(dir, 'mods/acme/m/aws/1.0.0'), moduleFiles(1));
    expect((await runCli(['build'], dir)).code).toBe(0);
    const dist = join(dir, 'dist');
    const before = treeOf(dist);
    for (const point of ['locked', 'journaled', 'applying']) {
      writeFiles(join(dir, 'mods/acme/m/aws/1.1.0'), moduleFiles(2));
      const crashed = await runCli(['publish', '--source', 'mods/acme/m/aws/1.1.0'], dir, { MODMIRROR_CRASH_AT: point });
      expect(crashed.code, point).not.toBe(0);
      expect(existsSync(join(dir, 'dist.lock')), point).toBe(true);
      // The next writer (here, a no-op publish of what is there) takes the stale lock and repairs the mirror first.
      expect((await runCli(['publish', '--source', 'mods/acme/m/aws/1.0.0'], dir)).code, point).toBe(0);
      expect(await leftovers(dir), point).toEqual([]);
      if (point === 'locked') {
        expect(treeOf(dist), point).toEqual(before);
        continue;
      }
      expect(versionsOf(dist, 'acme/m/aws'), point).toEqual(['1.1.0', '1.0.0']);
      expect((await runCli(['verify', '--mirror', 'dist'], dir)).code).toBe(0);
      rmSync(join(dir, 'clean'), { recursive: true, force: true });
      expect((await runCli(['build', '--clean', '--mirror', 'clean'], dir)).code).toBe(0);
      // The same mirror as a clean build; the module's state also keeps the ledger of the earlier points' prunes.
      const state = 'state/acme/m.aws.json';
      const { 'manifest.json': _, [state]: __, ...files } = treeOf(dist);
      const { 'manifest.json': ___, [state]: ____, ...cleanFiles } = treeOf(join(dir, 'clean'));
      expect(files, point).toEqual(cleanFiles);
      expect(mirrorManifest(dist).modules, point).toEqual(mirrorManifest(join(dir, 'clean')).modules);
      // Back to the start for the next point.
      rmSync(join(dir, 'mods/acme/m/aws/1.1.0'), { recursive: true });
      expect((await runCli(['build', '--prune'], dir)).code).toBe(0);
      expect(versionsOf(dist, 'acme/m/aws'), point).toEqual(['1.0.0']);
    }
  });
});

describe('publish and the browse page', () => {
  it('drops the README renderings an earlier modmirror stored, giving the same tree as a clean build', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'mirror.config.yaml': 'sources:\n  - folder: mods\n' });
    writeFiles(join(dir, 'mods/acme/m/aws/1.0.0'), { 'main.tf': 'variable "x" {}\n', 'README.md': '# Alpha\n' });
    expect((await runCli(['build'], dir)).code).toBe(0);
    // What a mirror written before the page rendered READMEs itself held besides.
    const digest = 'a'.repeat(64);
    writeFiles(join(dir, 'dist'), { 'browse/readme/acme/m/aws/1.0.0.json': JSON.stringify({ '': digest }), [`browse/rendered/${digest}.html.gz`]: 'x' });
    writeFiles(join(dir, 'mods/acme/m/aws/1.1.0'), { 'main.tf': 'variable "x" {}\n', 'README.md': '# Beta\n' });
    const published = await runCli(['publish', '--source', 'mods/acme/m/aws/1.1.0'], dir);
    expect(published.code, published.stderr).toBe(0);
    expect(existsSync(join(dir, 'dist/browse/readme'))).toBe(false);
    expect(existsSync(join(dir, 'dist/browse/rendered'))).toBe(false);
    expect((await runCli(['build', '--clean', '--mirror', 'clean'], dir)).code).toBe(0);
    expect(treeOf(join(dir, 'dist'))).toEqual(treeOf(join(dir, 'clean')));
    expect((await runCli(['verify', '--mirror', 'dist'], dir)).code).toBe(0);
  });
});

describe('nothing still writing beside the mirror once the command returns', () => {
  // A pipeline deletes its folder right after a publish: nothing may still be adding files to it.
  const spares = (dir: string) => readdirSync(dir).filter((n) => n.startsWith('.dist.spare'));

  it('publish and unbundle (with the --no-spare that scripts pass) leave no copy in progress, so the folder can be deleted at once', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'mirror.config.yaml': 'sources:\n  - folder: mods\n' });
    writeFiles(join(dir, 'mods/acme/m/aws/1.0.0'), moduleFiles(1));
    expect((await runCli(['build'], dir)).code).toBe(0);
    cpSync(join(dir, 'dist'), join(dir, 'inside/dist'), { recursive: true, dereference: true });

    writeFiles(join(dir, 'mods/acme/m/aws/1.1.0'), moduleFiles(2));
    const published = await runCli(['publish', '--source', 'mods/acme/m/aws/1.1.0', '--no-spare'], dir);
    expect(published.code, published.stderr).toBe(0);
    expect(versionsOf(join(dir, 'dist'), 'acme/m/aws')).toEqual(['1.1.0', '1.0.0']);
    expect(spares(dir)).toEqual([]);

    const bundled = await runCli(['bundle', '--out', 'b.tar.gz'], dir);
    expect(bundled.code, bundled.stderr).toBe(0);
    const unbundled = await runCli(['unbundle', join(dir, 'b.tar.gz'), '--mirror', 'dist', '--no-spare'], join(dir, 'inside'));
    expect(unbundled.code, unbundled.stderr).toBe(0);
    expect(versionsOf(join(dir, 'inside/dist'), 'acme/m/aws')).toEqual(['1.1.0', '1.0.0']);
    expect(spares(join(dir, 'inside'))).toEqual([]);

    // Still none a moment later (a detached copy would have shown by now), and the folder goes without a retry.
    await new Promise((r) => setTimeout(r, 300));
    expect([...spares(dir), ...spares(join(dir, 'inside'))]).toEqual([]);
    rmSync(join(dir, 'inside'), { recursive: true });
  });
});

describe('a publish changes the mirror in place', () => {
  const inodes = (root: string) => {
    const out: Record<string, number> = {};
    const walk = (rel: string) => {
      for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
        const path = rel ? `${rel}/${entry.name}` : entry.name;
        if (entry.isDirectory()) walk(path);
        else out[path] = statSync(join(root, path)).ino;
      }
    };
    walk('');
    return out;
  };

  it('moves in only the files it changes: every other file keeps its inode, and the result matches a clean build', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'mirror.config.yaml': 'sources:\n  - folder: mods\n' });
    for (let i = 0; i < 5; i++) writeFiles(join(dir, `mods/acme/m${i}/aws/1.0.0`), moduleFiles(i));
    expect((await runCli(['build'], dir)).code).toBe(0);
    const dist = join(dir, 'dist');
    const generation = liveGenerationName(dist);
    const before = inodes(dist);

    writeFiles(join(dir, 'mods/acme/m0/aws/1.1.0'), moduleFiles(10));
    const published = await runCli(['publish', '--source', 'mods/acme/m0/aws/1.1.0', '--json'], dir);
    expect(published.code, published.stderr).toBe(0);
    const changed: string[] = JSON.parse(published.stdout).changed;
    expect(liveGenerationName(dist)).toBe(generation);
    const now = inodes(dist);
    const kept = Object.keys(before).filter((rel) => now[rel] === before[rel]);
    expect(kept.length).toBeGreaterThan(0);
    // A file is new exactly when the publish says it changed it; the other modules' files are untouched.
    expect(
      Object.keys(now)
        .filter((rel) => now[rel] !== before[rel])
        .sort(),
    ).toEqual(changed);
    expect(changed.filter((rel) => rel.startsWith('v1/modules/acme/m1/'))).toEqual([]);
    expect((await runCli(['build', '--clean', '--mirror', 'clean'], dir)).code).toBe(0);
    expect(treeOf(dist)).toEqual(treeOf(join(dir, 'clean')));
    expect(await leftovers(dir)).toEqual([]);
  });

  it('removes the spare copy an earlier version of modmirror kept beside the mirror', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'mirror.config.yaml': 'sources:\n  - folder: mods\n' });
    writeFiles(join(dir, 'mods/acme/m/aws/1.0.0'), moduleFiles(1));
    expect((await runCli(['build'], dir)).code).toBe(0);
    cpSync(join(dir, 'dist'), join(dir, '.dist.spare'), { recursive: true, dereference: true });
    writeFileSync(join(dir, '.dist.spare/v1/modules/acme/m/aws/stray.json'), '{}\n');

    writeFiles(join(dir, 'mods/acme/m/aws/1.1.0'), moduleFiles(2));
    expect((await runCli(['publish', '--source', 'mods/acme/m/aws/1.1.0'], dir)).code).toBe(0);
    expect(existsSync(join(dir, 'dist/v1/modules/acme/m/aws/stray.json'))).toBe(false);
    expect((await runCli(['build', '--clean', '--mirror', 'clean'], dir)).code).toBe(0);
    expect(treeOf(join(dir, 'dist'))).toEqual(treeOf(join(dir, 'clean')));
    expect(await leftovers(dir)).toEqual([]);
  });
});

describe('incremental build', () => {
  it('does nothing when nothing changed, reuses the cache when one version changed, and matches a clean build', async () => {
    const dir = tempDir();
    const repo = join(dir, 'terraform-aws-inc');
    makeRepo(repo, [
      { date: '2024-01-01T00:00:00Z', files: moduleFiles(1), tags: ['v1.0.0'] },
      { date: '2024-02-01T00:00:00Z', files: moduleFiles(2), tags: ['v1.1.0'] },
    ]);
    writeFiles(dir, { 'mirror.config.yaml': 'sources:\n  - git: terraform-aws-inc\n    namespace: acme\n  - folder: mods\n' });
    writeFiles(join(dir, 'mods/acme/f/aws/1.0.0'), moduleFiles(3));
    const first = JSON.parse((await runCli(['build', '--json'], dir)).stdout);
    expect(first).toMatchObject({ versions: 3, cached: 0, upToDate: false });
    const tree = treeOf(join(dir, 'dist'));

    const second = JSON.parse((await runCli(['build', '--json'], dir)).stdout);
    expect(second).toMatchObject({ versions: 3, upToDate: true });
    expect(treeOf(join(dir, 'dist'))).toEqual(tree);

    makeRepo(repo, [{ date: '2024-03-01T00:00:00Z', files: moduleFiles(4), tags: ['v1.2.0'] }]);
    writeFiles(join(dir, 'mods/acme/f/aws/1.1.0'), moduleFiles(6));
    const third = JSON.parse((await runCli(['build', '--json'], dir)).stdout);
    expect(third).toMatchObject({ versions: 5, cached: 3, upToDate: false });

    expect((await runCli(['build', '--clean', '--mirror', 'clean', '--json'], dir)).code).toBe(0);
    expect(treeOf(join(dir, 'dist'))).toEqual(treeOf(join(dir, 'clean')));

    // A mirror changed behind the build's back is rebuilt, not trusted.
    rmSync(join(dir, 'dist/v1/modules/acme/f/aws/1.0.0'), { recursive: true });
    writeFileSync(join(dir, 'dist/manifest.json'), readFileSync(join(dir, 'dist/manifest.json'), 'utf8') + ' ');
    const fourth = JSON.parse((await runCli(['build', '--json'], dir)).stdout);
    expect(fourth.upToDate).toBe(false);
    expect(treeOf(join(dir, 'dist'))).toEqual(treeOf(join(dir, 'clean')));
    // A tag moved to another commit (its ref file changes) is seen, not answered from the scan cache,
    // and refused: the published 1.2.0 keeps its bytes, and the build fails naming both digests.
    const published = readFileSync(join(dir, 'dist/v1/modules/acme/inc/aws/1.2.0/inc-aws-1.2.0.tar.gz'));
    makeRepo(repo, [{ date: '2024-04-01T00:00:00Z', files: moduleFiles(5) }]);
    git(repo, ['tag', '-f', 'v1.2.0']);
    const movedRun = await runCli(['build', '--json'], dir);
    expect(movedRun.code).toBe(1);
    const moved = JSON.parse(movedRun.stdout);
    expect(moved).toMatchObject({ upToDate: false });
    const digest = createHash('sha256').update(published).digest('hex');
    expect(moved.errors).toEqual([
      {
        code: 'VERSION_CONFLICT',
        message: expect.stringMatching(
          new RegExp(`acme/inc/aws 1\\.2\\.0 .*tag v1\\.2\\.0.*\\n  published: sha256 ${digest}\\n  the source: sha256 [0-9a-f]{64}`, 's'),
        ),
      },
    ]);
    expect(readFileSync(join(dir, 'dist/v1/modules/acme/inc/aws/1.2.0/inc-aws-1.2.0.tar.gz')).equals(published)).toBe(true);
    expect(JSON.parse(readFileSync(join(dir, 'dist/v1/modules/acme/inc/aws/1.2.0/index.json'), 'utf8')).root.inputs[0].default).toBe('4');
    expect((await runCli(['verify', '--mirror', 'dist'], dir)).code).toBe(0);
    // Replaced on purpose, it is taken and recorded.
    const replaced = await runCli(['build', '--json', '--replace', 'acme/inc/aws@1.2.0'], dir);
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'dist/v1/modules/acme/inc/aws/1.2.0/index.json'), 'utf8')).root.inputs[0].default).toBe('5');
    expect(mirrorManifest(join(dir, 'dist')).forced).toEqual([
      {
        module: 'acme/inc/aws',
        version: '1.2.0',
        previous_sha256: digest,
        sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        at: expect.any(String),
        by: expect.any(String),
      },
    ]);
    // A tag that is gone leaves its published version in place until it is pruned on purpose.
    git(repo, ['tag', '-d', 'v1.2.0']);
    const kept = JSON.parse((await runCli(['build', '--json'], dir)).stdout);
    expect(kept.warnings).toEqual([expect.stringMatching(/keeping 1 published version the sources no longer have .*: acme\/inc\/aws@1\.2\.0/)]);
    expect(versionsOf(join(dir, 'dist'), 'acme/inc/aws')).toEqual(['1.2.0', '1.1.0', '1.0.0']);
    const pruned = JSON.parse((await runCli(['build', '--json', '--prune'], dir)).stdout);
    expect(pruned.warnings).toEqual([expect.stringMatching(/removing 1 version .*--prune.*: acme\/inc\/aws@1\.2\.0/)]);
    expect(versionsOf(join(dir, 'dist'), 'acme/inc/aws')).toEqual(['1.1.0', '1.0.0']);
    expect(mirrorManifest(join(dir, 'dist')).removed).toEqual([
      { module: 'acme/inc/aws', version: '1.2.0', sha256: expect.stringMatching(/^[0-9a-f]{64}$/), at: expect.any(String), by: expect.any(String) },
    ]);
  });
});

/**
 * Turns a mirror into what an older modmirror wrote (format 1): the whole truth in manifest.json with versions
 * and digests only, and the summaries, version lists and deprecations in search-index.json,
 * versions-index.json and deprecations.json; no module states. Returns the search index's summaries.
 */
function asFormat1(dist: string): unknown[] {
  const manifest = mirrorManifest(dist);
  const entries = Object.entries<{ latest?: unknown; versions: { version: string; deprecation?: unknown }[] }>(manifest.modules);
  const summaries = entries.map(([, entry]) => entry.latest);
  const deprecations = deprecationsOf(manifest);
  const versionLists = entries.map(([key, entry]): [string, string[]] => [key, entry.versions.map((v) => v.version)]);
  for (const [, entry] of entries) {
    delete entry.latest;
    for (const v of entry.versions) delete v.deprecation;
  }
  const { base_url: _base, recent: _recent, ...rest } = manifest;
  writeFileSync(join(dist, 'manifest.json'), `${JSON.stringify({ ...rest, format: 1 }, null, 2)}\n`);
  writeFileSync(join(dist, 'search-index.json'), `${JSON.stringify({ modules: summaries })}\n`);
  writeFileSync(join(dist, 'versions-index.json'), versionsIndexText(versionLists));
  writeFileSync(join(dist, 'deprecations.json'), deprecationsText(deprecations, versionLists));
  rmSync(join(dist, 'state'), { recursive: true });
  return summaries;
}

describe('a mirror whose manifest an older modmirror wrote (format 1)', () => {
  it("is read, and upgraded by its first publish: summaries, deprecations and base URL move into the root and each module's state, every other module's bytes stay", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'mirror.config.yaml': 'sources:\n  - folder: mods\n',
      'mods/acme/a/aws/1.0.0/main.tf': 'variable "x" {}\n',
      'mods/acme/a/aws/1.1.0/main.tf': 'variable "x" {}\nvariable "y" {}\n',
      'mods/acme/b/aws/0.1.0/main.tf': 'output "o" { value = 1 }\n',
      'new/main.tf': 'output "o" { value = 2 }\n',
    });
    expect((await runCli(['build', '--json'], dir)).code).toBe(0);
    expect((await runCli(['deprecate', 'acme/a/aws', '1.0.0', '--reason', 'use 1.1'], dir)).code).toBe(0);
    const dist = join(dir, 'dist');
    const summaries = asFormat1(dist);
    expect((await runCli(['verify'], dir)).code).toBe(0);
    const kept = Object.entries(treeOf(dist)).filter(([rel]) => rel.endsWith('.tar.gz') || rel.startsWith('v1/modules/acme/a/'));

    const published = await runCli(
      ['publish', '--source', 'new', '--namespace', 'acme', '--name', 'b', '--provider', 'aws', '--version', '0.2.0', '--json'],
      dir,
    );
    expect(published.code, published.stderr).toBe(0);
    const upgraded = mirrorManifest(dist);
    expect(upgraded).toMatchObject({ format: 3, base_url: '' });
    expect(readJson(join(dist, 'manifest.json')).modules).toBeUndefined();
    expect(readdirSync(join(dist, 'state/acme')).sort()).toEqual(['a.aws.json', 'b.aws.json']);
    expect(upgraded.modules['acme/a/aws'].latest).toEqual(summaries[0]);
    expect(upgraded.modules['acme/b/aws'].latest).toMatchObject({ id: 'acme/b/aws/0.2.0' });
    expect(upgraded.modules['acme/a/aws'].versions.find((v: { version: string }) => v.version === '1.0.0').deprecation).toEqual({
      reason: 'use 1.1',
      link: null,
    });
    // The whole-mirror files each module's state replaces are gone.
    for (const file of ['search-index.json', 'versions-index.json', 'deprecations.json']) expect(existsSync(join(dist, file)), file).toBe(false);
    const now = treeOf(dist);
    for (const [rel, sha] of kept) expect(now[rel], rel).toBe(sha);
    expect((await runCli(['verify'], dir)).code).toBe(0);
  });
});
