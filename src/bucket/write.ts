// A change to a mirror in a bucket (publish, deprecate), safe with many
// writers at once and with no lock: read the bucket's manifest (and its
// ETag) and the documents the change reads into a folder, let the local
// writer change that folder as it changes any mirror (with its ledger check),
// upload what it changed in order, then write the manifest only if the
// bucket's is still the one read. A writer that loses (412, or the 500 Ceph
// RGW gives some losers) reads again and does its change again, so N writers
// of N different versions all land, each once.

import { mkdtempSync, readFileSync, realpathSync, rmSync, statSync, truncateSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { MirrorError } from '../errors.js';
import { crashPoint } from '../mirror/crash.js';
import { PHASES, phaseOf } from '../mirror/write-order.js';
import { parseManifest, type Manifest } from '../mirror/manifest.js';
import { MANIFEST_FILE } from '../protocol/paths.js';
import { describeBucket } from './location.js';
import { objectHeaders, objectId, parseRecord, RECORD_HEADERS, recordFile, recordText, type ObjectRecord } from './objects.js';
import { filesOf } from './push.js';
import type { Bucket } from './store.js';
import { uploadInOrder, type Upload } from './upload.js';

export interface BucketReads {
  /** Files the local writer reads; those the bucket lacks are left out. */
  files: string[];
  /**
   * Files it only checks by size (a module's archives, which its documents
   * point at): stand-ins of that size, never uploaded, since the bucket has
   * the real ones.
   */
  standIns: { rel: string; size: number }[];
}

export interface BucketWrite<R> {
  /** What to fetch, given the bucket's manifest (undefined for a new mirror). */
  reads(manifest: Manifest | undefined): BucketReads;
  /** The local writer, on the fetched mirror in `dir`; `attempt` counts from 1. */
  write(dir: string, attempt: number): Promise<R>;
  /** True when the write found nothing to change (the version is there already): nothing is uploaded. */
  unchanged(result: R): boolean;
}

export interface BucketWriteOptions {
  /** A bucket with no manifest gets a new mirror, rather than an error. */
  newMirror?: boolean;
  dryRun?: boolean;
  concurrency?: number;
  /** Tries before giving up on a busy bucket. */
  attempts?: number;
}

export interface BucketWriteResult {
  /** Objects uploaded, in order, the manifest last. */
  uploaded: string[];
  /** How many times the change was made: 1 unless other writers won the race first. */
  attempts: number;
}

export async function writeToBucket<R>(bucket: Bucket, job: BucketWrite<R>, options: BucketWriteOptions = {}): Promise<R & BucketWriteResult> {
  const attempts = options.attempts ?? 30;
  // Objects this writer stored in an attempt that lost: the next attempt stores them again whatever the record says.
  const dirty = new Map<string, string>();
  for (let attempt = 1; ; attempt++) {
    const began = performance.now();
    const outcome = await attemptWrite(bucket, job, options, dirty, attempt);
    if (outcome.done) return { ...outcome.result, attempts: attempt };
    if (attempt >= attempts) {
      throw new MirrorError('LOCK_BUSY', `${bucket.name(MANIFEST_FILE)} kept changing under this write: ${attempts} tries, each lost to another writer.`, {
        hint: 'Try again; nothing of this change is live.',
      });
    }
    // Writers that lost together should not meet again at once: each waits a random part of a
    // window that grows with its losses, in units of its own attempt's length (what a winner takes).
    const window = (performance.now() - began) * Math.min(attempt, 4);
    await new Promise((r) => setTimeout(r, Math.random() * Math.min(window, 5000)));
  }
}

type Attempt<R> = { done: true; result: R & Omit<BucketWriteResult, 'attempts'> } | { done: false };

async function attemptWrite<R>(
  bucket: Bucket,
  job: BucketWrite<R>,
  options: BucketWriteOptions,
  dirty: Map<string, string>,
  attempt: number,
): Promise<Attempt<R>> {
  const remote = await bucket.get(MANIFEST_FILE);
  if (!remote && options.newMirror !== true) {
    throw new MirrorError('USAGE', `There is no mirror at ${describeBucket(bucket.location)} (no ${MANIFEST_FILE}).`, {
      hint: 'Check the bucket URL and --endpoint. To start a new mirror there with this write, pass --new-mirror.',
    });
  }
  let manifest: Manifest | undefined;
  try {
    manifest = remote ? parseManifest(remote.body.toString('utf8')) : undefined;
  } catch (error) {
    throw new MirrorError('OUTPUT_FAILED', `${bucket.name(MANIFEST_FILE)} is not a modmirror manifest: ${(error as Error).message}`, { cause: error });
  }
  const recordBody = remote ? (await bucket.get(recordFile(remote.body)))?.body : undefined;
  const record: ObjectRecord = parseRecord(recordBody) ?? { format: 1, objects: {} };
  const objectOptions = { terraformGet: record.options?.terraformGet === true };

  const temp = mkdtempSync(join(tmpdir(), 'modmirror-bucket-'));
  try {
    const dir = join(temp, 'mirror');
    const known = new Map(Object.entries(record.objects));
    const fetched = new Map<string, number>();
    const reads = job.reads(manifest);
    if (remote) {
      const bodies = await fetchAll(bucket, reads.files, options.concurrency ?? 16);
      for (const [rel, body] of [[MANIFEST_FILE, remote.body] as const, ...bodies]) {
        place(dir, rel, body);
        known.set(rel, objectId(body, objectHeaders(rel, body, objectOptions)));
        fetched.set(rel, statSync(join(dir, rel)).ino);
      }
      for (const { rel, size } of reads.standIns) {
        place(dir, rel, Buffer.alloc(0));
        truncateSync(join(dir, rel), size);
        fetched.set(rel, statSync(join(dir, rel)).ino);
      }
    }
    const standIns = new Set(reads.standIns.map((s) => s.rel));
    const result = await job.write(dir, attempt);
    if (job.unchanged(result) || options.dryRun) return { done: true, result: { ...result, uploaded: [] } };

    // What the writer wrote is a new file; what it left is still the fetched one (a hard link to it).
    const root = realpathSync(dir);
    const uploads: Upload[] = [];
    const objects: Record<string, string> = { ...record.objects };
    for (const rel of filesOf(root)) {
      const file = join(root, rel);
      if (fetched.get(rel) === statSync(file).ino || rel === MANIFEST_FILE) continue;
      if (standIns.has(rel)) throw new Error(`the writer replaced the stand-in ${rel}`);
      const body = readFileSync(file);
      const headers = objectHeaders(rel, body, objectOptions);
      const id = objectId(body, headers);
      objects[rel] = id;
      const archive = phaseOf(rel) === 'archives';
      // A document this writer stored in a lost attempt may have replaced the winner's: stored again.
      // An archive it stored is still its bytes (stored only if new, below), so it is not.
      const stored = known.get(rel) === id || (archive && dirty.get(rel) === id);
      if (!stored || (dirty.has(rel) && !archive)) uploads.push({ rel, body: () => readFileSync(file), headers, id, create: archive && !known.has(rel) });
    }
    // Another writer won while this one worked: nothing uploaded yet, so the redo costs no more than it must.
    if (remote && (await bucket.etag(MANIFEST_FILE)) !== remote.etag) return { done: false };
    await uploadInOrder(bucket, uploads, { concurrency: options.concurrency ?? 16, onDone: (u) => dirty.set(u.rel, u.id) });
    const manifestBytes = readFileSync(join(root, MANIFEST_FILE));
    await bucket.put(recordFile(manifestBytes), recordText({ ...record, objects }), RECORD_HEADERS);
    crashPoint('before-manifest');
    const written = await bucket.putIf(
      MANIFEST_FILE,
      manifestBytes,
      objectHeaders(MANIFEST_FILE, manifestBytes, objectOptions),
      remote ? { ifMatch: remote.etag } : { ifNoneMatch: '*' },
    );
    // A 500 may hide a write that landed: the manifest read back says.
    if (written === 'lost' && !(await bucket.get(MANIFEST_FILE))?.body.equals(manifestBytes)) return { done: false };
    // The record of the replaced manifest is no longer the live one's; a writer still reading it will lose its race.
    if (remote) await bucket.remove([recordFile(remote.body)]).catch(() => undefined);
    return {
      done: true,
      result: { ...result, uploaded: [...PHASES.flatMap((p) => uploads.filter((u) => phaseOf(u.rel) === p).map((u) => u.rel)), MANIFEST_FILE] },
    };
  } finally {
    rmSync(temp, { recursive: true, force: true, maxRetries: 5 });
  }
}

function place(dir: string, rel: string, body: Buffer): void {
  mkdirSync(dirname(join(dir, rel)), { recursive: true });
  writeFileSync(join(dir, rel), body);
}

async function fetchAll(bucket: Bucket, rels: string[], concurrency: number): Promise<[string, Buffer][]> {
  const out: [string, Buffer][] = [];
  let next = 0;
  const worker = async () => {
    while (next < rels.length) {
      const rel = rels[next++]!;
      const object = await bucket.get(rel);
      if (object) out.push([rel, object.body]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, rels.length) }, worker));
  return out;
}
