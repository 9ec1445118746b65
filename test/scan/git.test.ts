// Tags as versions (src/scan/git.ts): which tags are versions and what
// version each names, read from real repositories made here: lightweight and
// annotated tags, a monorepo prefix and folder, and the tags a build skips.

import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_TAG_PATTERN, type GitSource } from '../../src/config/sources.js';
import { scanGit, scanGitRef, versionFromTag } from '../../src/scan/git.js';
import { GitReaders } from '../../src/scan/git-objects.js';
import type { ModuleMeta } from '../../src/types.js';
import { git, makeRepo, tempDir } from '../helpers.js';

const DEFAULT_PATTERN = new RegExp(DEFAULT_TAG_PATTERN);
const META: ModuleMeta = { owner: '', description: '', source: '', verified: false };

function gitSource(repo: string, options: Partial<GitSource> = {}): GitSource {
  return {
    kind: 'git',
    repo,
    remote: false,
    address: { namespace: 'acme', name: 'vpc', provider: 'aws' },
    path: '',
    tagPrefix: '',
    tagPattern: DEFAULT_PATTERN,
    meta: {},
    ...options,
  };
}

/** Scans with a fresh tag cache, returning versions and warnings together. */
async function scanTagsOf(source: GitSource, cacheDir = tempDir('mm-tagcache-')) {
  const warnings: string[] = [];
  const versions = await scanGit(source, META, cacheDir, (w) => warnings.push(w));
  return { versions, warnings };
}

describe('versionFromTag', () => {
  it('takes the version with or without a leading v, keeping a pre-release', () => {
    expect(versionFromTag('v1.2.3', '', DEFAULT_PATTERN)).toBe('1.2.3');
    expect(versionFromTag('1.2.3', '', DEFAULT_PATTERN)).toBe('1.2.3');
    expect(versionFromTag('v2.0.0-rc.1', '', DEFAULT_PATTERN)).toBe('2.0.0-rc.1');
  });

  it('drops build metadata, as semver ignores it for ordering (README, Release pipelines)', () => {
    expect(versionFromTag('v1.0.0+build.7', '', DEFAULT_PATTERN)).toBe('1.0.0');
  });

  it('refuses tags that are not a whole semver version', () => {
    for (const tag of ['v1.2', 'latest', 'v1.2.3.4', 'release-1.2.3', 'v01.2.3', 'x1.2.3', '']) {
      expect(versionFromTag(tag, '', DEFAULT_PATTERN), tag).toBeUndefined();
    }
  });

  it('removes the prefix first, and refuses a tag without it', () => {
    expect(versionFromTag('modules/vpc/v1.4.0', 'modules/vpc/', DEFAULT_PATTERN)).toBe('1.4.0');
    expect(versionFromTag('v1.4.0', 'modules/vpc/', DEFAULT_PATTERN)).toBeUndefined();
    expect(versionFromTag('modules/dns/v1.4.0', 'modules/vpc/', DEFAULT_PATTERN)).toBeUndefined();
  });

  it('takes the first group of a custom pattern, else its whole match, and still requires semver', () => {
    expect(versionFromTag('release-3.1.0', '', /^release-(.+)$/)).toBe('3.1.0');
    expect(versionFromTag('3.1.0', '', /^\d+\.\d+\.\d+$/)).toBe('3.1.0');
    expect(versionFromTag('release-3.1', '', /^release-(.+)$/)).toBeUndefined();
    expect(versionFromTag('v3.1.0', '', /^release-(.+)$/)).toBeUndefined();
  });
});

describe('scanGit', () => {
  it('lists lightweight and annotated tags with their commit, tree and commit date, and warns about the rest by name', async () => {
    const repo = makeRepo(join(tempDir(), 'repo'), [
      { date: '2024-01-01T00:00:00Z', files: { 'main.tf': 'variable "a" {}\n' }, tags: ['v1.0.0', 'nightly'] },
      // An annotated tag made later than its commit: the commit's date is the version's.
      { date: '2024-02-01T00:00:00Z', files: { 'main.tf': 'variable "b" {}\n' }, tags: ['v1.1.0'], annotated: true },
      { date: '2024-03-01T00:00:00Z', files: { 'main.tf': 'variable "c" {}\n' }, tags: ['2.0.0-beta.1', 'v2'] },
    ]);
    // A tag of a blob names no commit, so no version: skipped without a warning.
    git(repo, ['tag', 'blob-tag', git(repo, ['rev-parse', 'HEAD:main.tf']).trim()]);

    const { versions, warnings } = await scanTagsOf(gitSource(repo));

    const byVersion = Object.fromEntries(versions.map((v) => [v.version, v]));
    expect(Object.keys(byVersion).sort()).toEqual(['1.0.0', '1.1.0', '2.0.0-beta.1']);
    expect(versions.map((v) => v.tag).sort()).toEqual(['2.0.0-beta.1', 'v1.0.0', 'v1.1.0']);
    expect(warnings.sort()).toEqual([`${repo}: skipping tag "nightly": not a semver version`, `${repo}: skipping tag "v2": not a semver version`]);

    const v110 = byVersion['1.1.0']!;
    const commit = git(repo, ['rev-parse', 'v1.1.0^{commit}']).trim();
    const tree = git(repo, ['rev-parse', 'v1.1.0^{tree}']).trim();
    expect(v110.origin).toEqual({ kind: 'git', gitDir: repo, commit, tree, subdir: '' });
    expect(v110.publishedAt.toISOString()).toBe('2024-02-01T00:00:00.000Z');
    expect(v110.fingerprint).toBe(`git:${tree}`);
    expect(v110.label).toBe(`${repo}@v1.1.0`);
    expect(v110.address).toEqual({ namespace: 'acme', name: 'vpc', provider: 'aws' });
  });

  it("reads a monorepo: only tags with the prefix, the module folder's tree, and a warning for a tag without the folder", async () => {
    const repo = makeRepo(join(tempDir(), 'platform'), [
      { date: '2024-01-01T00:00:00Z', files: { 'README.md': 'no modules yet\n' }, tags: ['vpc/v0.1.0'] },
      {
        date: '2024-01-02T00:00:00Z',
        files: { 'modules/vpc/main.tf': 'variable "a" {}\n', 'modules/dns/main.tf': '' },
        tags: ['vpc/v1.0.0', 'dns/v1.0.0', 'v9.0.0'],
      },
    ]);

    const { versions, warnings } = await scanTagsOf(gitSource(repo, { path: 'modules/vpc', tagPrefix: 'vpc/' }));

    expect(versions.map((v) => [v.tag, v.version])).toEqual([['vpc/v1.0.0', '1.0.0']]);
    expect(versions[0]!.origin).toMatchObject({ subdir: 'modules/vpc', tree: git(repo, ['rev-parse', 'vpc/v1.0.0:modules/vpc']).trim() });
    expect(warnings).toEqual([`${repo}: skipping tag "vpc/v0.1.0": it has no folder "modules/vpc"`]);
  });

  it('sees a tag added after an earlier scan was cached', async () => {
    const repo = makeRepo(join(tempDir(), 'repo'), [{ date: '2024-01-01T00:00:00Z', files: { 'main.tf': '' }, tags: ['v1.0.0'] }]);
    const cacheDir = tempDir('mm-tagcache-');
    const first = await scanTagsOf(gitSource(repo), cacheDir);
    expect(first.versions.map((v) => v.version)).toEqual(['1.0.0']);

    git(repo, ['tag', 'v1.0.1']);
    const second = await scanTagsOf(gitSource(repo), cacheDir);
    expect(second.versions.map((v) => v.version).sort()).toEqual(['1.0.0', '1.0.1']);
  });

  it('answers an unchanged repository from the tag cache, without starting git', async () => {
    const repo = makeRepo(join(tempDir(), 'repo'), [{ date: '2024-01-01T00:00:00Z', files: { 'main.tf': '' }, tags: ['v1.0.0'] }]);
    const cacheDir = tempDir('mm-tagcache-');
    const first = await scanTagsOf(gitSource(repo), cacheDir);
    const path = process.env['PATH'];
    process.env['PATH'] = ''; // any git process would now fail to start
    try {
      expect(await scanTagsOf(gitSource(repo), cacheDir)).toEqual(first);
    } finally {
      process.env['PATH'] = path;
    }
  });

  it('repeats the warnings of a cached scan, so a no-op build still says which tags it skips', async () => {
    const repo = makeRepo(join(tempDir(), 'repo'), [{ date: '2024-01-01T00:00:00Z', files: { 'main.tf': '' }, tags: ['v1.0.0', 'nightly'] }]);
    const cacheDir = tempDir('mm-tagcache-');
    const first = await scanTagsOf(gitSource(repo), cacheDir);
    const second = await scanTagsOf(gitSource(repo), cacheDir);
    expect(second).toEqual(first);
    expect(second.warnings).toEqual([`${repo}: skipping tag "nightly": not a semver version`]);
  });
});

describe('scanGitRef', () => {
  const repo = makeRepo(join(tempDir(), 'repo'), [
    { date: '2024-05-01T12:00:00Z', files: { 'modules/vpc/main.tf': '' }, tags: ['vpc/v1.2.0', 'candidate'] },
    { date: '2024-06-02T08:30:00Z', files: { 'modules/vpc/main.tf': 'variable "a" {}\n' }, tags: ['vpc/v1.3.0'], annotated: true },
    { date: '2024-07-03T09:00:00Z', remove: ['modules/vpc/main.tf'], files: { 'README.md': 'moved\n' }, tags: ['vpc/v2.0.0'] },
  ]);
  const source = gitSource(repo, { path: 'modules/vpc', tagPrefix: 'vpc/' });
  const readers = new GitReaders();
  afterAll(() => readers.closeAll());

  it("takes the version from the ref's tag, or from --version for any other ref", async () => {
    const tagged = await scanGitRef(source, META, 'vpc/v1.2.0', undefined, tempDir(), readers);
    expect([tagged.version, tagged.tag, tagged.publishedAt.toISOString()]).toEqual(['1.2.0', 'vpc/v1.2.0', '2024-05-01T12:00:00.000Z']);
    expect(tagged.origin).toMatchObject({
      subdir: 'modules/vpc',
      tree: git(repo, ['rev-parse', 'vpc/v1.2.0:modules/vpc']).trim(),
      commit: git(repo, ['rev-parse', 'vpc/v1.2.0']).trim(),
    });
    expect((await scanGitRef(source, META, 'candidate', '1.3.0-rc.1', tempDir(), readers)).version).toBe('1.3.0-rc.1');
  });

  it('peels an annotated tag to its commit, and takes a branch or a commit id with --version', async () => {
    const annotated = await scanGitRef(source, META, 'refs/tags/vpc/v1.3.0', undefined, tempDir(), readers);
    const commit = git(repo, ['rev-parse', 'vpc/v1.3.0^{commit}']).trim();
    expect(annotated).toMatchObject({
      version: '1.3.0',
      tag: 'vpc/v1.3.0',
      origin: { commit, tree: git(repo, ['rev-parse', `${commit}:modules/vpc`]).trim() },
    });
    expect(annotated.publishedAt.toISOString()).toBe('2024-06-02T08:30:00.000Z');
    const root = await scanGitRef(gitSource(repo), META, commit, '1.3.0', tempDir(), readers);
    expect(root.origin).toMatchObject({ commit, tree: git(repo, ['rev-parse', `${commit}^{tree}`]).trim(), subdir: '' });
    expect((await scanGitRef(gitSource(repo), META, 'main', '2.0.0', tempDir(), readers)).origin).toMatchObject({
      commit: git(repo, ['rev-parse', 'main']).trim(),
    });
  });

  it("refuses a ref that names no version, a ref that does not exist, and a commit without the module's folder", async () => {
    await expect(scanGitRef(source, META, 'candidate', undefined, tempDir(), readers)).rejects.toMatchObject({
      code: 'VERSION_INVALID',
      message: '"candidate" is not a version with the prefix "vpc/".',
    });
    await expect(scanGitRef(source, META, 'no-such-ref', undefined, tempDir(), readers)).rejects.toMatchObject({ code: 'SOURCE_NOT_FOUND' });
    await expect(scanGitRef(source, META, 'vpc/v2.0.0', undefined, tempDir(), readers)).rejects.toMatchObject({
      code: 'SOURCE_NOT_FOUND',
      message: `${repo}@vpc/v2.0.0 has no folder "modules/vpc".`,
    });
    // A ref of two lines would be two requests to the one cat-file the version is then read through.
    await expect(scanGitRef(source, META, 'vpc/v1.2.0\nvpc/v1.3.0', undefined, tempDir(), readers)).rejects.toMatchObject({ code: 'SOURCE_NOT_FOUND' });
    // The reader is still in step after those answers.
    expect((await scanGitRef(source, META, 'vpc/v1.2.0', undefined, tempDir(), readers)).version).toBe('1.2.0');
  });
});
