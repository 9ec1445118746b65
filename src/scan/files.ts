// Reads one version's files, leaving out what a module archive never holds:
// .git, .terraform and whatever .terraformignore lists. Symbolic links inside
// the tree are replaced by the files they point to (see links.ts). Small files
// are held in memory; large ones are read again when packed (see large.ts).

import ignore from 'ignore';
import type { Stats } from 'node:fs';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { MirrorError } from '../errors.js';
import { isHeld, type SizeLimits, type VersionFile, type VersionSource } from '../types.js';
import { readTreeFiles, type GitReaders, type TreeEntries } from './git-objects.js';
import { checkSizes, digestLarge, holdBudget, readLarge } from './large.js';
import { resolveLinks } from './links.js';
import { nameFromBytes } from './names.js';

const ALWAYS_EXCLUDED = ['.git/', '.terraform/'];
/** Left out wherever they are, whether folder, file or link (a worktree's `.git` is a file). */
const NEVER_LISTED = new Set(['.git', '.terraform']);

export interface VersionFiles {
  /** Each large file with its `id`, the sha1 of its bytes when the source gave none. */
  files: VersionFile[];
  /** Links left out, each naming the link (the caller adds which version). */
  warnings: string[];
  /** Files and links the source holds before .terraformignore and link resolution leave any out. */
  found: number;
}

/** Throws FILE_TOO_LARGE or VERSION_TOO_LARGE when what the archive would hold is over `limits`. */
export async function readVersionFiles(source: VersionSource, git: GitReaders, limits: SizeLimits): Promise<VersionFiles> {
  const { origin } = source;
  let entries: TreeEntries;
  try {
    entries = origin.kind === 'folder' ? await readFolder(origin.dir) : await readTreeFiles(git.get(origin.gitDir), origin.tree);
  } catch (error) {
    throw new MirrorError('VERSION_READ_FAILED', `Could not read ${source.label}: ${(error as Error).message}`, { cause: error });
  }
  const rules = await ignoreRules(entries.files);
  // An ignored link is not part of the module: no file for it and no warning about it.
  const resolved = resolveLinks(
    entries.files,
    entries.links.filter((l) => !rules.ignores(l.path)),
  );
  const files = resolved.files.filter((f) => !rules.ignores(f.path));
  checkSizes(source.label, files, limits);
  return {
    files: await Promise.all(files.map(async (f) => (isHeld(f) || f.id !== undefined ? f : { ...f, id: await digestLarge(f.source) }))),
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
  const hold = holdBudget();
  const file = async ({ path, location, stats }: FolderEntry): Promise<VersionFile> => {
    const mode = stats.mode & 0o777;
    return hold(stats.size) ? { path, mode, data: await readFile(location) } : { path, mode, size: stats.size, source: { kind: 'disk', location } };
  };
  return {
    files: await Promise.all(regular.map(file)),
    links: await Promise.all(links.map(async (e) => ({ path: e.path, target: nameFromBytes(await readlink(e.location, { encoding: 'buffer' })) }))),
  };
}

async function ignoreRules(files: VersionFile[]) {
  const rules = ignore().add(ALWAYS_EXCLUDED);
  const terraformignore = files.find((f) => f.path === '.terraformignore');
  if (terraformignore) rules.add((isHeld(terraformignore) ? terraformignore.data : await readLarge(terraformignore.source)).toString('utf8'));
  return rules;
}
