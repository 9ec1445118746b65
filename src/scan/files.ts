// Reads one version's files into memory, leaving out what a module archive
// never holds: .git, .terraform and whatever .terraformignore lists.

import ignore from 'ignore';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MirrorError } from '../errors.js';
import type { SourceFile, VersionSource } from '../types.js';
import { readTreeFiles, type GitReaders } from './git-objects.js';

const ALWAYS_EXCLUDED = ['.git/', '.terraform/'];

export async function readVersionFiles(source: VersionSource, git: GitReaders): Promise<SourceFile[]> {
  const { origin } = source;
  try {
    const files = origin.kind === 'folder' ? await readFolder(origin.dir) : await readTreeFiles(git.get(origin.gitDir), origin.tree);
    return applyIgnoreRules(files);
  } catch (error) {
    throw new MirrorError('VERSION_READ_FAILED', `Could not read ${source.label}: ${(error as Error).message}`, { cause: error });
  }
}

/** A folder version's files with their stats (not yet filtered by .terraformignore). */
export async function listFolderFiles(dir: string) {
  const { default: fg } = await import('fast-glob'); // loaded only for folder sources: a git publish starts faster without it
  return fg('**/*', { cwd: dir, dot: true, onlyFiles: true, stats: true, ignore: ['**/.git/**', '**/.terraform/**'] });
}

async function readFolder(dir: string): Promise<SourceFile[]> {
  const entries = await listFolderFiles(dir);
  return Promise.all(
    entries.map(async (entry) => ({ path: entry.path, mode: entry.stats!.mode & 0o777, data: await readFile(join(dir, entry.path)) })),
  );
}

function applyIgnoreRules(files: SourceFile[]): SourceFile[] {
  const rules = ignore().add(ALWAYS_EXCLUDED);
  const terraformignore = files.find((f) => f.path === '.terraformignore');
  if (terraformignore) rules.add(terraformignore.data.toString('utf8'));
  return files.filter((f) => !rules.ignores(f.path));
}
