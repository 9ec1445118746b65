// A change to part of the mirror (a publish, a deprecation, a removal): the
// files it writes are gathered in a folder beside the mirror (`.dist.delta-ID`),
// checked there together with the live files they leave as they are, and
// then moved into the live mirror one rename at a time, in write order
// (write-order.ts), the manifest last and removals after it. Its cost follows
// the change, not the mirror: nothing else of the mirror is copied or linked,
// a file that would end as the live one is not staged at all, and the staged
// files lie flat in the delta's folder (no folders made to gather a change).
//
// Each rename is atomic, and the order means a reader never meets a location
// whose archive or documents are not there yet. A journal, written before the
// first rename, makes the change whole across a crash: recovery under the
// mirror's lock (replayJournals) finishes every journaled change and throws
// away any that never reached its journal, so the mirror is the one before
// the change or the one after it, never a part of it, for the next writer.

import { constants, copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, rmdirSync, writeFileSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { sameFile } from '../file-stamp.js';
import { crashPoint } from './crash.js';
import { sibling, throwAway, uniqueId } from './home.js';
import { jsonText, linkOrCopy, sameBytes, sameFileBytes, writeInChunks, type Staging } from './staging.js';
import { inWriteOrder } from './write-order.js';
import { MANIFEST_FILE } from '../protocol/paths.js';

const JOURNAL = 'journal.json';
/** Where a format 1 journal (an older modmirror's) kept its files: the mirror's own tree, folder by folder. */
const TREE = 'tree';

/**
 * Format 2: each file is staged flat in the delta's folder under a name of
 * its own, so gathering a change makes no folders and throwing one away
 * removes one folder's files. Format 1 (an older writer's) staged `tree/REL`.
 */
type Journal =
  | { format: 1; /** Files to move from the delta's tree into the mirror, in this order. */ puts: string[]; removals: string[] }
  | { format: 2; /** [mirror path, staged name] of each file to move into the mirror, in this order. */ puts: [string, string][]; removals: string[] };

/** A staging that gathers a change to the live mirror at `outDir` and applies it in place on commit. */
export function createDeltaStaging(outDir: string): Staging & { changed: string[] } {
  const delta = sibling(outDir, `delta-${uniqueId()}`);
  mkdirSync(delta, { recursive: true });
  const live = (rel: string) => join(outDir, rel);
  /** The staged name of each file the change writes, in the order first written. */
  const puts = new Map<string, string>();
  let names = 0;
  /** Files and folders the change removes, unless written again. */
  const removed = new Set<string>();
  const isRemoved = (rel: string) => [...removed].some((r) => rel === r || rel.startsWith(`${r}/`));
  /** The files changed so far, sorted: asked for once per module a listing shows, so kept until the next change. */
  let changed: string[] | undefined;

  const prepare = (rel: string) => {
    const staged = puts.get(rel);
    if (staged !== undefined) {
      const file = join(delta, staged);
      rmSync(file, { force: true });
      return file;
    }
    const name = `f${names++}`;
    puts.set(rel, name);
    changed = undefined;
    return join(delta, name);
  };
  /** A file that would end as the live one is, and was not removed, is no change: it is not staged at all. */
  const drop = (rel: string) => {
    const staged = puts.get(rel);
    if (staged === undefined) return;
    rmSync(join(delta, staged), { force: true });
    puts.delete(rel);
    changed = undefined;
  };
  const write = async (rel: string, data: string | Buffer) => {
    if (!isRemoved(rel) && sameBytes(live(rel), data)) return drop(rel);
    writeFileSync(prepare(rel), data);
  };

  return {
    at: (rel) => {
      const staged = puts.get(rel);
      return staged !== undefined ? join(delta, staged) : isRemoved(rel) ? join(delta, 'absent', rel) : live(rel);
    },
    get changed() {
      return (changed ??= [...new Set([...puts.keys(), ...[...removed].flatMap((r) => filesUnder(outDir, r))])].sort());
    },
    write,
    writeJson: (rel, value) => write(rel, jsonText(value)),
    async writeChunks(rel, chunks) {
      const file = prepare(rel);
      await writeInChunks(file, chunks);
      // The manifest is replaced even with its own bytes: its new stamp tells a running server to load the indexes again.
      if (rel !== MANIFEST_FILE && !isRemoved(rel) && sameFileBytes(live(rel), file)) drop(rel);
    },
    async linkFrom(source, rel) {
      if (sameFile(source, live(rel)) && !isRemoved(rel)) return drop(rel);
      linkOrCopy(source, prepare(rel));
    },
    async copyFrom(source, rel) {
      copyFileSync(source, prepare(rel), constants.COPYFILE_FICLONE);
    },
    async remove(rel) {
      for (const put of [...puts.keys()]) if (put === rel || put.startsWith(`${rel}/`)) drop(put);
      if (existsSync(live(rel))) removed.add(rel);
      changed = undefined;
    },
    async commit() {
      const journal: Journal = {
        format: 2,
        puts: inWriteOrder(puts.keys()).map((rel) => [rel, puts.get(rel)!]),
        removals: [...removed].flatMap((r) => filesUnder(outDir, r)).filter((rel) => !puts.has(rel)),
      };
      if (journal.puts.length === 0 && journal.removals.length === 0) {
        await rm(delta, { recursive: true, force: true });
        return;
      }
      const staged = join(delta, `${JOURNAL}.tmp`);
      writeFileSync(staged, JSON.stringify(journal));
      await rename(staged, join(delta, JOURNAL));
      crashPoint('journaled');
      await applyJournal(outDir, delta, journal);
    },
    discard: () => rm(delta, { recursive: true, force: true }),
  };
}

/**
 * Under the mirror's lock, before anything else: finish each change whose
 * journal was written (its writer died while applying it), and throw away
 * each that has none (its writer died before its commit).
 */
export async function replayJournals(outDir: string, deltas: string[]): Promise<void> {
  for (const delta of deltas) {
    let journal: Journal | undefined;
    try {
      journal = JSON.parse(readFileSync(join(delta, JOURNAL), 'utf8')) as Journal;
    } catch {
      journal = undefined;
    }
    if (journal?.format === 1 || journal?.format === 2) await applyJournal(outDir, delta, journal);
    else await throwAway(outDir, delta);
  }
}

/** Moves each put into the mirror and removes each removal; a step already done (by a run that died) is skipped. */
async function applyJournal(outDir: string, delta: string, journal: Journal): Promise<void> {
  const puts: [string, string][] = journal.format === 2 ? journal.puts : journal.puts.map((rel) => [rel, join(TREE, rel)]);
  const made = new Set<string>();
  let applied = 0;
  for (const [rel, staged] of puts) {
    const target = join(outDir, rel);
    const folder = dirname(target);
    if (!made.has(folder)) {
      mkdirSync(folder, { recursive: true });
      made.add(folder);
    }
    try {
      await rename(join(delta, staged), target);
    } catch (error) {
      // Moved by the run that died here.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    if (++applied === Math.ceil(puts.length / 2)) crashPoint('applying');
  }
  for (const rel of journal.removals) rmSync(join(outDir, rel), { force: true });
  removeEmptyFolders(outDir, journal.removals);
  await rm(delta, { recursive: true, force: true });
}

/** The folders the removals emptied, deepest first, up to (not including) the mirror's root. */
function removeEmptyFolders(outDir: string, removals: string[]): void {
  const folders = new Set<string>();
  for (const rel of removals) {
    for (let dir = dirname(rel); dir !== '.' && dir !== ''; dir = dirname(dir)) folders.add(dir);
  }
  for (const dir of [...folders].sort((a, b) => b.split('/').length - a.split('/').length)) {
    try {
      rmdirSync(join(outDir, dir));
    } catch {
      // Not empty, or gone.
    }
  }
}

/** The files at or under `rel` in the mirror, relative to its root. */
function filesUnder(outDir: string, rel: string): string[] {
  const path = join(outDir, rel);
  let isFolder: boolean;
  try {
    isFolder = lstatSync(path).isDirectory();
  } catch {
    return [];
  }
  if (!isFolder) return [rel];
  return readdirSync(path, { recursive: true, withFileTypes: true })
    .filter((entry) => !entry.isDirectory())
    .map((entry) => relative(outDir, join(entry.parentPath, entry.name)).split(sep).join('/'));
}
