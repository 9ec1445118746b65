// A writer's next generation of the mirror (home.ts says where it lives):
// written here, then swapped in whole by the transaction, so a reader sees
// the mirror before or after a write, never a mix. A build starts from
// nothing; unbundle from a hard-linked copy of the live mirror. A writer
// that changes a few files changes the live mirror in place instead (delta.ts).

import { spawn } from 'node:child_process';
import {
  closeSync,
  constants,
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { link, mkdir, open, readdir, readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { MirrorError } from '../errors.js';
import { MANIFEST_FILE } from '../protocol/paths.js';
import { sameFile } from '../file-stamp.js';
import { flip, newGeneration, removeInBackground, toTrash } from './home.js';

export interface Staging {
  /** The folder holding the whole new mirror; undefined for a change made in place (delta.ts). */
  root?: string;
  /** Where the new mirror's file `rel` is, to read it back. */
  at(rel: string): string;
  write(rel: string, data: string | Buffer): Promise<void>;
  writeJson(rel: string, value: unknown): Promise<void>;
  /** Writes text given in pieces, so a file of tens of megabytes (the manifest at 100,000 versions) is never one string. */
  writeChunks(rel: string, chunks: Iterable<string>): Promise<void>;
  /** Puts a file modmirror owns (a cached archive, a published file) at `rel`, by hard link where the file system allows. */
  linkFrom(source: string, rel: string): Promise<void>;
  /**
   * Puts a copy of a file someone else owns (a provider zip in its input
   * folder) at `rel`: a link would let a later write to that file change
   * a published version. A clone where the file system can, else a copy.
   */
  copyFrom(source: string, rel: string): Promise<void>;
  /** Removes a file or folder (with everything in it) if it is there. */
  remove(rel: string): Promise<void>;
  /** Makes the new mirror the live one. */
  commit(): Promise<void>;
  discard(): Promise<void>;
}

/** Characters gathered before each write of writeChunks: few system calls, little memory. */
const WRITE_BATCH = 1 << 20;

/** Two or more folders a version, so remembering all of them grows with the mirror. */
const MADE_FOLDERS_KEPT = 1024;

export function jsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/**
 * A staging folder for `outDir`. With `seed`, it starts as a hard-linked copy
 * of the current mirror (the live files are never written: every write
 * replaces the link with a new file).
 */
export async function createStaging(outDir: string, options: { seed?: boolean } = {}): Promise<Staging & { root: string; changed: string[] }> {
  assertReplaceable(outDir);
  const root = newGeneration(outDir);
  await mkdir(dirname(root), { recursive: true });
  const seeded = options.seed === true && existsSync(outDir);
  await mkdir(root);
  if (seeded) await linkTree(outDir, root);
  // Synchronous on purpose: a mirror is thousands of small files, and fs.promises spends several
  // thread-pool round trips on each (about 10× the time of writeFileSync for a 2 KB file here).
  // Folders made so far, to skip the mkdir; a module's files are written together, so recent ones are enough.
  const made = new Set<string>();
  const prepare = (rel: string) => {
    const file = join(root, rel);
    const dir = dirname(file);
    if (!made.has(dir)) {
      mkdirSync(dir, { recursive: true });
      if (made.size >= MADE_FOLDERS_KEPT) made.clear();
      made.add(dir);
    }
    if (seeded) rmSync(file, { force: true });
    return file;
  };
  // A writer that starts from a copy reports what it changed: a file written with the bytes it had is no change.
  const changed = new Set<string>();
  const write = async (rel: string, data: string | Buffer) => {
    if (seeded && !changed.has(rel) && !sameBytes(join(outDir, rel), data)) changed.add(rel);
    writeFileSync(prepare(rel), data);
  };
  const noteFile = (source: string, rel: string) => {
    if (seeded && !sameFile(source, join(outDir, rel))) changed.add(rel);
  };
  return {
    root,
    at: (rel) => join(root, rel),
    get changed() {
      return [...changed].sort();
    },
    write,
    writeJson: (rel, value) => write(rel, jsonText(value)),
    async writeChunks(rel, chunks) {
      // Only the manifest is written in pieces, and a write always gives it new content.
      if (seeded) changed.add(rel);
      await writeInChunks(prepare(rel), chunks);
    },
    async linkFrom(source, rel) {
      noteFile(source, rel);
      linkOrCopy(source, prepare(rel));
    },
    async copyFrom(source, rel) {
      if (seeded) changed.add(rel);
      copyFileSync(source, prepare(rel), constants.COPYFILE_FICLONE);
    },
    // A seeded staging holds hard links: removing them leaves the live mirror's files as they are.
    async remove(rel) {
      if (seeded && existsSync(join(root, rel))) changed.add(rel);
      rmSync(join(root, rel), { recursive: true, force: true });
    },
    async commit() {
      const replaced = await flip(outDir, root);
      // The new mirror is in: a replaced folder that cannot be renamed now is thrown away by the next writer's recovery.
      const trash = replaced ? await toTrash(outDir, replaced).catch(() => undefined) : undefined;
      if (trash) removeInBackground(trash);
    },
    discard: () => rm(root, { recursive: true, force: true }),
  };
}

/** Writes text given in pieces to `file`, a batch at a time: few system calls, and never one string of the whole. */
export async function writeInChunks(file: string, chunks: Iterable<string>): Promise<void> {
  const handle = await open(file, 'w');
  try {
    let pending = '';
    for (const chunk of chunks) {
      pending += chunk;
      if (pending.length >= WRITE_BATCH) {
        await handle.write(pending);
        pending = '';
      }
    }
    await handle.write(pending);
  } finally {
    await handle.close();
  }
}

/** A hard link to a file modmirror owns; a copy where the file system cannot link (another device, no permission). */
export function linkOrCopy(source: string, file: string): void {
  try {
    linkSync(source, file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EXDEV' && code !== 'EPERM') throw error;
    copyFileSync(source, file);
  }
}

/** `cp -al` links a large tree many times faster than a file-by-file walk from Node; the walk is the fallback. */
async function linkTree(from: string, to: string): Promise<void> {
  const copied = await new Promise<boolean>((resolve) => {
    const child = spawn('cp', ['-al', `${from}/.`, to], { stdio: 'ignore' });
    child.on('error', () => resolve(false));
    child.on('exit', (code) => resolve(code === 0));
  });
  if (!copied) {
    await rm(to, { recursive: true, force: true });
    await mkdir(to);
    await linkTreeSlowly(from, to);
  }
}

async function linkTreeSlowly(from: string, to: string): Promise<void> {
  const entries = await readdir(from, { withFileTypes: true });
  await Promise.all(
    entries.map(async (entry) => {
      const source = join(from, entry.name);
      const target = join(to, entry.name);
      if (entry.isDirectory()) {
        await mkdir(target);
        await linkTreeSlowly(source, target);
      } else if (entry.isFile()) {
        await link(source, target);
      }
    }),
  );
}

/** The output folder is replaced whole, so refuse to replace one that is not a mirror. */
function assertReplaceable(outDir: string): void {
  if (!existsSync(outDir)) return;
  const entries = readdirSync(outDir);
  if (entries.length > 0 && !entries.includes(MANIFEST_FILE)) {
    throw new MirrorError('OUTPUT_FAILED', `The output folder "${outDir}" is not empty and holds no modmirror mirror (no ${MANIFEST_FILE}).`, {
      hint: 'Choose another --out folder, or empty this one: the build replaces the whole folder.',
    });
  }
}

/** Whether `file` holds exactly `data` (false when it is missing). */
export function sameBytes(file: string, data: string | Buffer): boolean {
  try {
    const current = readFileSync(file);
    return current.equals(typeof data === 'string' ? Buffer.from(data) : data);
  } catch {
    return false;
  }
}

/** Whether two files hold the same bytes, read a block at a time: a streamed file can be the size of the mirror. */
export function sameFileBytes(a: string, b: string): boolean {
  let fa: number | undefined;
  let fb: number | undefined;
  try {
    if (statSync(a).size !== statSync(b).size) return false;
    fa = openSync(a, 'r');
    fb = openSync(b, 'r');
    const [ba, bb] = [Buffer.alloc(1 << 20), Buffer.alloc(1 << 20)];
    for (;;) {
      const n = readSync(fa, ba, 0, ba.length, null);
      if (readSync(fb, bb, 0, bb.length, null) !== n || !ba.subarray(0, n).equals(bb.subarray(0, n))) return false;
      if (n === 0) return true;
    }
  } catch {
    return false;
  } finally {
    if (fa !== undefined) closeSync(fa);
    if (fb !== undefined) closeSync(fb);
  }
}

/** A staging that writes nothing and records which files would change: `publish --dry-run`. */
export function dryRunStaging(outDir: string): Staging & { changed: string[] } {
  const changed = new Set<string>();
  const write = async (rel: string, data: string | Buffer) => {
    const current = await readFile(join(outDir, rel)).catch(() => undefined);
    if (!current || !current.equals(typeof data === 'string' ? Buffer.from(data) : data)) changed.add(rel);
  };
  return {
    at: (rel) => join(outDir, rel),
    get changed() {
      return [...changed].sort();
    },
    write,
    writeJson: (rel, value) => write(rel, jsonText(value)),
    async writeChunks(rel, chunks) {
      const current = await readFile(join(outDir, rel)).catch(() => undefined);
      let offset = 0;
      let same = current !== undefined;
      for (const chunk of chunks) {
        const bytes = Buffer.from(chunk);
        same &&= current!.subarray(offset, offset + bytes.length).equals(bytes);
        offset += bytes.length;
      }
      if (!same || offset !== current!.length) changed.add(rel);
    },
    linkFrom: async (_source, rel) => void changed.add(rel),
    copyFrom: async (_source, rel) => void changed.add(rel),
    remove: async (rel) => void (existsSync(join(outDir, rel)) && changed.add(rel)),
    commit: async () => {},
    discard: async () => {},
  };
}
