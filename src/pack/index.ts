// Pack stage: one version's files -> a deterministic .tar.gz.
// Same files in, same bytes out: entries sorted by path, a fixed mtime, no
// owner names or ids, modes normalised to 0644/0755, gzip without a timestamp.

import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { Header, Pax } from 'tar';
import { isTextName, nameBytes } from '../scan/names.js';
import type { HeldArchive, SourceFile } from '../types.js';

/** A fixed timestamp for every entry (the tar format needs one; the real date is in the registry documents). */
export const ARCHIVE_MTIME = new Date('2000-01-01T00:00:00Z');

export const BLOCK = 512;
/** zlib's bounds on an output piece, within Node's limits: large pieces are fewer to gather for a large archive. */
const MIN_CHUNK = 1024;
export const MAX_CHUNK = 256 * 1024;
/** The one gzip setting: the archives published so far were compressed with it, and their sha256 must not change. */
export const GZIP_LEVEL = 6;
/** A tar archive ends with two zero blocks. */
export const END_BLOCKS = 2 * BLOCK;

/**
 * Synchronous: a build packs on its own packing thread (thread.ts), one
 * version after another, and a publish packs its one version with nothing
 * else to do meanwhile. zlib's asynchronous gzip cost more there: its thread
 * pool's compressions competed with the build's other threads for the cores,
 * and each round trip cost this thread some work.
 */
export function packVersion(files: SourceFile[]): HeldArchive {
  const tar = tarOf(files);
  // gzip's output buffer is allocated whole for each archive: one the tar's size (a compressed tar is smaller)
  // holds it in one piece without making a 256 KB buffer of garbage for each of a build's many small archives.
  const data = gzipSync(tar, { level: GZIP_LEVEL, chunkSize: Math.min(Math.max(tar.length, MIN_CHUNK), MAX_CHUNK) });
  return { data, sha256: createHash('sha256').update(data).digest('hex'), size: data.length };
}

/**
 * The tar, laid out in one buffer: tar's own Header and Pax encode each
 * entry's header blocks exactly as its portable Pack would (the tests compare
 * the two byte for byte); only Pack's stream per entry is left out, which
 * cost more than the gzip on this thread.
 */
function tarOf(files: SourceFile[]): Buffer {
  const sorted = sortedByPath(files);
  const headers = sorted.map((f) => headerBlocks(f.path, f.mode, f.data.length));
  let size = END_BLOCKS;
  sorted.forEach((file, i) => (size += headers[i]!.length + padded(file.data.length)));
  const tar = Buffer.alloc(size);
  let at = 0;
  sorted.forEach((file, i) => {
    at += headers[i]!.copy(tar, at);
    file.data.copy(tar, at);
    at += padded(file.data.length);
  });
  return tar;
}

/** The archive's one order of entries. */
export const sortedByPath = <F extends { path: string }>(files: F[]): F[] => [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));

export const padded = (n: number) => Math.ceil(n / BLOCK) * BLOCK;

/** The entry's header block, after a pax header when a field does not fit the ustar header (a long path). */
export function headerBlocks(filePath: string, fileMode: number, size: number): Buffer {
  // A name that is not UTF-8 (scan/names.ts) is laid out under an ASCII stand-in of as many bytes, so the
  // header splits it and sizes its pax record exactly as it would the name; then the name's own bytes go in.
  const raw = isTextName(filePath) ? undefined : nameBytes(filePath);
  const path = raw === undefined ? filePath : raw.toString('latin1').replace(/[^\x00-\x7f]/g, '_');
  const fields = { path, mode: fileMode & 0o111 ? 0o755 : 0o644, size, mtime: ARCHIVE_MTIME, type: 'File' as const };
  const header = new Header(fields);
  const needsPax = header.encode();
  const block = header.block!;
  if (raw !== undefined && !needsPax) putUstarName(block, raw);
  if (!needsPax) return block;
  const pax = new Pax({ path: fields.path, size: fields.size, mtime: fields.mtime }).encode();
  // Go's archive/tar, which go-getter unpacks with, and GNU tar take a pax path's bytes as they are.
  if (raw !== undefined) raw.copy(pax, pax.indexOf(' path=', BLOCK) + ' path='.length);
  return Buffer.concat([pax, block]);
}

/**
 * The name's bytes into a ustar header laid out for its stand-in: its last
 * bytes in the name field, its first in the prefix field, as many as the
 * stand-in filled; then the checksum again, as tar's Header computes it.
 */
function putUstarName(block: Buffer, raw: Buffer): void {
  const filled = (start: number, size: number) => {
    const nul = block.indexOf(0, start);
    return nul === -1 || nul >= start + size ? size : nul - start;
  };
  const nameLength = filled(0, 100);
  const prefixLength = filled(345, 155);
  raw.copy(block, 0, raw.length - nameLength);
  raw.copy(block, 345, 0, prefixLength);
  let sum = 8 * 0x20;
  for (let i = 0; i < BLOCK; i++) if (i < 148 || i >= 156) sum += block[i]!;
  block.write(`${sum.toString(8).padStart(6, '0')} \0`, 148, 8, 'ascii');
}
