// A writer's next generation of the mirror (home.ts says where it lives):
// written here, then swapped in whole by the transaction, so a reader sees
// the mirror before or after a write, never a mix. A writer that changes a
// few files (publish) starts from a hard-linked copy of the live mirror, or
// from the spare copy made for it in the background.

import { spawn } from 'node:child_process';
import { constants, copyFileSync, existsSync, linkSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { link, mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { MirrorError } from '../errors.js';
import { MANIFEST_FILE } from '../protocol/paths.js';
import { isProcessAlive } from '../processes.js';
import { sameFile } from '../file-stamp.js';
import { flip, newGeneration, removeInBackground, sibling, throwAway, toTrash } from './home.js';

export interface Staging {
  root: string;
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
  /** Swaps the staging folder in as the output folder. */
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
 * of the current mirror (cheap, and the live files are never written: every
 * write replaces the link with a new file).
 */
export async function createStaging(outDir: string, options: { seed?: boolean; spare?: boolean } = {}): Promise<Staging & { changed: string[] }> {
  assertReplaceable(outDir);
  const root = newGeneration(outDir);
  await mkdir(dirname(root), { recursive: true });
  const seeded = options.seed === true && existsSync(outDir);
  if (!seeded || !(await claimSpare(outDir, root))) await mkdir(root);
  if (seeded && !existsSync(join(root, MANIFEST_FILE))) await linkTree(outDir, root);
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
    get changed() {
      return [...changed].sort();
    },
    write,
    writeJson: (rel, value) => write(rel, jsonText(value)),
    async writeChunks(rel, chunks) {
      // Only the manifest is written in pieces, and a write always gives it new content.
      if (seeded) changed.add(rel);
      const file = await open(prepare(rel), 'w');
      try {
        let pending = '';
        for (const chunk of chunks) {
          pending += chunk;
          if (pending.length >= WRITE_BATCH) {
            await file.write(pending);
            pending = '';
          }
        }
        await file.write(pending);
      } finally {
        await file.close();
      }
    },
    async linkFrom(source, rel) {
      noteFile(source, rel);
      const file = prepare(rel);
      try {
        linkSync(source, file);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== 'EXDEV' && code !== 'EPERM') throw error;
        copyFileSync(source, file);
      }
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
      await retireSpare(outDir);
      // Only writers that start from a copy (publish, unbundle) leave one for the next, unless told not to
      // (--no-spare): in a folder deleted next, as after a build in CI, a copy still being made is in the way.
      if (seeded && options.spare !== false) makeSpareInBackground(outDir, trash);
      else if (trash) removeInBackground(trash);
    },
    discard: () => rm(root, { recursive: true, force: true }),
  };
}

/**
 * Takes the spare as the staging folder when it is a copy of the current
 * mirror. Every writer replaces manifest.json with a new file, so the spare
 * matches exactly when its manifest is the same inode as the mirror's (the
 * spare's own link keeps that inode from being reused).
 */
async function claimSpare(outDir: string, root: string): Promise<boolean> {
  const spare = sibling(outDir, 'spare');
  await spareInProgress(outDir);
  if (!existsSync(spare)) return false;
  if (!sameFile(join(spare, MANIFEST_FILE), join(outDir, MANIFEST_FILE))) {
    await retireSpare(outDir);
    return false;
  }
  await rename(spare, root);
  return true;
}

/**
 * Publishes back to back: the copy the last one started is usually nearly
 * done, and finishing it costs less than linking the tree again beside it.
 */
async function spareInProgress(outDir: string): Promise<void> {
  const prefix = `.${basename(outDir)}.spare-tmp-`;
  const copying = () => readdirSync(dirname(outDir)).some((n) => n.startsWith(prefix) && isProcessAlive(Number(n.slice(prefix.length))));
  const deadline = Date.now() + SPARE_WAIT_MS;
  while (copying() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
}

/** Linking takes about 0.05 ms an entry here (0.3 s at 1,000 versions): enough for ~100,000 versions. */
const SPARE_WAIT_MS = 30_000;

/** A spare of an earlier mirror is thrown away. */
async function retireSpare(outDir: string): Promise<void> {
  const spare = sibling(outDir, 'spare');
  if (existsSync(spare)) await throwAway(outDir, spare);
}

/**
 * Copies the mirror into the spare in a detached shell, after this writer
 * has returned, then removes `trash` (the replaced mirror): one process
 * start for both, since each shows in a publish's time. The trash has a name
 * of its own, so it can wait for the copy. The shell pins the mirror's
 * manifest first and promotes the copy only if the mirror still has that
 * manifest when the copy is done, so a swap during the copy (which would
 * make it a mix) discards it. `mv -T` refuses to move into an existing
 * spare. Any failure (no `cp -al` or `mv -T`, a full disk) only means the
 * next publish links the tree itself.
 */
function makeSpareInBackground(outDir: string, trash: string | undefined): void {
  const script = [
    'exec 2>/dev/null',
    'out="$1"; tmp="$2-$$"; spare="$3"; trash="$4"',
    'mkdir "$tmp" && ln "$out/manifest.json" "$tmp/.pin" && cp -al "$out/." "$tmp" && [ "$tmp/.pin" -ef "$out/manifest.json" ] && rm "$tmp/.pin" && mv -T "$tmp" "$spare" || rm -rf "$tmp"',
    '[ -z "$trash" ] || rm -rf "$trash"',
  ].join('\n');
  const removeTrash = () => trash !== undefined && removeInBackground(trash);
  try {
    const child = spawn('sh', ['-c', script, 'sh', outDir, sibling(outDir, 'spare-tmp'), sibling(outDir, 'spare'), trash ?? ''], {
      stdio: 'ignore',
      detached: true,
    });
    child.on('error', removeTrash);
    child.unref();
  } catch {
    // No shell: publishes link the tree themselves.
    removeTrash();
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
function sameBytes(file: string, data: string | Buffer): boolean {
  try {
    const current = readFileSync(file);
    return current.equals(typeof data === 'string' ? Buffer.from(data) : data);
  } catch {
    return false;
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
    root: outDir,
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
