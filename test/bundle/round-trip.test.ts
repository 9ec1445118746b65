// bundle and unbundle through the CLI: a full bundle and a --since bundle
// make the inside mirror equal to the outside one; a damaged, truncated,
// tampered or mismatched bundle is refused and changes nothing.

import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { entriesOf, packEntries } from './tar-entries.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { mirrorLeftovers, runCli, tempDir, writeFiles, treeOf, mirrorManifest, copyTruth } from '../helpers.js';

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

/** Leftovers of a writer beside a mirror: staging or old folders, or its lock. */
const leftovers = mirrorLeftovers;

const outside = tempDir('mm-outside-');
const inside = tempDir('mm-inside-');
const dist = join(outside, 'dist');
const mirror = join(inside, 'mirror');

beforeAll(async () => {
  writeFiles(outside, {
    'mirror.config.yaml': 'sources:\n  - folder: mods\n',
    'mods/acme/net/aws/1.0.0/main.tf': 'variable "a" {}\n',
    'mods/acme/net/aws/1.1.0/main.tf': 'variable "b" {}\n',
    'mods/beta/dns/google/0.1.0/main.tf': 'variable "c" {}\n',
  });
  expect((await runCli(['build'], outside)).code).toBe(0);
});

describe('a full bundle', () => {
  it('carries the mirror in: the inside becomes the same tree, byte for byte', async () => {
    const made = await runCli(['bundle', '--out', 'full.tar.gz'], outside);
    expect(made.stderr).toBe('');
    expect(made.code).toBe(0);
    expect(made.stdout).toMatch(/Wrote full\.tar\.gz: \d+ files, 3 version\(s\)/);
    // The printed sha256 is the bundle's, to check the copy on the medium.
    expect(made.stdout).toContain(`sha256 ${sha256(join(outside, 'full.tar.gz'))}`);
    const names = (await entriesOf(join(outside, 'full.tar.gz'))).map(([path]) => path);
    expect(names[0]).toBe('modmirror-bundle.json');

    const r = await runCli(['unbundle', join(outside, 'full.tar.gz'), '--mirror', 'mirror'], inside);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/3 new version\(s\); the mirror has 3 versions of 2 modules/);
    expect(treeOf(mirror)).toEqual(treeOf(dist));
    expect((await runCli(['verify', '--mirror', 'mirror'], inside)).code).toBe(0);
    expect(await leftovers(inside, 'mirror')).toEqual([]);
  });
});

describe('a --since bundle', () => {
  it('carries only the new archives, and the indexes that make the inside equal to the outside', async () => {
    copyTruth(mirror, join(outside, 'base'));
    writeFiles(outside, {
      'mods/acme/net/aws/1.2.0/main.tf': 'variable "new" {}\n',
      // Metadata changes too: the documents come along whole.
      'mirror.config.yaml': 'sources:\n  - folder: mods\nmodules:\n  beta/dns/google: { owner: dns-team, description: "Now described" }\n',
    });
    expect((await runCli(['build'], outside)).code).toBe(0);
    const made = await runCli(['bundle', '--out', 'delta.tar.gz', '--since', 'base'], outside);
    expect(made.code).toBe(0);
    expect(made.stdout).toMatch(/1 new or changed version\(s\); 3 archive\(s\) left out that the base has/);
    const archives = (await entriesOf(join(outside, 'delta.tar.gz'))).map(([p]) => p).filter((p) => p.endsWith('.tar.gz'));
    expect(archives).toEqual(['v1/modules/acme/net/aws/1.2.0/net-aws-1.2.0.tar.gz']);

    const r = await runCli(['unbundle', join(outside, 'delta.tar.gz'), '--mirror', 'mirror'], inside);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/1 new version\(s\); the mirror has 4 versions/);
    expect(treeOf(mirror)).toEqual(treeOf(dist));
    expect(JSON.parse(readFileSync(join(mirror, 'v1/modules/beta/dns/google/index.json'), 'utf8')).owner).toBe('dns-team');
    expect(await leftovers(inside, 'mirror')).toEqual([]);

    // Unbundling it again changes nothing and succeeds.
    expect((await runCli(['unbundle', join(outside, 'delta.tar.gz'), '--mirror', 'mirror'], inside)).code).toBe(0);
    expect(treeOf(mirror)).toEqual(treeOf(dist));
  });

  it('is refused by a mirror that lacks versions its base had, changing nothing', async () => {
    // A fresh inside mirror from the first full bundle has 1.0.0 and 1.1.0 but not 1.2.0 ...
    const other = join(inside, 'other');
    expect((await runCli(['unbundle', join(outside, 'full.tar.gz'), '--mirror', 'other'], inside)).code).toBe(0);
    // ... while this bundle's base already had 1.2.0, so its archive is left out.
    copyTruth(dist, join(outside, 'base2'));
    writeFiles(outside, { 'mods/acme/net/aws/1.3.0/main.tf': 'variable "newer" {}\n' });
    expect((await runCli(['build'], outside)).code).toBe(0);
    expect((await runCli(['bundle', '--out', 'delta2.tar.gz', '--since', 'base2'], outside)).code).toBe(0);
    const before = treeOf(other);
    const r = await runCli(['unbundle', join(outside, 'delta2.tar.gz'), '--mirror', 'other'], inside);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/was made --since a manifest .* that lists versions .* lacks, so it leaves out their archives: acme\/net\/aws@1\.2\.0/);
    expect(r.stderr).toMatch(/hint: Make the bundle --since this mirror's own manifest\.json/);
    expect(treeOf(other)).toEqual(before);
    expect(await leftovers(inside, 'other')).toEqual([]);
  });

  it('is refused when it would remove versions the inside mirror has', async () => {
    // The inside published a version of its own that the outside never had.
    writeFiles(inside, { 'local/acme/net/aws/9.0.0/main.tf': 'variable "local" {}\n' });
    expect((await runCli(['publish', '--source', 'local/acme/net/aws/9.0.0', '--mirror', 'mirror'], inside)).code).toBe(0);
    expect((await runCli(['bundle', '--out', 'full2.tar.gz'], outside)).code).toBe(0);
    const before = treeOf(mirror);
    const r = await runCli(['unbundle', join(outside, 'full2.tar.gz'), '--mirror', 'mirror'], inside);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/would remove 1 version\(s\) .* acme\/net\/aws@9\.0\.0\. Nothing was changed\./);
    expect(treeOf(mirror)).toEqual(before);
  });
});

describe('a damaged bundle', () => {
  const target = join(inside, 'target');
  let before: Record<string, string>;

  beforeAll(async () => {
    expect((await runCli(['bundle', '--out', 'good.tar.gz'], outside)).code).toBe(0);
    expect((await runCli(['unbundle', join(outside, 'full.tar.gz'), '--mirror', 'target'], inside)).code).toBe(0);
    before = treeOf(target);
  });

  async function refused(bundle: string, message: RegExp): Promise<void> {
    const r = await runCli(['unbundle', bundle, '--mirror', 'target'], inside);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toMatch(/^hint: /m);
    expect(treeOf(target)).toEqual(before);
    expect(await leftovers(inside, 'target')).toEqual([]);
  }

  it('is refused when truncated', async () => {
    const good = readFileSync(join(outside, 'good.tar.gz'));
    const cut = join(inside, 'cut.tar.gz');
    writeFileSync(cut, good.subarray(0, Math.floor(good.length * 0.6)));
    await refused(cut, /unusable: it is truncated/);
  });

  it('is refused when a byte is flipped', async () => {
    const bytes = Buffer.from(readFileSync(join(outside, 'good.tar.gz')));
    bytes[Math.floor(bytes.length / 2)]! ^= 0xff;
    const flipped = join(inside, 'flipped.tar.gz');
    writeFileSync(flipped, bytes);
    await refused(flipped, /The bundle .*flipped\.tar\.gz is unusable/);
  });

  it('is refused when a file does not match its listed sha256, naming the file', async () => {
    const entries = await entriesOf(join(outside, 'good.tar.gz'));
    const tampered = entries.map(([path, data]): [string, Buffer] => [
      path,
      path.endsWith('/versions') ? Buffer.from(data.toString().replace('1.0.0', '6.6.6')) : data,
    ]);
    const file = join(inside, 'tampered.tar.gz');
    await packEntries(file, tampered);
    await refused(file, /v1\/modules\/acme\/net\/aws\/versions is damaged: sha256 [0-9a-f]{64} \(\d+ bytes\), its list says/);
  });

  it('is refused when an entry is missing, extra, or points outside the mirror', async () => {
    const entries = await entriesOf(join(outside, 'good.tar.gz'));
    const missing = join(inside, 'missing.tar.gz');
    await packEntries(
      missing,
      entries.filter(([path]) => !path.endsWith('.tar.gz')),
    );
    await refused(missing, /it lacks \d+ listed file\(s\)/);

    const extra = join(inside, 'extra.tar.gz');
    await packEntries(extra, [...entries, ['v1/modules/sneaky', Buffer.from('{}')]]);
    await refused(extra, /holds a file v1\/modules\/sneaky that its list does not name/);

    const [head, ...rest] = entries;
    const manifest = JSON.parse(head![1].toString()) as { files: { path: string; sha256: string; size: number }[] };
    const evil = Buffer.from('owned\n');
    manifest.files.push({ path: '../escaped', sha256: createHash('sha256').update(evil).digest('hex'), size: evil.length });
    const traversal = join(inside, 'traversal.tar.gz');
    await packEntries(traversal, [['modmirror-bundle.json', Buffer.from(JSON.stringify(manifest))], ...rest, ['../escaped', evil]]);
    await refused(traversal, /has an unusable file entry .*\.\.\/escaped/);
    expect(existsSync(join(inside, 'escaped'))).toBe(false);
  });

  it('is refused, saying nothing was changed, when a path cannot be written here (too long a name, a file where a folder goes)', async () => {
    const entries = await entriesOf(join(outside, 'good.tar.gz'));
    const [head, ...rest] = entries;
    const withFiles = async (name: string, added: [string, Buffer][]) => {
      const manifest = JSON.parse(head![1].toString()) as { files: { path: string; sha256: string; size: number }[] };
      for (const [path, data] of added) manifest.files.push({ path, sha256: createHash('sha256').update(data).digest('hex'), size: data.length });
      const file = join(inside, name);
      await packEntries(file, [['modmirror-bundle.json', Buffer.from(JSON.stringify(manifest))], ...rest, ...added]);
      return file;
    };
    const text = Buffer.from('{}\n');
    await refused(
      await withFiles('long.tar.gz', [[`extra/${'x'.repeat(300)}.json`, text]]),
      /holds extra\/x+\.json, which cannot be written here \(ENAMETOOLONG\)\. Nothing was changed\./,
    );
    await refused(
      await withFiles('clash.tar.gz', [
        ['extra/clash', text],
        ['extra/clash/inner.json', text],
      ]),
      /holds extra\/clash\/inner\.json, which cannot be written here \((EEXIST|ENOTDIR)\)\. Nothing was changed\./,
    );
  });

  it('is refused when it is not a bundle at all, and a non-mirror folder is never replaced', async () => {
    const plain = join(inside, 'plain.tar.gz');
    await packEntries(plain, [['main.tf', Buffer.from('variable "x" {}\n')]]);
    await refused(plain, /its first entry is main\.tf, not modmirror-bundle\.json/);

    writeFiles(inside, { 'notamirror/keep.txt': 'mine\n' });
    const r = await runCli(['unbundle', join(outside, 'good.tar.gz'), '--mirror', 'notamirror'], inside);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/is not empty and holds no modmirror mirror/);
    expect(readFileSync(join(inside, 'notamirror/keep.txt'), 'utf8')).toBe('mine\n');
  });
});

describe('a removal made on purpose outside', () => {
  it('travels in the bundle: the inside removes what the outside pruned, and nothing else', async () => {
    const out = tempDir('mm-prune-out-');
    const into = tempDir('mm-prune-in-');
    writeFiles(out, {
      'mirror.config.yaml': 'sources:\n  - folder: mods\n',
      'mods/acme/net/aws/1.0.0/main.tf': 'variable "a" {}\n',
      'mods/acme/net/aws/1.1.0/main.tf': 'variable "b" {}\n',
    });
    expect((await runCli(['build'], out)).code).toBe(0);
    expect((await runCli(['bundle', '--out', 'one.tar.gz'], out)).code).toBe(0);
    expect((await runCli(['unbundle', join(out, 'one.tar.gz'), '--mirror', 'mirror'], into)).code).toBe(0);

    rmSync(join(out, 'mods/acme/net/aws/1.0.0'), { recursive: true });
    // Without --prune the outside keeps 1.0.0, and so would a bundle of it.
    expect((await runCli(['build', '--prune'], out)).code).toBe(0);
    expect((await runCli(['bundle', '--out', 'two.tar.gz'], out)).code).toBe(0);
    const r = await runCli(['unbundle', join(out, 'two.tar.gz'), '--mirror', 'mirror'], into);
    expect(r.code, r.stderr).toBe(0);
    expect(treeOf(join(into, 'mirror'))).toEqual(treeOf(join(out, 'dist')));
    expect(mirrorManifest(join(into, 'mirror')).removed).toEqual([expect.objectContaining({ module: 'acme/net/aws', version: '1.0.0' })]);
  });
});
