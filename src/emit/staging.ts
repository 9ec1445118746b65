// The output is written into a staging folder beside it and swapped in whole,
// so a reader sees the mirror before or after a build or publish, never a mix.

import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { copyFile, link, mkdir, open, readdir, readFile, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { crashPoint } from '../crash.js';
import { MirrorError } from '../errors.js';
import { MANIFEST_FILE } from './paths.js';

export interface Staging {
  root: string;
  write(rel: string, data: string | Buffer): Promise<void>;
  writeJson(rel: string, value: unknown): Promise<void>;
  /** Writes text given in pieces, so a file of tens of megabytes (the manifest at 100,000 versions) is never one string. */
  writeChunks(rel: string, chunks: Iterable<string>): Promise<void>;
  /** Puts an existing file (a cached archive) at `rel`, by hard link where the file system allows. */
  linkFrom(source: string, rel: string): Promise<void>;
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
export async function createStaging(outDir: string, options: { seed?: boolean } = {}): Promise<Staging> {
  assertReplaceable(outDir);
  const root = join(dirname(outDir), `.${basename(outDir)}.staging-${process.pid}`);
  await rm(root, { recursive: true, force: true });
  await mkdir(root, { recursive: true });
  const seeded = options.seed === true && existsSync(outDir);
  if (seeded) await linkTree(outDir, root);
  // Folders made so far, to skip the mkdir; a module's files are written together, so recent ones are enough.
  const made = new Set<string>();
  const prepare = async (rel: string) => {
    const file = join(root, rel);
    const dir = dirname(file);
    if (!made.has(dir)) {
      await mkdir(dir, { recursive: true });
      if (made.size >= MADE_FOLDERS_KEPT) made.clear();
      made.add(dir);
    }
    if (seeded) await unlink(file).catch(() => {});
    return file;
  };
  const write = async (rel: string, data: string | Buffer) => writeFile(await prepare(rel), data);
  return {
    root,
    write,
    writeJson: (rel, value) => write(rel, jsonText(value)),
    async writeChunks(rel, chunks) {
      const file = await open(await prepare(rel), 'w');
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
      const file = await prepare(rel);
      await link(source, file).catch(async (error: NodeJS.ErrnoException) => {
        if (error.code !== 'EXDEV' && error.code !== 'EPERM') throw error;
        await copyFile(source, file);
      });
    },
    async commit() {
      const old = join(dirname(outDir), `.${basename(outDir)}.old-${process.pid}`);
      crashPoint('staged');
      if (existsSync(outDir)) await rename(outDir, old);
      crashPoint('between-renames');
      await rename(root, outDir);
      crashPoint('swapped');
      removeInBackground(old);
    },
    discard: () => rm(root, { recursive: true, force: true }),
  };
}

/**
 * Call first under the mirror's lock: any staging or old folder is then left
 * by a writer that died. If it died between the two renames of a swap, the
 * previous mirror is in the old folder: put it back.
 */
export async function recoverInterruptedSwap(outDir: string): Promise<void> {
  const parent = dirname(outDir);
  const base = basename(outDir);
  if (!existsSync(parent)) return;
  const leftovers = readdirSync(parent).filter((n) => n.startsWith(`.${base}.staging-`) || n.startsWith(`.${base}.old-`));
  const old = leftovers.find((n) => n.startsWith(`.${base}.old-`));
  if (!existsSync(outDir) && old !== undefined) await rename(join(parent, old), outDir);
  for (const name of leftovers) if (existsSync(join(parent, name))) removeInBackground(join(parent, name));
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

/**
 * The replaced mirror is removed by a detached `rm -rf`, so a publish returns
 * without waiting for it; whatever it has not removed by the next write is
 * removed then (recoverInterruptedSwap).
 */
function removeInBackground(dir: string): void {
  try {
    const child = spawn('rm', ['-rf', dir], { stdio: 'ignore', detached: true });
    child.on('error', () => void rm(dir, { recursive: true, force: true }).catch(() => {}));
    child.unref();
  } catch {
    void rm(dir, { recursive: true, force: true }).catch(() => {});
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
    commit: async () => {},
    discard: async () => {},
  };
}
