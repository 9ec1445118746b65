// Reads one version's files into memory, leaving out what a module archive
// never holds: .git, .terraform and whatever .terraformignore lists. Symbolic
// links inside the tree are replaced by the files they point to (see links.ts).

import ignore from 'ignore';
import type { Stats } from 'node:fs';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { MirrorError } from '../errors.js';
import type { SourceFile, VersionSource } from '../types.js';
import { readTreeFiles, type GitReaders, type TreeEntries } from './git-objects.js';
import { resolveLinks } from './links.js';
import { nameFromBytes } from './names.js';

const ALWAYS_EXCLUDED = ['.git/', '.terraform/'];
/** Left out wherever they are, whether folder, file or link (a worktree's `.git` is a file). */
const NEVER_LISTED = new Set(['.git', '.terraform']);

export interface VersionFiles {
  files: SourceFile[];
  /** Links left out, each naming the link (the caller adds which version). */
  warnings: string[];
  /** Files and links the source holds before .terraformignore and link resolution leave any out. */
  found: number;
}

export async function readVersionFiles(source: VersionSource, git: GitReaders): Promise<VersionFiles> {
  const { origin } = source;
  let entries: TreeEntries;
  try {
    entries = origin.kind === 'folder' ? await readFolder(origin.dir) : await readTreeFiles(git.get(origin.gitDir), origin.tree);
  } catch (error) {
    throw new MirrorError('VERSION_READ_FAILED', `Could not read ${source.label}: ${(error as Error).message}`, { cause: error });
  }
  const rules = ignoreRules(entries.files);
  // An ignored link is not part of the module: no file for it and no warning about it.
  const resolved = resolveLinks(entries.files, entries.links.filter((l) => !rules.ignores(l.path)));
  return {
    files: resolved.files.filter((f) => !rules.ignores(f.path)),
    warnings: resolved.warnings,
    found: entries.files.length + entries.links.length,
  };
}

export interface FolderEntry {
  /** POSIX path relative to the folder (see names.ts for a name that is not UTF-8). */
  path: string;
  /** The entry's own path on disk, as bytes: the only spelling that opens a name that is not UTF-8. */
  location: Buffer;
  stats: Stats;
}

/**
 * A folder version's regular files and symlinks with their own stats (lstat:
 * a link is listed as a link, and a linked folder is not walked into), each
 * folder's entries in the order the file system lists them.
 *
 * Names are read as bytes. Read as strings (fast-glob), a name that is not
 * UTF-8 came back changed, its lstat failed as missing, and the walker
 * dropped the whole folder without a word: an empty archive.
 */
export async function listFolderFiles(dir: string): Promise<FolderEntry[]> {
  const walk = async (location: Buffer, prefix: string): Promise<FolderEntry[]> => {
    const names = (await readdir(location, { encoding: 'buffer' })).filter((name) => !NEVER_LISTED.has(name.toString('latin1')));
    const listed = await Promise.all(
      names.map(async (name) => {
        const at = Buffer.concat([location, SLASH, name]);
        return { path: prefix + nameFromBytes(name), location: at, stats: await lstat(at) };
      }),
    );
    const inside = await Promise.all(listed.filter((e) => e.stats.isDirectory()).map((e) => walk(e.location, `${e.path}/`)));
    return [...listed.filter((e) => e.stats.isFile() || e.stats.isSymbolicLink()), ...inside.flat()];
  };
  return walk(Buffer.from(dir), '');
}

const SLASH = Buffer.from('/');

async function readFolder(dir: string): Promise<TreeEntries> {
  const entries = await listFolderFiles(dir);
  const links = entries.filter((e) => e.stats.isSymbolicLink());
  const regular = entries.filter((e) => !e.stats.isSymbolicLink());
  return {
    files: await Promise.all(regular.map(async (e) => ({ path: e.path, mode: e.stats.mode & 0o777, data: await readFile(e.location) }))),
    links: await Promise.all(links.map(async (e) => ({ path: e.path, target: nameFromBytes(await readlink(e.location, { encoding: 'buffer' })) }))),
  };
}

function ignoreRules(files: SourceFile[]) {
  const rules = ignore().add(ALWAYS_EXCLUDED);
  const terraformignore = files.find((f) => f.path === '.terraformignore');
  if (terraformignore) rules.add(terraformignore.data.toString('utf8'));
  return rules;
}
