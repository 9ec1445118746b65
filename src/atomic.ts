// Atomic file writes: a reader or a crash sees the old file or the new one,
// never a torn or empty file. Every write that replaces a file in place goes
// through here: a temp file beside it, fsync, rename, fsync of the folder.

import { randomBytes } from 'node:crypto';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { open, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export function writeFileAtomic(file: string, data: string | Buffer): Promise<void> {
  return writeFileAtomicWith(file, (temp) => writeFile(temp, data, { mode: 0o644 }));
}

/**
 * `writeTemp` writes the temp file its own way (a buffer, or a stream pipeline
 * for content too large to hold, such as a bundle); it is then fsynced and
 * renamed into place, so an interrupted write never looks finished.
 */
export async function writeFileAtomicWith(file: string, writeTemp: (temp: string) => Promise<void>): Promise<void> {
  const temp = tempBeside(file);
  try {
    await writeTemp(temp);
    const handle = await open(temp, 'r+');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    await commit(temp, file);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

/**
 * For caches: never torn, but not fsynced, so a crash may lose the newest
 * entry (it is made again). Synchronous: the build writes thousands of small
 * files, and writeFileSync costs a tenth of fs.promises.writeFile each.
 */
export function replaceFileSync(file: string, data: string | Buffer): void {
  const temp = tempBeside(file);
  try {
    writeFileSync(temp, data);
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

/** A hidden, unique name in the same folder, so the rename stays on one file system. */
function tempBeside(file: string): string {
  return join(dirname(file), `.${basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
}

async function commit(temp: string, file: string): Promise<void> {
  await rename(temp, file);
  // The rename itself is durable only once the folder is synced.
  const dir = await open(dirname(file), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}
