// Reads one version's files into memory, leaving out what a module archive
// never holds: .git, .terraform and whatever .terraformignore lists.

import fg from 'fast-glob';
import ignore from 'ignore';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Parser, type ReadEntry } from 'tar';
import { MirrorError } from '../errors.js';
import type { SourceFile, VersionSource } from '../types.js';
import { git } from './git.js';

const ALWAYS_EXCLUDED = ['.git/', '.terraform/'];

export async function readVersionFiles(source: VersionSource): Promise<SourceFile[]> {
  try {
    const files = source.origin.kind === 'folder' ? await readFolder(source.origin.dir) : await readGitTree(source.origin.gitDir, source.origin.tree);
    return applyIgnoreRules(files);
  } catch (error) {
    throw new MirrorError('VERSION_READ_FAILED', `Could not read ${source.label}: ${(error as Error).message}`, { cause: error });
  }
}

async function readFolder(dir: string): Promise<SourceFile[]> {
  const entries = await fg('**/*', { cwd: dir, dot: true, onlyFiles: true, stats: true, ignore: ['**/.git/**', '**/.terraform/**'] });
  return Promise.all(
    entries.map(async (entry) => ({ path: entry.path, mode: entry.stats!.mode & 0o777, data: await readFile(join(dir, entry.path)) })),
  );
}

/** `git archive` of the version's tree, parsed in memory. */
async function readGitTree(gitDir: string, tree: string): Promise<SourceFile[]> {
  const tarball = await git(['archive', '--format=tar', tree], { cwd: gitDir });
  const files: SourceFile[] = [];
  await new Promise<void>((resolve, reject) => {
    const parser = new Parser({
      onReadEntry: (entry: ReadEntry) => {
        if (entry.type !== 'File') {
          entry.resume();
          return;
        }
        const chunks: Buffer[] = [];
        entry.on('data', (chunk: Buffer) => chunks.push(chunk));
        entry.on('end', () => files.push({ path: entry.path, mode: (entry.mode ?? 0o644) & 0o777, data: Buffer.concat(chunks) }));
      },
    });
    parser.on('error', reject);
    parser.on('end', () => resolve());
    parser.end(tarball);
  });
  return files;
}

function applyIgnoreRules(files: SourceFile[]): SourceFile[] {
  const rules = ignore().add(ALWAYS_EXCLUDED);
  const terraformignore = files.find((f) => f.path === '.terraformignore');
  if (terraformignore) rules.add(terraformignore.data.toString('utf8'));
  return files.filter((f) => !rules.ignores(f.path));
}
