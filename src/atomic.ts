// Atomic file writes: a reader or a crash sees the old file or the new one,
// never a torn or empty file.

import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';

export async function writeFileAtomic(file: string, data: string | Buffer): Promise<void> {
  const temp = join(dirname(file), `.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'w', 0o644);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(temp, { force: true });
    throw error;
  }
  await handle.close();
  await rename(temp, file);
  // The rename itself is durable only once the folder is synced.
  const dir = await open(dirname(file), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}
