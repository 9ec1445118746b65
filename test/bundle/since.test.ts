// `bundle --since` of a git module's history through the CLI: one new
// version published (and an old one deprecated) after the receiver's
// manifest was taken. The bundle carries the new version and the shared
// documents and lists the old versions' details as derived (a bundle from an
// earlier modmirror also listed kept files); unbundle makes the receiver byte for byte
// the sender's mirror, or refuses, changing nothing, when the receiver does
// not hold what the bundle leaves out. Format 1 bundles are still read, and a
// full bundle is still a tree `tar xzf` unpacks.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { entriesOf, packEntries } from './tar-entries.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeRepo, mirrorLeftovers, runCli, tempDir, treeOf, writeFiles, copyTruth } from '../helpers.js';

const dir = tempDir('mm-since-');
const repo = join(dir, 'terraform-aws-net');
const dist = join(dir, 'dist');
/** The mirror as the receiver has it: built before the new version. */
const snapshot = join(dir, 'snapshot');
const sinceBundle = join(dir, 'since.tar.gz');
const fullBundle = join(dir, 'full.tar.gz');
const KEY = 'acme/net/aws';

/** Text that compresses like prose, different for each seed: READMEs the size real ones have. */
function prose(seed: number, words: number): string {
  const vocabulary = ['subnet', 'route', 'table', 'gateway', 'vpc', 'cidr', 'nat', 'flow', 'log', 'endpoint', 'peering', 'tags', 'ipv6', 'dhcp', 'acl'];
  let x = seed;
  const out: string[] = [];
  for (let i = 0; i < words; i++) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    out.push(vocabulary[x % vocabulary.length]! + (x % 7 === 0 ? '.\n' : ''));
  }
  return out.join(' ');
}

function release(n: number): Record<string, string> {
  return {
    'main.tf': `variable "size" {\n  default = ${n}\n}\nresource "null_resource" "r${n}" {}\n`,
    'README.md': `# Net\n\n${prose(n, 4000)}\n`,
    'examples/simple/main.tf': 'module "net" {\n  source = "../.."\n}\n',
    'examples/simple/README.md': `# Simple\n\n${prose(100, 2000)}\n`,
  };
}

/** A fresh receiver: a copy of the snapshot, named `name`. */
function receiver(name: string): string {
  const target = join(dir, name);
  cpSync(snapshot, target, { recursive: true });
  return target;
}

beforeAll(async () => {
  makeRepo(repo, [
    { date: '2024-01-01T00:00:00Z', files: release(1), tags: ['v1.0.0'] },
    { date: '2024-02-01T00:00:00Z', files: release(2), tags: ['v1.1.0'] },
    // Same README as 1.1.0: one rendering for both.
    { date: '2024-03-01T00:00:00Z', files: { 'main.tf': 'variable "size" {\n  default = 3\n}\n' }, tags: ['v1.2.0'] },
  ]);
  writeFiles(dir, { 'mirror.config.yaml': 'sources:\n  - git: terraform-aws-net\n    namespace: acme\n' });
  expect((await runCli(['build'], dir)).code).toBe(0);
  cpSync(dist, snapshot, { recursive: true, dereference: true });
  copyTruth(dist, join(dir, 'base'));

  makeRepo(repo, [{ date: '2024-04-01T00:00:00Z', files: release(4), tags: ['v1.3.0'] }]);
  expect((await runCli(['publish', '--git', 'terraform-aws-net', '--ref', 'v1.3.0'], dir)).code).toBe(0);
  // A change to an old version's detail besides `versions`: carried as that detail's own value.
  expect((await runCli(['deprecate', KEY, '1.0.0', '--reason', 'use 1.3', '--mirror', 'dist'], dir)).code).toBe(0);

  const made = await runCli(['bundle', '--out', sinceBundle, '--since', 'base'], dir);
  expect(made.stderr).toBe('');
  expect(made.code).toBe(0);
  expect(made.stdout).toMatch(
    /1 new or changed version\(s\); 3 archive\(s\) left out that the base has; 3 file\(s\) the receiver rebuilds, checked by unbundle/,
  );
  expect((await runCli(['bundle', '--out', fullBundle], dir)).code).toBe(0);
}, 60_000);

describe('a --since bundle of one new version', () => {
  it("leaves out the old versions' details and archives, and lists the details", async () => {
    const entries = await entriesOf(sinceBundle);
    const paths = entries.map(([path]) => path);
    const old = ['1.0.0', '1.1.0', '1.2.0'];
    for (const version of old) {
      expect(paths).not.toContain(`v1/modules/${KEY}/${version}/index.json`);
      expect(paths).not.toContain(`v1/modules/${KEY}/${version}/net-aws-${version}.tar.gz`);
    }
    expect(paths).toContain(`v1/modules/${KEY}/1.3.0/net-aws-1.3.0.tar.gz`);
    expect(paths).toContain(`v1/modules/${KEY}/1.3.0/index.json`);
    // The module's own detail is its latest version's, byte for byte: carried once, listed as a copy.
    expect(paths).not.toContain(`v1/modules/${KEY}/index.json`);

    const listed = JSON.parse(entries[0]![1].toString()) as {
      format: number;
      derived: { path: string; values: Record<string, unknown> }[];
      kept?: unknown;
      copies: { path: string; from: string }[];
    };
    expect(listed.format).toBe(2);
    expect(listed.copies.map(({ path, from }) => ({ path, from }))).toContainEqual({
      path: `v1/modules/${KEY}/index.json`,
      from: `v1/modules/${KEY}/1.3.0/index.json`,
    });
    // Any file with the bytes of one carried before it (here also the listings, alike with one module).
    for (const { path, from } of listed.copies) {
      expect(paths).not.toContain(path);
      expect(readFileSync(join(dist, path)).equals(readFileSync(join(dist, from)))).toBe(true);
    }
    expect(listed.derived.map((d) => d.path).sort()).toEqual(old.map((v) => `v1/modules/${KEY}/${v}/index.json`));
    expect(listed.derived.find((d) => d.path.includes('/1.0.0/'))!.values.deprecation).toEqual({ reason: 'use 1.3', link: null });
    expect(listed.kept).toBeUndefined();
    // Smaller than the full bundle by at least the old archives (gzip does not shrink them again) and then some: the old details.
    const oldArchives = old.reduce((n, v) => n + statSync(join(dist, `v1/modules/${KEY}/${v}/net-aws-${v}.tar.gz`)).size, 0);
    expect(statSync(sinceBundle).size).toBeLessThan(statSync(fullBundle).size - oldArchives);
  });

  it("makes the receiver byte for byte the sender's mirror, and verify accepts it", async () => {
    const inside = receiver('inside');
    const r = await runCli(['unbundle', sinceBundle, '--mirror', inside], dir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/1 new version\(s\); the mirror has 4 versions of 1 modules/);
    expect(treeOf(inside)).toEqual(treeOf(dist));
    expect((await runCli(['verify', '--mirror', inside], dir)).code).toBe(0);
    expect(await mirrorLeftovers(dir, 'inside')).toEqual([]);
  });

  async function refused(inside: string, message: RegExp): Promise<void> {
    const before = treeOf(inside);
    const r = await runCli(['unbundle', sinceBundle, '--mirror', inside], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toMatch(
      /Nothing was changed\.\nhint: Make a full bundle \(without --since\), or a --since bundle from this mirror's current manifest\.json\./,
    );
    expect(treeOf(inside)).toEqual(before);
    expect(await mirrorLeftovers(dir, inside.slice(dir.length + 1))).toEqual([]);
  }

  it('is refused, changing nothing, by a receiver whose old detail differs by one byte', async () => {
    const inside = receiver('detail-differs');
    const detail = join(inside, `v1/modules/${KEY}/1.1.0/index.json`);
    writeFileSync(detail, readFileSync(detail, 'utf8').replace('# Net', '# Nat'));
    await refused(
      inside,
      new RegExp(
        `leaves out files .* should have but does not: v1/modules/${KEY}/1\\.1\\.0/index\\.json differs \\(sha256 [0-9a-f]{12}\\.\\.\\., the sender's is [0-9a-f]{12}\\.\\.\\.\\)`,
      ),
    );
  });

  it('checks the files an earlier --since bundle lists as kept: each must be here byte for byte', async () => {
    // modmirror before the page rendered READMEs itself listed a version's README files as kept.
    const [head, ...rest] = await entriesOf(sinceBundle);
    const listed = JSON.parse(head![1].toString()) as Record<string, unknown>;
    const keptFile = 'browse/readme/old.json';
    const content = Buffer.from('{"":"x"}\n');
    const kept = { path: keptFile, sha256: createHash('sha256').update(content).digest('hex'), size: content.length };
    const earlier = join(dir, 'earlier.tar.gz');
    await packEntries(earlier, [['modmirror-bundle.json', Buffer.from(JSON.stringify({ ...listed, kept: [kept] }))], ...rest]);

    const lacking = receiver('kept-missing');
    const before = treeOf(lacking);
    const refusedRun = await runCli(['unbundle', earlier, '--mirror', lacking], dir);
    expect(refusedRun.code).toBe(1);
    expect(refusedRun.stderr).toMatch(/should have but does not: browse\/readme\/old\.json is missing/);
    expect(treeOf(lacking)).toEqual(before);

    const holding = receiver('kept-present');
    writeFiles(holding, { [keptFile]: content.toString() });
    const r = await runCli(['unbundle', earlier, '--mirror', holding], dir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    // Kept as it was; the next write of the mirror drops the legacy folder (test/publish.test.ts).
    expect(treeOf(holding)).toEqual({ ...treeOf(dist), [keptFile]: createHash('sha256').update(content).digest('hex') });
  });
});

describe('older and full bundles', () => {
  it('unbundles a format-1 bundle, full or --since, as before', async () => {
    const [head, ...rest] = await entriesOf(fullBundle);
    const listed = JSON.parse(head![1].toString()) as { format: number; kept?: unknown; base?: unknown; files: { path: string }[] };
    expect(listed.kept).toBeUndefined();
    const full1 = join(dir, 'full1.tar.gz');
    await packEntries(full1, [['modmirror-bundle.json', Buffer.from(JSON.stringify({ ...listed, format: 1 }))], ...rest]);
    const fresh = join(dir, 'fresh');
    expect((await runCli(['unbundle', full1, '--mirror', fresh], dir)).code).toBe(0);
    expect(treeOf(fresh)).toEqual(treeOf(dist));

    // Format 1 --since: every file but the archives the base has.
    const baseArchives = ['1.0.0', '1.1.0', '1.2.0'].map((v) => `v1/modules/${KEY}/${v}/net-aws-${v}.tar.gz`);
    const since1 = join(dir, 'since1.tar.gz');
    const files = listed.files.filter((f) => !baseArchives.includes(f.path));
    const body = { ...listed, format: 1, base: { sha256: 'ab'.repeat(32), versions: 3 }, files };
    await packEntries(since1, [['modmirror-bundle.json', Buffer.from(JSON.stringify(body))], ...rest.filter(([path]) => !baseArchives.includes(path))]);
    const inside = receiver('inside-format1');
    const r = await runCli(['unbundle', since1, '--mirror', inside], dir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(treeOf(inside)).toEqual(treeOf(dist));
  });

  it('is still a whole mirror that tar xzf unpacks', () => {
    const unpacked = join(dir, 'unpacked');
    mkdirSync(unpacked);
    execFileSync('tar', ['xzf', fullBundle, '-C', unpacked]);
    rmSync(join(unpacked, 'modmirror-bundle.json'));
    expect(treeOf(unpacked)).toEqual(treeOf(dist));
  });
});
