// Packing off the build's own thread, the one everything else waits on. A
// build packs every new version: there, laying out each tar and taking zlib's
// output cost that thread time, and zlib's pool compressed several archives at
// once beside it, competing with it for two cores. One worker thread packs
// them in turn instead, with pack.ts's one rule. A publish packs one version,
// less work than starting a thread costs, so it packs where it is.

import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { packVersion } from './index.js';
import type { PackedArchive, SourceFile } from '../types.js';
import { PACKAGE_ROOT } from '../version.js';

/** The compiled worker, also when this code runs bundled into the CLI (lib/cli-bundle/) or from src/ in tests. */
const PACK_WORKER = join(PACKAGE_ROOT, 'lib/pack/worker.js');

export interface Packer {
  pack(files: SourceFile[]): Promise<PackedArchive>;
  /** Stops the packing thread, if any. */
  close(): Promise<void>;
}

/** What the worker is sent: each file's bytes arrive as a plain Uint8Array. */
export interface PackRequest {
  id: number;
  files: { path: string; mode: number; data: Uint8Array }[];
}

export type PackReply = { id: number; data: Uint8Array; sha256: string; error?: undefined } | { id: number; error: string };

export function inlinePacker(): Packer {
  return { pack: async (files) => packVersion(files), close: async () => {} };
}

/**
 * Started on the first version to pack, so a build that takes everything from
 * the cache starts no thread. Once the thread fails, every pack waiting and
 * every later one is refused with the reason, so the build stops instead of
 * waiting for an answer that will not come.
 */
export function threadPacker(): Packer {
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
      if (m.error !== undefined) entry?.reject(new Error(`Packing an archive failed: ${m.error}`));
      else entry?.resolve({ data: Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength), sha256: m.sha256 });
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
      worker.postMessage({ id, files: files.map((f) => ({ path: f.path, mode: f.mode, data: f.data })) } satisfies PackRequest);
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
