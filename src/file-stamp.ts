// A file's identity and version as the file system sees it: what the server
// compares to notice that a build, a publish or another process replaced a
// file (manifest.json, a data file) without reading it again.

import { statSync } from 'node:fs';

/** Inode, modification time and size; undefined when the file is missing. A rename-in-place changes the inode. */
export function fileStamp(file: string): string | undefined {
  try {
    const s = statSync(file);
    return `${s.ino}:${s.mtimeMs}:${s.size}`;
  } catch {
    return undefined;
  }
}
