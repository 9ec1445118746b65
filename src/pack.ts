// Pack stage: one version's files -> a deterministic .tar.gz.
// Same files in, same bytes out: entries sorted by path, a fixed mtime, no
// owner names or ids, modes normalised to 0644/0755, gzip without a timestamp.

import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { Header, Pack, ReadEntry } from 'tar';
import type { PackedArchive, SourceFile } from './types.js';

/** A fixed timestamp for every entry (the tar format needs one; the real date is in the registry documents). */
export const ARCHIVE_MTIME = new Date('2000-01-01T00:00:00Z');

const gzipAsync = promisify(gzip);

export async function packVersion(files: SourceFile[]): Promise<PackedArchive> {
  const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  // Compress with zlib's thread pool rather than on the JS thread, so versions compress in parallel.
  const pack = new Pack({ portable: true, mtime: ARCHIVE_MTIME, noDirRecurse: true });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    pack.on('data', (chunk: Buffer) => chunks.push(chunk));
    pack.on('end', () => resolve(Buffer.concat(chunks)));
    pack.on('error', reject);
  });
  for (const file of sorted) pack.add(entryFor(file));
  pack.end();
  // Output in large pieces: each piece of zlib's output is a round trip through this thread (16 KB by default).
  const data = await gzipAsync(await done, { level: 6, chunkSize: 256 * 1024 });
  return { data, sha256: createHash('sha256').update(data).digest('hex') };
}

function entryFor(file: SourceFile): ReadEntry {
  const header = new Header({
    path: file.path,
    type: 'File',
    mode: file.mode & 0o111 ? 0o755 : 0o644,
    size: file.data.length,
    mtime: ARCHIVE_MTIME,
    uid: 0,
    gid: 0,
  });
  const entry = new ReadEntry(header);
  entry.end(file.data);
  return entry;
}
