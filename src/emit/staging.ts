// The output is written into a staging folder beside it and swapped in whole,
// so a reader sees the mirror before or after a build or publish, never a mix.
//
// Siblings of an output folder `dist` (all hidden, all in the same parent so
// every move is a rename):
//   .dist.staging-PID      a writer's staging folder (removed if its writer died)
//   .dist.old-ID           the replaced mirror between the swap's renames; after a crash
//                          there, the one folder to put back
//   .dist.trash-ID         anything replaced, renamed so once the swap is done, and removed
//                          in the background; never put back, so a half-removed folder
//                          cannot be mistaken for a mirror
//   .dist.spare            a hard-linked copy of the current mirror made in the
//                          background after each publish, so the next publish starts
//                          from it instead of linking every entry while a pipeline waits
//   .dist.spare-tmp-PID    that copy while it is being made

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, linkSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { link, mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { crashPoint } from '../crash.js';
import { MirrorError } from '../errors.js';
import { MANIFEST_FILE } from '../protocol/paths.js';
import { isProcessAlive } from '../processes.js';

export interface Staging {
  root: string;
  write(rel: string, data: string | Buffer): Promise<void>;
  writeJson(rel: string, value: unknown): Promise<void>;
  /** Writes text given in pieces, so a file of tens of megabytes (the manifest at 100,000 versions) is never one string. */
  writeChunks(rel: string, chunks: Iterable<string>): Promise<void>;
  /** Puts an existing file (a cached archive) at `rel`, by hard link where the file system allows. */
  linkFrom(source: string, rel: string): Promise<void>;
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
export async function createStaging(outDir: string, options: { seed?: boolean; spare?: boolean } = {}): Promise<Staging> {
  assertReplaceable(outDir);
  const root = sibling(outDir, `staging-${process.pid}`);
  await rm(root, { recursive: true, force: true });
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
  const write = async (rel: string, data: string | Buffer) => writeFileSync(prepare(rel), data);
  return {
    root,
    write,
    writeJson: (rel, value) => write(rel, jsonText(value)),
    async writeChunks(rel, chunks) {
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
      const file = prepare(rel);
      try {
        linkSync(source, file);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== 'EXDEV' && code !== 'EPERM') throw error;
        copyFileSync(source, file);
      }
    },
    // A seeded staging holds hard links: removing them leaves the live mirror's files as they are.
    remove: async (rel) => rmSync(join(root, rel), { recursive: true, force: true }),
    async commit() {
      const old = sibling(outDir, `old-${uniqueId()}`);
      crashPoint('staged');
      const replacing = existsSync(outDir);
      if (replacing) await rename(outDir, old);
      crashPoint('between-renames');
      await rename(root, outDir);
      crashPoint('swapped');
      // The new mirror is in: an old folder that cannot be renamed now is thrown away by the next writer's recovery.
      const trash = replacing ? await toTrash(outDir, old).catch(() => undefined) : undefined;
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
 * Call first under the mirror's lock: any staging or old folder is then left
 * by a writer that died. If it died between the two renames of a swap, the
 * previous mirror is in the old folder: put it back.
 */
export async function recoverInterruptedSwap(outDir: string): Promise<void> {
  const parent = dirname(outDir);
  const base = basename(outDir);
  if (!existsSync(parent)) return;
  const names = readdirSync(parent);
  const named = (kind: string) => names.filter((n) => n.startsWith(`.${base}.${kind}-`));
  // Before trash-ID, retired spares were removed as old-spare-PID: never a mirror to put back.
  const setAside = named('old').filter((n) => !n.startsWith(`.${base}.old-spare-`));
  if (!existsSync(outDir) && setAside.length > 0) {
    // A writer renames its old folder to trash before it returns, so one crash leaves one; were there more, the last renamed is the newest.
    const newest = setAside.map((n) => ({ n, changed: statSync(join(parent, n)).ctimeMs })).sort((a, b) => b.changed - a.changed)[0]!.n;
    await rename(join(parent, newest), outDir);
    // The spare, if any, was copied from what is now the previous mirror again; it still matches, so it stays.
  }
  // A spare still being copied belongs to a live background process: removing it under that process could leave a partial copy.
  const deadSpareCopies = named('spare-tmp').filter((n) => !isProcessAlive(Number(n.slice(`.${base}.spare-tmp-`.length))));
  for (const name of [...named('staging'), ...named('old'), ...named('trash'), ...deadSpareCopies]) {
    if (existsSync(join(parent, name))) await throwAway(outDir, join(parent, name));
  }
}

/** Unique among a process's writes and across processes, so a folder still being removed never blocks a rename. */
function uniqueId(): string {
  return `${process.pid}-${randomBytes(4).toString('hex')}`;
}

/** Renames `dir` to a trash name (instant, under the writer's lock), unless it has one, and returns it. */
async function toTrash(outDir: string, dir: string): Promise<string> {
  if (basename(dir).startsWith(`.${basename(outDir)}.trash-`)) return dir;
  const trash = sibling(outDir, `trash-${uniqueId()}`);
  await rename(dir, trash);
  return trash;
}

async function throwAway(outDir: string, dir: string): Promise<void> {
  removeInBackground(await toTrash(outDir, dir));
}

function sibling(outDir: string, suffix: string): string {
  return join(dirname(outDir), `.${basename(outDir)}.${suffix}`);
}

/** Same device and inode: hard links to one file. */
function sameFile(a: string, b: string): boolean {
  try {
    const x = statSync(a, { bigint: true });
    const y = statSync(b, { bigint: true });
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
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
    remove: async (rel) => void (existsSync(join(outDir, rel)) && changed.add(rel)),
    commit: async () => {},
    discard: async () => {},
  };
}
