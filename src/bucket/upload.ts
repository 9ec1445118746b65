// Uploads a set of objects phase by phase (objects.ts), each phase finished
// before the next starts, `concurrency` objects in flight. Progress goes to a
// terminal; each object done is reported, so a journal can make the next
// attempt skip it.

import type { Bucket, ObjectHeaders } from './store.js';
import { PHASES, phaseOf } from './objects.js';

export interface Upload {
  rel: string;
  /** Read when its turn comes, so a large mirror is never held in memory at once. */
  body: () => Buffer;
  headers: ObjectHeaders;
  id: string;
}

export interface UploadOptions {
  concurrency: number;
  /** After each object is stored. */
  onDone?: (upload: Upload) => void;
  /** A line for a terminal (rewritten in place), or undefined for none. */
  progress?: (line: string) => void;
}

export async function uploadInOrder(bucket: Bucket, uploads: Upload[], options: UploadOptions): Promise<void> {
  let done = 0;
  const show = () => options.progress?.(`uploaded ${done}/${uploads.length} objects`);
  for (const phase of PHASES) {
    const batch = uploads.filter((u) => phaseOf(u.rel) === phase);
    let next = 0;
    const worker = async () => {
      while (next < batch.length) {
        const upload = batch[next++]!;
        await bucket.put(upload.rel, upload.body(), upload.headers);
        done += 1;
        options.onDone?.(upload);
        if (done % 25 === 0 || done === uploads.length) show();
      }
    };
    await Promise.all(Array.from({ length: Math.min(options.concurrency, batch.length) }, worker));
  }
}

/** Progress on stderr when it is a terminal: one line rewritten in place. */
export function terminalProgress(enabled: boolean): ((line: string) => void) | undefined {
  if (!enabled || !process.stderr.isTTY) return undefined;
  return (line) => process.stderr.write(`\r\x1b[K${line}`);
}
