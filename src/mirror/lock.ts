// One writer at a time per mirror: build and publish hold `<out>.lock`, a
// folder with one file in it named for its holder. A lock whose process is
// gone (same host) or that is older than the stale age is taken over, so a
// killed pipeline never blocks the next one for long.
//
// Both steps are single renames and removals that the file system does whole,
// so writers that find a dead writer's lock at once never both get in:
// - taking: a writer prepares its own lock beside the mirror
//   (`.<out>.lock-PID-ID`, its file written) and renames it to `<out>.lock`,
//   which succeeds only where there is none or an empty one: the lock is
//   taken whole, by one writer, never seen half made;
// - taking over: a writer removes the stale holder's file, a name only that
//   holder has, so of the writers that judged it stale one removes it, and
//   none removes the lock of a writer that took it meanwhile (as removing the
//   lock by its path, after checking whose it is, could: two holders). The
//   folder left empty is then free to take.

import { hostname } from 'node:os';
import { mkdir, readdir, readFile, rename, rm, rmdir, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { crashPoint } from './crash.js';
import { uniqueId } from './home.js';
import { MirrorError } from '../errors.js';
import { isProcessAlive } from '../processes.js';

export interface LockOptions {
  /** How long to wait for another writer before giving up. */
  waitMs?: number;
  /** A lock older than this is stale whatever its owner. */
  staleMs?: number;
}

interface LockInfo {
  pid: number;
  host: string;
  created: number;
}

/** The lock's holder: its file (or, from a modmirror before lock folders, the lock file itself) and what it says. */
interface Holder {
  path: string;
  info: LockInfo | 'unreadable';
}

export async function withLock<T>(outDir: string, fn: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const lock = `${outDir}.lock`;
  const waitMs = options.waitMs ?? 10 * 60_000;
  const staleMs = options.staleMs ?? 30 * 60_000;
  const deadline = Date.now() + waitMs;
  const name = uniqueId();
  const mine = join(dirname(lock), `.${basename(lock)}-${name}`);
  try {
    await prepare(mine, name);
    // Waiters look often (a look is a rename and a readdir) and at random instants, so writers started together
    // do not retry together: each gets in soon after the one before it lets go.
    for (let delay = 25; ; delay = Math.min(delay * 2, 250)) {
      try {
        await rename(mine, lock);
        break;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? '';
        // Ours, removed by a writer on another host that shares the folder and took its pid for a dead one here.
        if (code === 'ENOENT') {
          await prepare(mine, name);
          continue;
        }
        // Another writer's lock (a folder with its file; a lock file, from a modmirror before lock folders).
        if (!['ENOTEMPTY', 'EEXIST', 'ENOTDIR'].includes(code)) throw error;
      }
      const holder = await readHolder(lock);
      if (holder === 'gone') continue;
      const stale = holder.info === 'unreadable' ? await olderThan(holder.path, UNREADABLE_GRACE_MS) : isStale(holder.info, staleMs);
      // The holder's own file: gone already when another writer took over first, and a lock folder in its place
      // (a lock file's taken over) refuses unlink. Removed, the lock is free to take at once.
      if (
        stale &&
        (await unlink(holder.path).then(
          () => true,
          () => false,
        ))
      )
        continue;
      if (Date.now() > deadline) {
        const who = holder.info === 'unreadable' ? 'Another modmirror' : `Another modmirror (pid ${holder.info.pid} on ${holder.info.host})`;
        throw new MirrorError('LOCK_BUSY', `${who} is writing ${outDir}; gave up waiting.`, {
          hint: `If no such process runs, delete ${lock} (rm -r).`,
        });
      }
      await new Promise((resolve) => setTimeout(resolve, delay * (0.5 + Math.random())));
    }
  } catch (error) {
    await rm(mine, { recursive: true, force: true });
    throw error;
  }
  crashPoint('locked');
  try {
    await removeAbandoned(lock);
    return await fn();
  } finally {
    await rm(join(lock, name), { force: true });
    // Empty now, unless the next writer has already renamed its lock over it.
    await rmdir(lock).catch(() => {});
  }
}

/** This writer's lock, made beside the mirror, ready to be renamed into place. */
async function prepare(mine: string, name: string): Promise<void> {
  for (;;) {
    await mkdir(mine, { recursive: true });
    try {
      await writeFile(join(mine, name), JSON.stringify({ pid: process.pid, host: hostname(), created: Date.now() } satisfies LockInfo));
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
}

/** A lock file from a modmirror before lock folders is empty for a moment; only an old unreadable one is abandoned. */
const UNREADABLE_GRACE_MS = 5000;

async function readHolder(lock: string): Promise<Holder | 'gone'> {
  let path: string;
  try {
    const names = await readdir(lock);
    // An empty folder is a lock let go: the next rename takes it.
    if (names.length === 0) return 'gone';
    path = join(lock, names[0]!);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return 'gone';
    if (code !== 'ENOTDIR') throw error;
    path = lock;
  }
  const info = await readInfo(path);
  return info === undefined ? 'gone' : { path, info };
}

/** What a holder's file says; undefined when it is gone (let go of, or taken over). */
async function readInfo(file: string): Promise<LockInfo | 'unreadable' | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : 'unreadable';
  }
  try {
    const info = JSON.parse(text) as LockInfo;
    return typeof info.pid === 'number' ? info : 'unreadable';
  } catch {
    return 'unreadable';
  }
}

/**
 * Under the lock: the locks that writers killed while waiting had prepared, on this host (another
 * host's processes cannot be looked at; its leftovers stay until removed by hand).
 */
async function removeAbandoned(lock: string): Promise<void> {
  const prefix = `.${basename(lock)}-`;
  for (const name of await readdir(dirname(lock))) {
    if (!name.startsWith(prefix)) continue;
    const prepared = join(dirname(lock), name);
    const id = name.slice(prefix.length);
    const info = await readInfo(join(prepared, id));
    // Killed before its file was written whole, the folder still names its pid (uniqueId's first part). A live
    // writer elsewhere with that pid that meets its folder gone prepares it again.
    const pid = Number(id.split('-')[0]);
    const dead =
      info === undefined || info === 'unreadable'
        ? (Number.isInteger(pid) && pid > 0 && !isProcessAlive(pid)) || (await olderThan(prepared, UNREADABLE_GRACE_MS))
        : info.host === hostname() && !isProcessAlive(info.pid);
    if (dead) await rm(prepared, { recursive: true, force: true });
  }
}

async function olderThan(file: string, ms: number): Promise<boolean> {
  try {
    return Date.now() - (await stat(file)).mtimeMs > ms;
  } catch {
    return false;
  }
}

function isStale(lock: LockInfo, staleMs: number): boolean {
  if (Date.now() - lock.created > staleMs) return true;
  if (lock.host !== hostname()) return false;
  return !isProcessAlive(lock.pid);
}
