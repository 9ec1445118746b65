// Packing off the build's own thread, the one everything else waits on. A
// build packs every new version: there, laying out each tar and taking zlib's
// output cost that thread time, and zlib's pool compressed several archives at
// once beside it, competing with it for two cores. One worker thread packs
// them in turn instead, with pack.ts's one rule. A publish packs one version,
// less work than starting a thread costs, so it packs where it is. A version
// with large files is streamed into a file in `spoolDir` (stream.ts).

import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { MirrorError, type ErrorCode } from '../errors.js';
import { packVersion } from './index.js';
import { packVersionToFile } from './stream.js';
import { isHeld, type LargeSource, type PackedArchive, type VersionFile } from '../types.js';
import { PACKAGE_ROOT } from '../version.js';

/** The compiled worker, also when this code runs bundled into the CLI (lib/cli-bundle/) or from src/ in tests. */
const PACK_WORKER = join(PACKAGE_ROOT, 'lib/pack/worker.js');

export interface Packer {
  /** In memory when every file is held; else into a file of `spoolDir`, which the caller moves or removes. */
  pack(files: VersionFile[]): Promise<PackedArchive>;
  /** Stops the packing thread, if any. */
  close(): Promise<void>;
}

/** What the worker is sent: each held file's bytes arrive as a plain Uint8Array, a large file as where to read it. */
export interface PackRequest {
  id: number;
  files: ({ path: string; mode: number; data: Uint8Array } | { path: string; mode: number; size: number; source: LargeSource })[];
  /** Where the archive goes when some file is large. */
  target: string;
}

/** A failure carries its MirrorError code, so a version that cannot be packed fails alone, as one that cannot be read. */
export type PackReply =
  | { id: number; data: Uint8Array; sha256: string; error?: undefined }
  | { id: number; file: string; size: number; sha256: string; error?: undefined }
  | { id: number; error: string; code?: ErrorCode; hint?: string };

/** The one rule for where a version is packed: in memory, or streamed to `target`. */
export async function packAny(files: VersionFile[], target: () => string): Promise<PackedArchive> {
  if (files.every(isHeld)) return packVersion(files);
  try {
    return await packVersionToFile(files, target());
  } catch (error) {
    if (error instanceof MirrorError) throw error;
    throw new MirrorError('VERSION_READ_FAILED', `Could not pack it: ${(error as Error).message}`, { cause: error });
  }
}

/** A fresh file name in `spoolDir`, which is made on first use. */
function spool(spoolDir: string): () => string {
  return () => {
    mkdirSync(spoolDir, { recursive: true });
    return join(spoolDir, `${randomUUID()}.tar.gz`);
  };
}

export function inlinePacker(spoolDir: string): Packer {
  const target = spool(spoolDir);
  return { pack: (files) => packAny(files, target), close: async () => {} };
}

/**
 * Started on the first version to pack, so a build that takes everything from
 * the cache starts no thread. Once the thread fails, every pack waiting and
 * every later one is refused with the reason, so the build stops instead of
 * waiting for an answer that will not come.
 */
export function threadPacker(spoolDir: string): Packer {
  const target = spool(spoolDir);
  let worker: Worker | undefined;
  let failure: Error | undefined;
  let nextId = 0;
  const waiting = new Map<number, { resolve: (archive: PackedArchive) => void; reject: (error: Error) => void }>();
  const fail = (error: Error) => {
    failure ??= error;
    for (const w of waiting.values()) w.reject(failure);
    waiting.clear();
  };
  const start = () => {
    const w = new Worker(PACK_WORKER);
    w.on('message', (m: PackReply) => {
      const entry = waiting.get(m.id);
      waiting.delete(m.id);
      if (m.error !== undefined)
        entry?.reject(m.code ? new MirrorError(m.code, m.error, { hint: m.hint }) : new Error(`Packing an archive failed: ${m.error}`));
      else if ('file' in m) entry?.resolve({ file: m.file, size: m.size, sha256: m.sha256 });
      else entry?.resolve({ data: Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength), sha256: m.sha256, size: m.data.byteLength });
    });
    w.on('error', (error) => fail(new Error(`The archive packing thread failed: ${error.message}`, { cause: error })));
    w.on('messageerror', (error) => fail(new Error(`The archive packing thread sent what could not be read: ${error.message}`, { cause: error })));
    w.on('exit', (code) => fail(new Error(`The archive packing thread stopped (exit ${code}).`)));
    return w;
  };
  return {
    pack(files) {
      if (failure) return Promise.reject(failure);
      worker ??= start();
      const id = nextId++;
      const result = new Promise<PackedArchive>((resolve, reject) => waiting.set(id, { resolve, reject }));
      // The files' bytes cannot be moved: git's object cache hands the same blob to many versions, and small
      // Buffers are slices of Node's shared pool. Posting them copies them, which measured cheaper than
      // gathering them into one buffer of their own to move.
      const posted = files.map((f) =>
        isHeld(f) ? { path: f.path, mode: f.mode, data: f.data } : { path: f.path, mode: f.mode, size: f.size, source: f.source },
      );
      worker.postMessage({ id, files: posted, target: files.every(isHeld) ? '' : target() } satisfies PackRequest);
      return result;
    },
    async close() {
      const w = worker;
      worker = undefined;
      failure ??= new Error('The archive packing thread was closed.');
      await w?.terminate();
    },
  };
}
