// Reading one version's files (src/scan/files.ts, src/scan/git-objects.ts):
// a git tree and a folder give the same regular files, paths, modes and
// bytes, without .git, .terraform and what .terraformignore lists.

import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readVersionFiles } from '../../src/scan/files.js';
import { GitReaders, readTreeFiles } from '../../src/scan/git-objects.js';
import { DEFAULT_LIMITS } from '../../src/config/limits.js';
import { isHeld, type SourceFile, type VersionFile, type VersionSource } from '../../src/types.js';
import { git, makeRepo, tempDir, writeFiles } from '../helpers.js';

// Both answer `{ files, ... }` beside their symlinks (readTreeFiles: `links`;
// readVersionFiles: `warnings`, see test/scan/links.test.ts and
// test/history.test.ts); these tests are about the regular files.
type FilesAnswer = { files: VersionFile[] };
/** Small files, all held in memory (large ones: test/scan/large.test.ts). */
const filesOf = (answer: FilesAnswer): SourceFile[] => answer.files.filter(isHeld);

/** Path, mode and text of each file, sorted by path: what a module archive is made of. */
const listing = (answer: FilesAnswer) =>
  filesOf(answer)
    .map((f) => ({ path: f.path, mode: f.mode, text: f.data.toString('utf8') }))
    .sort((a, b) => (a.path < b.path ? -1 : 1));

const MODULE = {
  'main.tf': 'variable "a" {}\n',
  'modules/nat/main.tf': 'resource "aws_nat_gateway" "this" {}\n',
  'modules/nat/deep/er/x.tf': '# deep\n',
  'scripts/setup.sh': '#!/bin/sh\necho hi\n',
  '.terraformignore': '*.tfvars\ntest/\n',
  'secret.tfvars': 'password = "hunter2"\n',
  'test/main_test.go': 'package test\n',
  '.terraform/providers/x': 'cached provider\n',
};

const EXPECTED = [
  { path: '.terraformignore', mode: 0o644, text: '*.tfvars\ntest/\n' },
  { path: 'main.tf', mode: 0o644, text: 'variable "a" {}\n' },
  { path: 'modules/nat/deep/er/x.tf', mode: 0o644, text: '# deep\n' },
  { path: 'modules/nat/main.tf', mode: 0o644, text: 'resource "aws_nat_gateway" "this" {}\n' },
  { path: 'scripts/setup.sh', mode: 0o755, text: '#!/bin/sh\necho hi\n' },
];

const readers = new GitReaders();
afterAll(() => readers.closeAll());

function moduleRepo(): { repo: string; tree: string } {
  const repo = makeRepo(join(tempDir(), 'repo'), [{ date: '2024-01-01T00:00:00Z', files: MODULE, tags: ['v1.0.0'] }]);
  // makeRepo commits everything, .terraform/ too: a repository that does so must not leak it into an archive.
  git(repo, ['update-index', '--chmod=+x', 'scripts/setup.sh']);
  git(repo, ['commit', '-q', '-m', 'executable script']);
  return { repo, tree: git(repo, ['rev-parse', 'HEAD^{tree}']).trim() };
}

function version(origin: VersionSource['origin']): VersionSource {
  return {
    address: { namespace: 'acme', name: 'vpc', provider: 'aws' },
    meta: { owner: '', description: '', source: '', verified: false },
    version: '1.0.0',
    tag: 'v1.0.0',
    publishedAt: new Date(0),
    origin,
    fingerprint: 'test',
    label: 'test@v1.0.0',
  };
}

describe('readTreeFiles', () => {
  it("reads every regular file of a tree and its subtrees, with the executable bit and git's blob id", async () => {
    const { repo, tree } = moduleRepo();
    const files = filesOf(await readTreeFiles(readers.get(repo), tree));
    expect(files.map((f) => f.path).sort()).toEqual(['.terraform/providers/x', ...Object.keys(MODULE).filter((p) => !p.startsWith('.terraform/'))].sort());
    const script = files.find((f) => f.path === 'scripts/setup.sh')!;
    expect(script.mode).toBe(0o755);
    expect(script.id).toBe(git(repo, ['rev-parse', 'HEAD:scripts/setup.sh']).trim());
    expect(script.data.toString('utf8')).toBe(MODULE['scripts/setup.sh']);
  });

  it('leaves out a submodule, which is another repository and not a module file', async () => {
    const { repo } = moduleRepo();
    const inner = makeRepo(join(tempDir(), 'inner'), [{ date: '2024-01-01T00:00:00Z', files: { 'x.tf': '' } }]);
    git(repo, ['-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', inner, 'vendor/inner']);
    git(repo, ['commit', '-q', '-m', 'submodule']);
    const tree = git(repo, ['rev-parse', 'HEAD^{tree}']).trim();
    const paths = filesOf(await readTreeFiles(readers.get(repo), tree)).map((f) => f.path);
    expect(paths).toContain('.gitmodules');
    expect(paths.filter((p) => p.startsWith('vendor/'))).toEqual([]);
  });

  it('fails naming the object when the tree is not in the repository', async () => {
    const { repo } = moduleRepo();
    await expect(readTreeFiles(readers.get(repo), '0'.repeat(40))).rejects.toThrow(`git object ${'0'.repeat(40)} is missing from ${repo}`);
  });
});

describe('readVersionFiles', () => {
  it('gives a git tree its module files: no .terraform, nothing .terraformignore lists', async () => {
    const { repo, tree } = moduleRepo();
    const commit = git(repo, ['rev-parse', 'HEAD']).trim();
    const answer = await readVersionFiles(version({ kind: 'git', gitDir: repo, commit, tree, subdir: '' }), readers, DEFAULT_LIMITS);
    expect(listing(answer)).toEqual(EXPECTED);
  });

  it('gives a folder the same files as the git tree of the same content', async () => {
    const dir = tempDir();
    writeFiles(dir, { ...MODULE, '.git/HEAD': 'ref: refs/heads/main\n' });
    chmodSync(join(dir, 'scripts/setup.sh'), 0o755);
    const answer = await readVersionFiles(version({ kind: 'folder', dir }), readers, DEFAULT_LIMITS);
    expect(listing(answer)).toEqual(EXPECTED);
  });

  it('names the version it could not read', async () => {
    const { repo } = moduleRepo();
    const source = { ...version({ kind: 'git', gitDir: repo, commit: '0'.repeat(40), tree: '1'.repeat(40), subdir: '' }), label: 'repo@v9.9.9' };
    await expect(readVersionFiles(source, readers, DEFAULT_LIMITS)).rejects.toMatchObject({
      code: 'VERSION_READ_FAILED',
      message: `Could not read repo@v9.9.9: git object ${'1'.repeat(40)} is missing from ${repo}`,
    });
  });
});
