// Reads one version's files into memory, leaving out what a module archive
// never holds: .git, .terraform and whatever .terraformignore lists. Symbolic
// links inside the tree are replaced by the files they point to (see links.ts).

import ignore from 'ignore';
import { readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { MirrorError } from '../errors.js';
import type { SourceFile, VersionSource } from '../types.js';
import { readTreeFiles, type GitReaders, type TreeEntries } from './git-objects.js';
import { resolveLinks } from './links.js';

const ALWAYS_EXCLUDED = ['.git/', '.terraform/'];

export interface VersionFiles {
  files: SourceFile[];
  /** Links left out, each naming the link (the caller adds which version). */
  warnings: string[];
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
  };
}

/**
 * A folder version's regular files and symlinks with their own stats (lstat:
 * a link is listed as a link, and a linked folder is not walked into).
 */
export async function listFolderFiles(dir: string) {
  const { default: fg } = await import('fast-glob'); // loaded only for folder sources: a git publish starts faster without it
  const entries = await fg('**/*', { cwd: dir, dot: true, onlyFiles: false, followSymbolicLinks: false, stats: true, ignore: ['**/.git/**', '**/.terraform/**'] });
  return entries.filter((e) => e.stats!.isFile() || e.stats!.isSymbolicLink());
}

async function readFolder(dir: string): Promise<TreeEntries> {
  const entries = await listFolderFiles(dir);
  const links = entries.filter((e) => e.stats!.isSymbolicLink());
  const regular = entries.filter((e) => !e.stats!.isSymbolicLink());
  return {
    files: await Promise.all(regular.map(async (e) => ({ path: e.path, mode: e.stats!.mode & 0o777, data: await readFile(join(dir, e.path)) }))),
    links: await Promise.all(links.map(async (e) => ({ path: e.path, target: await readlink(join(dir, e.path)) }))),
  };
}

function ignoreRules(files: SourceFile[]) {
  const rules = ignore().add(ALWAYS_EXCLUDED);
  const terraformignore = files.find((f) => f.path === '.terraformignore');
  if (terraformignore) rules.add(terraformignore.data.toString('utf8'));
  return rules;
}
