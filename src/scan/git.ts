// Git repositories whose tags are versions, read with the system `git`.

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { MirrorError } from '../errors.js';
import type { GitSource } from '../config/sources.js';
import type { ModuleMeta, VersionSource } from '../types.js';
import type { GitReaders } from './git-objects.js';
import { readTagScan, tagRefsStamp, writeTagScan, type ScannedTag, type TagScan } from './tag-cache.js';
import { validVersion } from '../version-order.js';

/** Runs git and resolves with its stdout; fails with the command and git's own message. */
export function git(args: string[], options: { cwd?: string; input?: string } = {}): Promise<Buffer> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('git', args, { cwd: options.cwd, stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout!.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr!.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', (error) =>
      reject(new MirrorError('GIT_FAILED', `Could not run git: ${error.message}`, { hint: 'Install git and make sure it is on PATH.', cause: error })),
    );
    child.on('close', (code) => {
      if (code === 0) resolvePromise(Buffer.concat(out));
      else {
        const message = Buffer.concat(err).toString('utf8').trim();
        reject(new MirrorError('GIT_FAILED', `git ${args.join(' ')} failed (exit ${code}): ${message}`));
      }
    });
    if (child.stdin) {
      // A git that fails early closes its stdin; the exit code reports that, not EPIPE.
      child.stdin.on('error', () => {});
      child.stdin.end(options.input);
    }
  });
}

/**
 * A local repository is read in place; a clone URL is mirrored into the cache
 * folder once and fetched on later builds.
 */
export async function localGitDir(source: GitSource, cacheDir: string): Promise<string> {
  if (!source.remote) return source.repo;
  const dir = join(cacheDir, 'git', `${createHash('sha256').update(source.repo).digest('hex').slice(0, 16)}.git`);
  if (existsSync(dir)) {
    await git(['fetch', '--prune', '--tags', '--force', 'origin'], { cwd: dir });
  } else {
    await mkdir(join(cacheDir, 'git'), { recursive: true });
    await git(['clone', '--mirror', '--quiet', source.repo, dir]);
  }
  return dir;
}

interface TagRef {
  tag: string;
  commit: string;
  committedAt: Date;
}

async function listTags(gitDir: string): Promise<TagRef[]> {
  const format = ['%(refname:strip=2)', '%(objectname)', '%(*objectname)', '%(committerdate:unix)', '%(*committerdate:unix)'].join('%00');
  const out = (await git(['for-each-ref', `--format=${format}`, 'refs/tags'], { cwd: gitDir })).toString('utf8');
  const tags: TagRef[] = [];
  for (const line of out.split('\n')) {
    if (line === '') continue;
    const [tag = '', object = '', peeled = '', date = '', peeledDate = ''] = line.split('\0');
    // Annotated tags point at a tag object; the commit and its date are the peeled ones.
    const commitDate = peeled !== '' ? peeledDate : date;
    if (commitDate === '') continue; // a tag of a tree or blob: not a version
    tags.push({ tag, commit: peeled !== '' ? peeled : object, committedAt: new Date(Number(commitDate) * 1000) });
  }
  return tags;
}

/** Tree ids of `<commit>:<path>` for many commits in one git call; undefined where the path is missing. */
async function treesAt(gitDir: string, commits: string[], path: string): Promise<(string | undefined)[]> {
  if (commits.length === 0) return [];
  const input = commits.map((c) => (path === '' ? `${c}^{tree}` : `${c}:${path}`)).join('\n') + '\n';
  const out = (await git(['cat-file', '--batch-check=%(objectname) %(objecttype)'], { cwd: gitDir, input })).toString('utf8');
  return out
    .split('\n')
    .slice(0, commits.length)
    .map((line) => {
      const [id, type] = line.split(' ');
      return type === 'tree' ? id : undefined;
    });
}

/** Version of a tag: prefix removed, matched by the pattern (first group, else whole match), valid semver. */
export function versionFromTag(tag: string, prefix: string, pattern: RegExp): string | undefined {
  if (!tag.startsWith(prefix)) return undefined;
  const match = pattern.exec(tag.slice(prefix.length));
  if (!match) return undefined;
  const candidate = match[1] ?? match[0];
  return validVersion(candidate) ?? undefined;
}

export async function scanGit(source: GitSource, meta: ModuleMeta, cacheDir: string, warn: (message: string) => void): Promise<VersionSource[]> {
  const gitDir = await localGitDir(source, cacheDir);
  const key = JSON.stringify([gitDir, source.path, source.tagPrefix, source.tagPattern.source]);
  const stamp = source.remote ? undefined : tagRefsStamp(gitDir);
  let scan = stamp === undefined ? undefined : readTagScan(cacheDir, key, stamp);
  if (!scan) {
    scan = await scanTags(source, gitDir);
    if (stamp !== undefined) await writeTagScan(cacheDir, key, stamp, scan);
  }
  scan.warnings.forEach(warn);
  return scan.tags.map((t) => ({
    address: source.address,
    meta,
    version: t.version,
    tag: t.tag,
    publishedAt: new Date(t.committedAt),
    origin: { kind: 'git', gitDir, commit: t.commit, tree: t.tree, subdir: source.path },
    fingerprint: `git:${t.tree}`,
    label: `${source.repo}@${t.tag}`,
  }));
}

async function scanTags(source: GitSource, gitDir: string): Promise<TagScan> {
  const warnings: string[] = [];
  const refs = (await listTags(gitDir)).filter((ref) => ref.tag.startsWith(source.tagPrefix));
  const found: { ref: TagRef; version: string }[] = [];
  for (const ref of refs) {
    const version = versionFromTag(ref.tag, source.tagPrefix, source.tagPattern);
    if (version === undefined) warnings.push(`${source.repo}: skipping tag "${ref.tag}": not a semver version`);
    else found.push({ ref, version });
  }
  const trees = await treesAt(
    gitDir,
    found.map((f) => f.ref.commit),
    source.path,
  );
  const tags: ScannedTag[] = [];
  found.forEach(({ ref, version }, i) => {
    const tree = trees[i];
    if (tree === undefined) warnings.push(`${source.repo}: skipping tag "${ref.tag}": it has no folder "${source.path}"`);
    else tags.push({ tag: ref.tag, version, commit: ref.commit, tree, committedAt: ref.committedAt.toISOString() });
  });
  return { tags, warnings };
}

/** One ref of a repository as a version (publish): the ref's commit, its module folder's tree and its date. */
export async function scanGitRef(
  source: GitSource,
  meta: ModuleMeta,
  ref: string,
  version: string | undefined,
  cacheDir: string,
  readers: GitReaders,
): Promise<VersionSource> {
  const gitDir = await localGitDir(source, cacheDir);
  // Through the reader the version is then built with: a publish starts no git process of its own for the ref.
  const reader = readers.get(gitDir);
  const found = await reader.lookup(`${ref}^{commit}`);
  const commit = found?.data && commitFields(found.data);
  if (!found || !commit)
    throw new MirrorError('SOURCE_NOT_FOUND', `${source.repo} has no commit "${ref}".`, {
      hint: 'Pass --ref with a tag, branch or commit of that repository.',
    });
  const tag = ref.replace(/^refs\/tags\//, '');
  const resolved = version ?? versionFromTag(tag, source.tagPrefix, source.tagPattern);
  if (resolved === undefined) {
    throw new MirrorError('VERSION_INVALID', `"${tag}" is not a version${source.tagPrefix ? ` with the prefix "${source.tagPrefix}"` : ''}.`, {
      hint: 'Pass --version X.Y.Z, or --ref with a version tag such as v1.2.3.',
    });
  }
  const tree = source.path === '' ? commit.tree : await reader.lookup(`${found.oid}:${source.path}`).then((o) => (o?.type === 'tree' ? o.oid : undefined));
  if (tree === undefined) throw new MirrorError('SOURCE_NOT_FOUND', `${source.repo}@${ref} has no folder "${source.path}".`);
  return {
    address: source.address,
    meta,
    version: resolved,
    tag,
    publishedAt: commit.committedAt,
    origin: { kind: 'git', gitDir, commit: found.oid, tree, subdir: source.path },
    label: `${source.repo}@${tag}`,
    fingerprint: `git:${tree}`,
  };
}

/** A commit object's root tree and committer date (what `%T` and `%ct` give). */
function commitFields(data: Buffer): { tree: string; committedAt: Date } | undefined {
  // The headers end at the first empty line; the message after it may hold anything.
  const text = data.toString('utf8').split('\n\n', 1)[0]!;
  const tree = /^tree ([0-9a-f]+)$/m.exec(text)?.[1];
  const seconds = /^committer .* (\d+) [+-]\d{4}$/m.exec(text)?.[1];
  return tree && seconds ? { tree, committedAt: new Date(Number(seconds) * 1000) } : undefined;
}
