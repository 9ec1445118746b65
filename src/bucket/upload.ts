// Uploads a set of objects phase by phase (objects.ts), each phase finished
// before the next starts, `concurrency` objects in flight. Progress goes to a
// terminal; each object done is reported, so a journal can make the next
// attempt skip it.

import { MirrorError } from '../errors.js';
import { sha256 } from './objects.js';
import { crashPoint } from '../mirror/crash.js';
import type { Bucket, ObjectHeaders } from './store.js';
import { PHASES, phaseOf } from '../mirror/write-order.js';

export interface Upload {
  rel: string;
  /** Read when its turn comes, so a large mirror is never held in memory at once. */
  body: () => Buffer;
  headers: ObjectHeaders;
  id: string;
  /**
   * A new archive: stored only if the bucket has no object there, or one
   * with these very bytes. Two writers of one version with other bytes must
   * not replace each other's archive before either manifest is written.
   */
  create?: boolean;
  /**
   * A derived document, derived from the manifest of this generation: stored only over an object of
   * an older one (or none), so a slow writer never replaces what a later writer derived.
   */
  generation?: number;
}

export interface UploadOptions {
  concurrency: number;
  /** After each object is stored. */
  onDone?: (upload: Upload) => void;
  /** A line for a terminal (rewritten in place), or undefined for none. */
  progress?: (line: string) => void;
  /** The count of a write made of several calls (objects before and after its manifest), shared by them. */
  counted?: { total: number; done: number };
}

/** The progress line of a write's uploads, its manifest among them when the write counts it. */
export function progressLine(count: { total: number; done: number }): string {
  return `uploaded ${count.done}/${count.total} objects`;
}

export async function uploadInOrder(bucket: Bucket, uploads: Upload[], options: UploadOptions): Promise<void> {
  const count = options.counted ?? { total: uploads.length, done: 0 };
  const show = () => options.progress?.(progressLine(count));
  let done = 0;
  for (const phase of PHASES) {
    const batch = uploads.filter((u) => phaseOf(u.rel) === phase);
    let next = 0;
    const worker = async () => {
      while (next < batch.length) {
        const upload = batch[next++]!;
        await store(bucket, upload);
        count.done += 1;
        // Halfway through this call's objects: for a write, those stored before its manifest.
        if (++done === Math.ceil(uploads.length / 2)) crashPoint('upload-half');
        options.onDone?.(upload);
        if (count.done % 25 === 0 || count.done === count.total) show();
      }
    };
    await Promise.all(Array.from({ length: Math.min(options.concurrency, batch.length) }, worker));
  }
}

async function store(bucket: Bucket, upload: Upload): Promise<void> {
  const body = upload.body();
  if (upload.generation !== undefined) return storeDerived(bucket, upload, body, upload.generation);
  if (!upload.create) return bucket.put(upload.rel, body, upload.headers);
  let there;
  // A lost write with nothing there after it (a 500 that stored nothing, AWS's 409 for a write still in flight) is tried again.
  for (let tries = 0; tries < 5 && there === undefined; tries++) {
    if ((await bucket.putIf(upload.rel, body, upload.headers, { ifNoneMatch: '*' })) !== 'lost') return;
    there = await bucket.get(upload.rel);
  }
  if (there === undefined) {
    throw new MirrorError(
      'OUTPUT_FAILED',
      `Could not write ${bucket.name(upload.rel)}: the store refused it 5 times (HTTP 412, 409 or 500) yet holds nothing there.`,
      {
        hint: 'Run it again; if it keeps failing, check the store.',
      },
    );
  }
  if (there.body.equals(body)) return;
  throw new MirrorError(
    'VERSION_CONFLICT',
    `${bucket.name(upload.rel)} is already in the bucket with other bytes, and its manifest does not list it yet: another writer is publishing this version with other content, or one was interrupted doing so.\n  in the bucket: sha256 ${sha256(there.body)}\n  this one:      sha256 ${sha256(body)}`,
    {
      hint: 'Publish a new version number. If no other publish of this version is running, delete that object and publish again.',
    },
  );
}

async function storeDerived(bucket: Bucket, upload: Upload, body: Buffer, generation: number): Promise<void> {
  for (let tries = 0; tries < 10; tries++) {
    const there = await bucket.head(upload.rel);
    // Derived from the same manifest (the same bytes) or a later one: it stays.
    if (there && (there.generation ?? 0) >= generation) return;
    const condition = there ? { ifMatch: there.etag } : ({ ifNoneMatch: '*' } as const);
    if ((await bucket.putIf(upload.rel, body, upload.headers, condition, generation)) !== 'lost') return;
  }
  throw new MirrorError('OUTPUT_FAILED', `Could not write ${bucket.name(upload.rel)}: other writers kept replacing it (10 tries).`, {
    hint: 'The change is live; the next write into this mirror, or modmirror verify --repair, writes it again.',
  });
}
