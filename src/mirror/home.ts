// Where a mirror lives on disk. The path users name (`dist`) is a symbolic
// link to a generation folder beside it (`.dist.gen-ID`). A build fills a
// new generation and then renames a new link over `dist`: rename(2) replaces
// a link atomically, so at every instant `dist` is the old mirror or the new
// one, whole, for modmirror and for any file host that follows links (nginx,
// sirv). A folder cannot be replaced that way (rename refuses a non-empty
// target), which is why the mirror is not the folder itself. A writer that
// changes a few files (publish) changes the live generation in place, file
// by file in a safe order, under a journal (delta.ts).
//
// Siblings of `dist` (all hidden, all in the same parent, so every move is a rename):
//   .dist.gen-ID           a generation: the live one (the link's target), a writer's
//                          new one, or one a writer that died left behind
//   .dist.link-ID          a new link, before it is renamed over `dist`
//   .dist.old-ID           a mirror written before links (a real folder), set aside while
//                          the first write turns `dist` into a link; after a crash there,
//                          the one folder to put back
//   .dist.trash-ID         anything replaced, removed in the background; never put back
//   .dist.delta-ID         a change to the live mirror being gathered, or being applied
//                          under its journal (delta.ts)
//   .dist.lock-ID          a writer's lock, made ready while it waits to rename it to
//                          `dist.lock` (lock.ts)
//   .dist.spare, .dist.spare-tmp-PID
//                          copies that earlier versions of modmirror kept; removed

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, lstatSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import { rename, rm, symlink } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { MirrorError } from '../errors.js';
import { MANIFEST_FILE } from '../protocol/paths.js';
import { crashPoint } from './crash.js';
import { isProcessAlive } from '../processes.js';

export function sibling(outDir: string, suffix: string): string {
  return join(dirname(outDir), `.${basename(outDir)}.${suffix}`);
}

/** Unique among a process's writes and across processes, so a folder still being removed never blocks a rename. */
export function uniqueId(): string {
  return `${process.pid}-${randomBytes(4).toString('hex')}`;
}

/** A folder for the next generation of the mirror at `outDir`. */
export function newGeneration(outDir: string): string {
  return sibling(outDir, `gen-${uniqueId()}`);
}

const isGenerationOf = (outDir: string, target: string) => !target.includes('/') && target.startsWith(`.${basename(outDir)}.gen-`);

/**
 * The path whose link modmirror flips: `outDir` itself, unless it is a link
 * of the user's own (to a mirror kept elsewhere), which is followed to the
 * mirror it names, so the user's link keeps working.
 */
export function homeOf(outDir: string): string {
  let path = resolve(outDir);
  for (let hops = 0; hops < 40; hops++) {
    const target = linkTarget(path);
    if (target === undefined || isGenerationOf(path, target)) return path;
    path = resolve(dirname(path), target);
  }
  return path;
}

function linkTarget(path: string): string | undefined {
  try {
    return lstatSync(path).isSymbolicLink() ? readlinkSync(path) : undefined;
  } catch {
    return undefined;
  }
}

/** The live generation's folder, when `outDir` is a link to one. */
export function liveGeneration(outDir: string): string | undefined {
  const target = linkTarget(outDir);
  return target !== undefined && isGenerationOf(outDir, target) ? join(dirname(outDir), target) : undefined;
}

/**
 * Makes `generation` the mirror at `outDir` and returns the folder it
 * replaced (to be removed), if any. A mirror written before links is a real
 * folder: it is set aside first, the one moment `outDir` is missing; a crash
 * then is repaired by putBackSetAside.
 */
export async function flip(outDir: string, generation: string): Promise<string | undefined> {
  const link = sibling(outDir, `link-${uniqueId()}`);
  await symlink(basename(generation), link);
  crashPoint('staged');
  let replaced = liveGeneration(outDir);
  if (replaced === undefined && existsSync(outDir)) {
    replaced = sibling(outDir, `old-${uniqueId()}`);
    await rename(outDir, replaced);
  }
  crashPoint('between-renames');
  await rename(link, outDir);
  crashPoint('swapped');
  return replaced;
}

/**
 * Lock-free, for readers: when a crash left `outDir` missing while a mirror
 * written before links was set aside, put that mirror back. Two readers may
 * race here; the loser's rename fails harmlessly.
 */
export async function putBackSetAside(outDir: string): Promise<void> {
  if (existsSync(outDir) || linkTarget(outDir) !== undefined || !existsSync(dirname(outDir))) return;
  const setAside = named(outDir, 'old').filter((n) => !n.startsWith(`.${basename(outDir)}.old-spare-`));
  if (setAside.length === 0) return;
  // One crash leaves one; were there more, the last renamed is the newest.
  const parent = dirname(outDir);
  const newest = setAside.map((n) => ({ n, changed: statSync(join(parent, n)).ctimeMs })).sort((a, b) => b.changed - a.changed)[0]!.n;
  await rename(join(parent, newest), outDir).catch(() => {});
}

/**
 * Call first under the mirror's lock: every sibling but the live generation
 * is then left by a writer that died, or is being removed. `finishChanges`
 * is given the changes in place that a writer left (delta.ts).
 */
export async function recoverInterruptedSwap(outDir: string, finishChanges: (deltas: string[]) => Promise<void>): Promise<void> {
  if (!existsSync(dirname(outDir))) return;
  await putBackSetAside(outDir);
  await finishChanges(named(outDir, 'delta').map((n) => join(dirname(outDir), n)));
  const live = liveGeneration(outDir);
  const base = basename(outDir);
  // A copy still being made by an earlier version's background process: removing it under that process could leave a partial copy.
  const deadSpareCopies = named(outDir, 'spare-tmp').filter((n) => !isProcessAlive(Number(n.slice(`.${base}.spare-tmp-`.length))));
  for (const name of named(outDir, 'link')) await rm(join(dirname(outDir), name), { force: true });
  const spare = existsSync(sibling(outDir, 'spare')) ? [basename(sibling(outDir, 'spare'))] : [];
  const stale = [...named(outDir, 'gen'), ...named(outDir, 'staging'), ...named(outDir, 'old'), ...named(outDir, 'trash'), ...deadSpareCopies, ...spare];
  for (const name of stale) {
    const path = join(dirname(outDir), name);
    if (path !== live && existsSync(path)) await throwAway(outDir, path);
  }
}

/** Whether a writer left a change in place beside the mirror (delta.ts), which only recovery under the lock may finish. */
export function hasLeftChanges(outDir: string): boolean {
  return existsSync(dirname(outDir)) && named(outDir, 'delta').length > 0;
}

function named(outDir: string, kind: string): string[] {
  const prefix = `.${basename(outDir)}.${kind}-`;
  return readdirSync(dirname(outDir)).filter((n) => n.startsWith(prefix));
}

/** Renames `dir` to a trash name (instant, under the writer's lock), unless it has one, and returns it. */
export async function toTrash(outDir: string, dir: string): Promise<string> {
  if (basename(dir).startsWith(`.${basename(outDir)}.trash-`)) return dir;
  const trash = sibling(outDir, `trash-${uniqueId()}`);
  await rename(dir, trash);
  return trash;
}

export async function throwAway(outDir: string, dir: string): Promise<void> {
  removeInBackground(await toTrash(outDir, dir));
}

/**
 * A replaced mirror is removed by an `rm -rf` child that runs while the
 * command finishes (lets go of the lock, prints its result); the process
 * waits for it before it exits (the child is neither detached nor
 * unreferenced), so nothing is left writing beside the mirror once a command
 * returns. What a killed command had not removed, the next write removes
 * (recoverInterruptedSwap).
 */
export function removeInBackground(dir: string): void {
  try {
    const child = spawn('rm', ['-rf', dir], { stdio: 'ignore' });
    child.on('error', () => void rm(dir, { recursive: true, force: true }).catch(() => {}));
  } catch {
    void rm(dir, { recursive: true, force: true }).catch(() => {});
  }
}

/**
 * A command that needs a built mirror, given one that is not there: a path
 * that does not exist, as every command reports it (exit 2), before any work.
 * A mirror a writer that died mid-swap set aside is put back first, as every
 * reader does.
 */
export async function requireMirrorAt(dir: string, command: string): Promise<void> {
  await putBackSetAside(homeOf(dir));
  if (existsSync(join(dir, MANIFEST_FILE))) return;
  const shown = relative(process.cwd(), dir) || '.';
  throw new MirrorError(
    'PATH_NOT_FOUND',
    existsSync(dir) ? `${shown} holds no built mirror (no ${MANIFEST_FILE}).` : `There is no built mirror at ${shown}: the folder does not exist.`,
    {
      hint: `Did you build the mirror? Run modmirror build, or name the folder it wrote: modmirror ${command} --mirror DIR (default: the config's out, else dist).`,
    },
  );
}
