// A change to part of the mirror (a publish, a deprecation, a removal): the
// files it writes are gathered in a folder beside the mirror (`.dist.delta-ID`),
// checked there together with the live files they leave as they are, and
// then moved into the live mirror one rename at a time, in write order
// (write-order.ts), the manifest last and removals after it. Its cost follows
// the change, not the mirror: nothing else of the mirror is copied or linked.
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
const TREE = 'tree';

interface Journal {
  format: 1;
  /** Files to move from the delta's tree into the mirror, in this order. */
  puts: string[];
  /** Files to remove from the mirror after every put. */
  removals: string[];
}

/** A staging that gathers a change to the live mirror at `outDir` and applies it in place on commit. */
export function createDeltaStaging(outDir: string): Staging & { changed: string[] } {
  const delta = sibling(outDir, `delta-${uniqueId()}`);
  const tree = join(delta, TREE);
  mkdirSync(tree, { recursive: true });
  const live = (rel: string) => join(outDir, rel);
  /** Files the change writes, in the order first written. */
  const puts = new Set<string>();
  /** Files and folders the change removes, unless written again. */
  const removed = new Set<string>();
  const isRemoved = (rel: string) => [...removed].some((r) => rel === r || rel.startsWith(`${r}/`));

  const folders = new Set<string>();
  const prepare = (rel: string) => {
    const file = join(tree, rel);
    if (!folders.has(dirname(file))) {
      mkdirSync(dirname(file), { recursive: true });
      folders.add(dirname(file));
    }
    rmSync(file, { force: true });
    return file;
  };
  /** After a write: a file that ends as the live one is, and was not removed, is no change. */
  const settle = (rel: string, unchanged: boolean) => {
    if (unchanged && !isRemoved(rel)) {
      rmSync(join(tree, rel), { force: true });
      puts.delete(rel);
    } else {
      puts.add(rel);
    }
  };
  const write = async (rel: string, data: string | Buffer) => {
    writeFileSync(prepare(rel), data);
    settle(rel, sameBytes(live(rel), data));
  };

  return {
    at: (rel) => (puts.has(rel) ? join(tree, rel) : isRemoved(rel) ? join(delta, 'absent', rel) : live(rel)),
    get changed() {
      return [...new Set([...puts, ...[...removed].flatMap((r) => filesUnder(outDir, r))])].sort();
    },
    write,
    writeJson: (rel, value) => write(rel, jsonText(value)),
    async writeChunks(rel, chunks) {
      const file = prepare(rel);
      await writeInChunks(file, chunks);
      // The manifest is replaced even with its own bytes: its new stamp tells a running server to load the indexes again.
      settle(rel, rel !== MANIFEST_FILE && sameFileBytes(live(rel), file));
    },
    async linkFrom(source, rel) {
      if (sameFile(source, live(rel)) && !isRemoved(rel)) {
        rmSync(join(tree, rel), { force: true });
        puts.delete(rel);
        return;
      }
      linkOrCopy(source, prepare(rel));
      puts.add(rel);
    },
    async copyFrom(source, rel) {
      copyFileSync(source, prepare(rel), constants.COPYFILE_FICLONE);
      puts.add(rel);
    },
    async remove(rel) {
      for (const put of [...puts]) {
        if (put === rel || put.startsWith(`${rel}/`)) {
          puts.delete(put);
          rmSync(join(tree, put), { force: true });
        }
      }
      if (existsSync(live(rel))) removed.add(rel);
    },
    async commit() {
      const journal: Journal = {
        format: 1,
        puts: inWriteOrder(puts),
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
    if (journal?.format === 1) await applyJournal(outDir, delta, journal);
    else await throwAway(outDir, delta);
  }
}

/** Moves each put into the mirror and removes each removal; a step already done (by a run that died) is skipped. */
async function applyJournal(outDir: string, delta: string, journal: Journal): Promise<void> {
  const made = new Set<string>();
  let applied = 0;
  for (const rel of journal.puts) {
    const target = join(outDir, rel);
    const folder = dirname(target);
    if (!made.has(folder)) {
      mkdirSync(folder, { recursive: true });
      made.add(folder);
    }
    try {
      await rename(join(delta, TREE, rel), target);
    } catch (error) {
      // Moved by the run that died here.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    if (++applied === Math.ceil(journal.puts.length / 2)) crashPoint('applying');
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
