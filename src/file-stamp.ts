// A file's identity and version as the file system sees it: what the server
// compares to notice that a build, a publish or another process replaced a
// file (manifest.json, a data file) without reading it again.

import { statSync } from 'node:fs';

/** Inode, modification time and size; undefined when the file is missing. A rename-in-place changes the inode. */
export function fileStamp(file: string): string | undefined {
  try {
    // A missing file is common (optional data files, looked at on every request): no exception for it.
    const s = statSync(file, { throwIfNoEntry: false });
    return s && `${s.ino}:${s.mtimeMs}:${s.size}`;
  } catch {
    return undefined;
  }
}

/** Same device and inode: two paths that are hard links to one file. */
export function sameFile(a: string, b: string): boolean {
  try {
    const x = statSync(a, { bigint: true });
    const y = statSync(b, { bigint: true });
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

/**
 * How long one look at such a file stands: less than any writer takes
 * between replacing it and returning (a CLI command still exits; a script's
 * `mv` exits before its next command starts), so a request sent after a
 * write returned is answered from what it wrote, while under load one look
 * (a stat) serves many requests.
 */
const LOOK_STANDS_MS = 1;

/** Paces the looks at files another process may replace. */
export class Looks {
  private lookedAt = -Infinity;

  /** True when the last look no longer stands: look now. */
  due(): boolean {
    const now = performance.now();
    if (now - this.lookedAt < LOOK_STANDS_MS) return false;
    this.lookedAt = now;
    return true;
  }

  /** This process just replaced the files: the next call is due. */
  again(): void {
    this.lookedAt = -Infinity;
  }
}
