// Packing a version with large files (scan/large.ts): the same tar as
// packVersion's, entry by entry, through a gzip stream with the same settings
// and into a file, hashed on the way. zlib's deflate takes no decision from
// how its input is split (it waits for a full lookahead unless flushed), so
// the bytes are packVersion's (the tests compare the two); memory is a few
// chunks whatever the file's size.

import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { MirrorError } from '../errors.js';
import { openLarge } from '../scan/large.js';
import { showName } from '../scan/names.js';
import { isHeld, type FileArchive, type VersionFile } from '../types.js';
import { END_BLOCKS, GZIP_LEVEL, headerBlocks, MAX_CHUNK, padded, sortedByPath } from './index.js';

/** Writes the archive to `target` (removed again on failure). */
export async function packVersionToFile(files: VersionFile[], target: string): Promise<FileArchive> {
  const hash = createHash('sha256');
  let size = 0;
  try {
    await pipeline(
      tarEntries(sortedByPath(files)),
      createGzip({ level: GZIP_LEVEL, chunkSize: MAX_CHUNK }),
      async function* (compressed: AsyncIterable<Buffer>) {
        for await (const chunk of compressed) {
          hash.update(chunk);
          size += chunk.length;
          yield chunk;
        }
      },
      createWriteStream(target),
    );
  } catch (error) {
    await rm(target, { force: true });
    throw error;
  }
  return { file: target, sha256: hash.digest('hex'), size };
}

/** The tar in pieces: each entry's header, its bytes (a large file's as read), its padding; then the end blocks. */
async function* tarEntries(files: VersionFile[]): AsyncGenerator<Buffer> {
  for (const file of files) {
    const size = isHeld(file) ? file.data.length : file.size;
    yield headerBlocks(file.path, file.mode, size);
    if (isHeld(file)) {
      if (size > 0) yield file.data;
    } else {
      let read = 0;
      for await (const chunk of openLarge(file.source)) {
        read += (chunk as Buffer).length;
        // The header already gave the size: a file that grew would spill into the next entry.
        if (read > size) break;
        yield chunk as Buffer;
      }
      if (read !== size) {
        throw new MirrorError(
          'VERSION_READ_FAILED',
          `${showName(file.path)} changed while it was packed: ${size} bytes when listed, ${read > size ? 'more' : read} now.`,
          {
            hint: 'Build again once nothing writes to the module folder.',
          },
        );
      }
    }
    const padding = padded(size) - size;
    if (padding > 0) yield Buffer.alloc(padding);
  }
  yield Buffer.alloc(END_BLOCKS);
}
