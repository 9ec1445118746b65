// Placing a synced version in the module folder atomically: its files are
// fetched into a scratch folder beside the target, checked, and renamed into
// place, so the build never reads half a version. Scratch folders start with
// a dot, which the build's folder scan skips; ones left by a killed sync are
// removed by the next.

import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm, utimes } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { isProcessAlive } from '../processes.js';

const SCRATCH = /^\..+\.partial-(\d+)$/;

/**
 * Runs `fill` on a fresh scratch folder beside `target`; it returns the
 * folder holding the module, which becomes `target`. 'present' when another
 * sync put the version there first.
 */
export async function storeVersion(
  target: string,
  fill: (scratch: string) => Promise<string>,
  publishedAt: Date | undefined,
): Promise<{ outcome: 'stored' | 'present'; files: number }> {
  const scratch = join(dirname(target), `.${basename(target)}.partial-${process.pid}`);
  await rm(scratch, { recursive: true, force: true });
  await mkdir(scratch, { recursive: true });
  try {
    const root = await fill(scratch);
    const files = await listFiles(root);
    // The build dates a folder version by its newest file: give it the upstream's publication date.
    if (publishedAt) await Promise.all(files.map((f) => utimes(f, publishedAt, publishedAt)));
    if (existsSync(target)) return { outcome: 'present', files: files.length };
    try {
      await rename(root, target);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if ((code === 'ENOTEMPTY' || code === 'EEXIST') && existsSync(target)) return { outcome: 'present', files: files.length };
      throw error;
    }
    return { outcome: 'stored', files: files.length };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** Removes scratch folders in `dir` whose sync process is gone. */
export async function removeAbandoned(dir: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    const pid = SCRATCH.exec(name)?.[1];
    // A scratch folder named after this process is from an earlier run that had its pid.
    if (pid !== undefined && (Number(pid) === process.pid || !isProcessAlive(Number(pid)))) await rm(join(dir, name), { recursive: true, force: true });
  }
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}
