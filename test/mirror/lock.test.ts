// The mirror's lock: one writer at a time, also when several writers find the
// lock of one that was killed and take it over at once.

import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { withLock } from '../../src/mirror/lock.js';
import { mirrorLeftovers, runCli, tempDir, writeFiles } from '../helpers.js';

/**
 * Writers that start at once and give up at the first live holder, each holding the lock a moment: how many got in,
 * and how many held it at the same time, at most. Giving up at once keeps a round short, so there are many.
 */
async function takeOver(outDir: string, writers: number): Promise<{ entered: number; most: number }> {
  let inside = 0;
  let most = 0;
  let entered = 0;
  const hold = async () => {
    entered++;
    most = Math.max(most, ++inside);
    await new Promise((r) => setTimeout(r, 40));
    inside--;
  };
  await Promise.all(
    Array.from({ length: writers }, () => withLock(outDir, hold, { waitMs: 0 }).catch((error: { code?: string }) => expect(error.code).toBe('LOCK_BUSY'))),
  );
  return { entered, most };
}

/** Rounds of writers taking over the lock `leave` leaves beside `dir`/dist; a lost lock shows in a few percent of them. */
async function rounds(dir: string, count: number, leave: () => void): Promise<void> {
  const lost: string[] = [];
  for (let round = 1; round <= count; round++) {
    leave();
    const { entered, most } = await takeOver(join(dir, 'dist'), 4);
    // One gets in; another may follow once it has let go (a writer slow to give up), never while it holds the lock.
    if (entered === 0 || most > 1) lost.push(`round ${round}: ${entered} got in, ${most} at once`);
  }
  expect(lost).toEqual([]);
  expect(await mirrorLeftovers(dir)).toEqual([]);
}

it('lets one writer in when several take over the lock of a publish that was killed, at once', async () => {
  const dir = tempDir();
  writeFiles(join(dir, 'mods/acme/m/aws/1.0.0'), { 'main.tf': 'variable "a" {}\n' });
  expect((await runCli(['build', '--modules', 'mods'], dir)).code).toBe(0);
  // Killed (SIGKILL) once it holds the lock, a publish leaves it behind, its process gone; each round starts from a copy.
  const killed = await runCli(['publish', '--source', 'mods/acme/m/aws/1.0.0'], dir, { MODMIRROR_CRASH_AT: 'locked' });
  expect(killed.code).not.toBe(0);
  cpSync(join(dir, 'dist.lock'), join(dir, 'left.lock'), { recursive: true });
  await rounds(dir, 80, () => {
    rmSync(join(dir, 'dist.lock'), { recursive: true, force: true });
    cpSync(join(dir, 'left.lock'), join(dir, 'dist.lock'), { recursive: true });
  });
});

it('takes over the lock file an older modmirror left, one writer at once', async () => {
  const dir = tempDir();
  const gone = spawnSync(process.execPath, ['-e', '']).pid;
  await rounds(dir, 30, () => writeFileSync(join(dir, 'dist.lock'), JSON.stringify({ pid: gone, host: hostname(), created: Date.now() })));
});

it('removes the locks writers killed while preparing them left, before or while their file was written', async () => {
  const dir = tempDir();
  const gone = spawnSync(process.execPath, ['-e', '']).pid;
  // What writers killed while preparing leave, in folders named for their pid: no file yet, an empty one, half of one.
  mkdirSync(join(dir, `.dist.lock-${gone}-0badc0de`));
  writeFiles(join(dir, `.dist.lock-${gone}-0badc0df`), { [`${gone}-0badc0df`]: '' });
  writeFiles(join(dir, `.dist.lock-${gone}-0badc0e0`), { [`${gone}-0badc0e0`]: '{"pid":' });
  let held = false;
  await withLock(join(dir, 'dist'), async () => {
    held = true;
  });
  expect(held).toBe(true);
  expect(await mirrorLeftovers(dir)).toEqual([]);
});
