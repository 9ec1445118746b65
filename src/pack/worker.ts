// The worker thread of thread.ts: packs each version it is sent, in
// turn, with thread.ts's one rule (packAny).

import { parentPort } from 'node:worker_threads';
import { MirrorError } from '../errors.js';
import { packAny, type PackReply, type PackRequest } from './thread.js';
import type { VersionFile } from '../types.js';

const port = parentPort!;
port.on('message', (request: PackRequest) => void pack(request));

/** Never rejects: a failure is the reply. */
async function pack({ id, files, target }: PackRequest): Promise<void> {
  try {
    const asFiles = files.map((f): VersionFile =>
      'data' in f ? { path: f.path, mode: f.mode, data: Buffer.from(f.data.buffer, f.data.byteOffset, f.data.byteLength) } : f,
    );
    const archive = await packAny(asFiles, () => target);
    if ('file' in archive) {
      port.postMessage({ id, file: archive.file, size: archive.size, sha256: archive.sha256 } satisfies PackReply);
      return;
    }
    // A copy of its own, then moved: gzip's output can be a slice of zlib's larger output buffer or of Node's pool.
    const data = new Uint8Array(archive.data);
    port.postMessage({ id, data, sha256: archive.sha256 } satisfies PackReply, [data.buffer]);
  } catch (error) {
    const code = error instanceof MirrorError ? { code: error.code, ...(error.hint ? { hint: error.hint } : {}) } : {};
    port.postMessage({ id, error: (error as Error).message, ...code } satisfies PackReply);
  }
}
