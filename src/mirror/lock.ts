// One writer at a time per mirror: build and publish hold `<out>.lock`, a
// file created exclusively. A lock whose process is gone (same host) or that
// is older than the stale age is taken over, so a killed pipeline never
// blocks the next one for long.

import { hostname } from 'node:os';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { crashPoint } from './crash.js';
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

export async function withLock<T>(outDir: string, fn: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const file = `${outDir}.lock`;
  const waitMs = options.waitMs ?? 10 * 60_000;
  const staleMs = options.staleMs ?? 30 * 60_000;
  const deadline = Date.now() + waitMs;
  const mine: LockInfo = { pid: process.pid, host: hostname(), created: Date.now() };
  await mkdir(dirname(file), { recursive: true });
  for (let delay = 25; ; delay = Math.min(delay * 2, 1000)) {
    try {
      await writeFile(file, JSON.stringify(mine), { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = await readLock(file);
    if (holder === 'gone') continue;
    if (holder === 'unreadable' ? await olderThan(file, UNREADABLE_GRACE_MS) : isStale(holder, staleMs)) {
      // Remove only the lock we judged stale; if another writer replaced it meanwhile, the next round sees theirs.
      if (JSON.stringify(holder) === JSON.stringify(await readLock(file))) await rm(file, { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      const who = holder === 'unreadable' ? 'Another modmirror' : `Another modmirror (pid ${holder.pid} on ${holder.host})`;
      throw new MirrorError('LOCK_BUSY', `${who} is writing ${outDir}; gave up waiting.`, {
        hint: `If no such process runs, delete ${file}.`,
      });
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
  crashPoint('locked');
  try {
    return await fn();
  } finally {
    await rm(file, { force: true });
  }
}

/** A lock file just created is empty for a moment; only an old unreadable one is abandoned. */
const UNREADABLE_GRACE_MS = 5000;

async function readLock(file: string): Promise<LockInfo | 'unreadable' | 'gone'> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return 'gone';
  }
  try {
    const info = JSON.parse(text) as LockInfo;
    return typeof info.pid === 'number' ? info : 'unreadable';
  } catch {
    return 'unreadable';
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
