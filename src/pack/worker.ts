// The worker thread of thread.ts: packs each version it is sent, in
// turn, with pack.ts's rule.

import { parentPort } from 'node:worker_threads';
import { packVersion } from './index.js';
import type { PackReply, PackRequest } from './thread.js';

const port = parentPort!;
port.on('message', ({ id, files }: PackRequest) => {
  try {
    const archive = packVersion(files.map((f) => ({ path: f.path, mode: f.mode, data: Buffer.from(f.data.buffer, f.data.byteOffset, f.data.byteLength) })));
    // A copy of its own, then moved: gzip's output can be a slice of zlib's larger output buffer or of Node's pool.
    const data = new Uint8Array(archive.data);
    port.postMessage({ id, data, sha256: archive.sha256 } satisfies PackReply, [data.buffer]);
  } catch (error) {
    port.postMessage({ id, error: (error as Error).message } satisfies PackReply);
  }
});
