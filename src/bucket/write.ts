// A change to a mirror in a bucket (publish, deprecate), safe with many
// writers at once and with no lock. Each module's state is the truth of that
// module; every other document is derived from the states and the root
// (manifest.json). So a write goes in three steps:
//
// 1. Read the root, the states of the modules the change touches and what
//    their documents and listings are written from into a folder, and let the
//    local writer change that folder as it changes any mirror (with its
//    ledger check). Upload only the objects the bucket does not have yet: the
//    new version's archive (stored only if new) and its own documents, which
//    no listing names yet.
// 2. Store each changed module's state only if the bucket's is still the one
//    read: that commits the change. Writers of other modules never meet here;
//    a writer of the same module that loses reads again and does its change
//    again. Then record the change in the root (its recent versions and a new
//    generation), over whatever root is live, until one lands.
// 3. Only then upload what lists versions or replaces an object (versions
//    files, other details, listings), derived from the truth that won. If the
//    root changed meanwhile, those may have overwritten a later writer's, so
//    they are derived again from the truth now there, until it stands still:
//    the last documents written are always derived from the last truth.
//
// A writer killed after step 2 leaves derived documents behind its truth; its
// pending marker (.modmirror/pending/) names its modules, and the next writer
// derives them again. One killed before leaves only objects no listing names.
// The record of what the bucket holds (objects.ts) is written in parts as
// the truth is: a module's part before its state, the root part before the root.

import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, realpathSync, rmSync, statSync, truncateSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { MirrorError } from '../errors.js';
import { crashPoint } from '../mirror/crash.js';
import { inWriteOrder, phaseOf } from '../mirror/write-order.js';
import { isTruthSignature, TRUTH_SIGNATURE_SUFFIX } from '../mirror/signed.js';
import { signBytes } from '../openpgp/detached.js';
import type { PrivateSigningKey } from '../openpgp/keys.js';
import {
  isTruthFile,
  manifestTextWithGeneration,
  MODULE_STATES_DIR,
  moduleOfStateFile,
  moduleStateFile,
  nextGeneration,
  parseManifest,
  parseModuleState,
  readManifest,
  recentVersions,
  type Manifest,
  type ModuleState,
} from '../mirror/manifest.js';
import { BROWSE_MODULES_DIR, browsePageFile, browsePageListFile, parsePageList } from '../browse/pages.js';
import { MANIFEST_FILE, MODULES_BASE, parseAddressKey, V2_MODULES_BASE } from '../protocol/paths.js';
import { describeBucket } from './location.js';
import {
  filesOf,
  joinClaims,
  moduleRecordFile,
  objectHeaders,
  objectId,
  parseRecord,
  RECORD_HEADERS,
  RECORD_PREFIX,
  recordFile,
  recordText,
  splitClaims,
  type ObjectOptions,
  type ObjectRecord,
} from './objects.js';
import { moduleReads } from './reads.js';
import { browseReads } from './browse-reads.js';
import type { Bucket, StoredObject } from './store.js';
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
  /** The modules (`ns/name/provider`) the write changes: what its pending marker names, and what it derives again. */
  modules: string[];
  /** The write reads every module (a repair): every state is fetched. */
  whole?: boolean;
  /** Derives the documents of `keys` and every index again from the truth in the fetched mirror in `dir` (refreshModules). */
  refresh(dir: string, keys: string[]): Promise<unknown>;
}

export interface BucketWriteOptions {
  /** A bucket with no manifest gets a new mirror, rather than an error. */
  newMirror?: boolean;
  dryRun?: boolean;
  concurrency?: number;
  /** Tries before giving up on a busy bucket. */
  attempts?: number;
  /** Compare with the objects fetched only, not with what the manifest's record says is stored (a repair). */
  distrustRecord?: boolean;
  /** Signs the truth the write makes live, FILE.asc beside each (mirror/signed.ts); without it, a signed mirror's truth is not changed. */
  signer?: PrivateSigningKey;
}

export interface BucketWriteResult {
  /** Objects uploaded, in order: new objects, the manifest, then what was derived from it. */
  uploaded: string[];
  /** How many times the change was made: 1 unless other writers won the race first. */
  attempts: number;
}

/** Where writers leave the names of the modules they are changing, until their derived documents are written. */
export const PENDING_PREFIX = `${RECORD_PREFIX}pending/`;
/** A marker this old is a dead writer's: the writer that derives its modules again deletes it. */
const PENDING_STALE_MS = 60 * 60 * 1000;

export async function writeToBucket<R>(bucket: Bucket, job: BucketWrite<R>, options: BucketWriteOptions = {}): Promise<R & BucketWriteResult> {
  const attempts = options.attempts ?? 30;
  // Objects this writer stored in an attempt that lost: the next attempt stores them again whatever the record says.
  const dirty = new Map<string, string>();
  const marker = pendingMarker(bucket, job.modules);
  let live = false;
  try {
    for (let attempt = 1; ; attempt++) {
      const began = performance.now();
      const outcome = await attemptWrite(bucket, job, options, dirty, attempt, { beforeUploads: marker.put, committed: () => (live = true) });
      if (outcome.done) {
        const { result, committed } = outcome;
        // Lost a race to a writer of the very same change: what this one stored before losing may have landed after the winner's.
        // A write that finds its change made (by itself, killed after its commit, or another writer) heals what markers name.
        const heal = committed || dirty.size > 0 || (await pendingMarkers(bucket)).length > 0;
        const derived = heal ? await deriveAfterCommit(bucket, job, committed, options, marker.rel) : [];
        // Last, once the root has stopped changing under this write (healing may have rewritten it too).
        const signed = options.signer ? await signLiveTruth(bucket, result.uploaded.filter(isTruthFile), options.signer) : [];
        await marker.remove();
        return { ...result, uploaded: [...result.uploaded, ...derived, ...signed], attempts: attempt };
      }
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
  } catch (error) {
    // Nothing of this write is live: its marker would only make the next writer derive what needs no deriving.
    if (!live) await marker.remove().catch(() => undefined);
    throw error;
  }
}

export interface Committed {
  /** The ETag of the manifest a writer made live, from which it derived and uploaded its documents. */
  etag: string;
}

type Attempt<R> = { done: true; result: R & Pick<BucketWriteResult, 'uploaded'>; committed?: Committed } | { done: false };

async function attemptWrite<R>(
  bucket: Bucket,
  job: BucketWrite<R>,
  options: BucketWriteOptions,
  dirty: Map<string, string>,
  attempt: number,
  on: { beforeUploads: () => Promise<void>; committed: () => void },
): Promise<Attempt<R>> {
  const remote = await bucket.get(MANIFEST_FILE);
  if (!remote && options.newMirror !== true) {
    throw new MirrorError('USAGE', `There is no mirror at ${describeBucket(bucket.location)} (no ${MANIFEST_FILE}).`, {
      hint: 'Check the bucket URL and --endpoint. To start a new mirror there with this write, pass --new-mirror.',
    });
  }
  const manifest = remote ? parseRemoteManifest(bucket, remote.body) : undefined;
  const recordBody = remote ? (await bucket.get(recordFile(remote.body)))?.body : undefined;
  const record: ObjectRecord = parseRecord(recordBody) ?? { format: 1, objects: {} };
  const objectOptions = { terraformGet: record.options?.terraformGet === true };

  return withFetched(
    bucket,
    remote,
    manifest,
    job.whole ? 'all' : job.modules,
    (part) => job.reads(part),
    options,
    objectOptions,
    async (mirror) => {
      // The record's parts of the modules this write changes, named by the states it read.
      const parts = new Map<string, { rel: string; claims: Record<string, string> | undefined }>();
      for (const key of job.modules) {
        if (!mirror.known.has(moduleStateFile(key))) continue;
        const rel = moduleRecordFile(key, readFileSync(mirror.at(moduleStateFile(key))));
        parts.set(key, { rel, claims: parseRecord((await bucket.get(rel))?.body)?.objects });
      }
      const claims = joinClaims(record.objects, new Map([...parts].map(([key, part]) => [key, part.claims])), { families: false });
      const result = await job.write(mirror.dir, attempt);
      if (job.unchanged(result) || options.dryRun) return { done: true, result: { ...result, uploaded: [] } };

      const before: Upload[] = [];
      const after: Upload[] = [];
      const states: Upload[] = [];
      // The generation of the manifest this write makes live, and so of what it derived.
      const generation = nextGeneration(manifest);
      const objects: Record<string, string> = { ...claims };
      // What the bucket holds: what was fetched, and what the record says was stored.
      const known = new Map([...(options.distrustRecord ? [] : Object.entries(claims)), ...mirror.known]);
      for (const upload of mirror.written()) {
        const { rel, id } = upload;
        // A truth file's signature is made again over the bytes that land (signLiveTruth): the root gets a new generation there.
        if (isTruthSignature(rel)) continue;
        if (moduleOfStateFile(rel) !== undefined) {
          states.push(upload);
          objects[rel] = id;
          continue;
        }
        const archive = phaseOf(rel) === 'archives';
        const isNew = !known.has(rel);
        if (isNew && (archive || phaseOf(rel) === 'documents')) {
          // A new object no listing names yet. An archive is stored only if new (upload.ts), so one this
          // writer stored in a lost attempt is still its bytes; a document is stored again.
          if (!(archive && dirty.get(rel) === id)) before.push({ ...upload, create: archive });
          objects[rel] = id;
          // Its own documents are written again after the commit: a writer of the same change that lost may have replaced them.
          if (!archive) after.push({ ...upload, generation });
        } else if (known.get(rel) !== id) {
          after.push({ ...upload, generation });
          // Not known to be in the bucket until it is derived after the commit: a push uploads it again.
          delete objects[rel];
        }
      }
      const upgrade = manifest !== undefined && manifest.format < 3;
      const written = parseManifest(readFileSync(mirror.at(MANIFEST_FILE), 'utf8'));
      // Only modules changed: their states commit the change, and the manifest follows whatever is live then.
      const modulesOnly = remote !== undefined && !upgrade && states.length > 0 && sameRoot(manifest!, written);
      // Another writer changed the manifest while this one worked: nothing uploaded yet, so the redo costs no more than it must.
      if (remote && !modulesOnly && (await bucket.etag(MANIFEST_FILE)) !== remote.etag) return { done: false };
      await on.beforeUploads();
      await uploadInOrder(bucket, before, { concurrency: options.concurrency ?? 16, onDone: (u) => dirty.set(u.rel, u.id) });
      // Each module whose state this write stores gets its part of the record, named by that state, before it.
      const split = splitClaims(
        objects,
        states.map((u) => moduleOfStateFile(u.rel)!),
      );

      // The truth. Each module's state is stored only over the one this write read (or where there was none):
      // that is the commit of its change, and writers of other modules never meet here. A mirror whose manifest
      // is older than format 3 reads no states yet: they are stored as they are, and its manifest's write commits them.
      for (const state of states) {
        const key = moduleOfStateFile(state.rel)!;
        const part = moduleRecordFile(key, state.body());
        await bucket.put(part, recordText({ format: 1, objects: split.part(key) }), RECORD_HEADERS);
        const replaced = parts.get(key)?.rel;
        if (upgrade) {
          await bucket.put(state.rel, state.body(), state.headers);
          continue;
        }
        const etag = mirror.etags.get(state.rel);
        crashPoint('before-state');
        const stored = await bucket.putIf(state.rel, state.body(), state.headers, etag !== undefined ? { ifMatch: etag } : { ifNoneMatch: '*' });
        // A 500 may hide a write that landed: the state read back says.
        if (stored === 'lost' && !(await bucket.get(state.rel))?.body.equals(state.body())) {
          await bucket.remove([part]).catch(() => undefined);
          return { done: false };
        }
        on.committed();
        // The part of the state replaced is no longer the live one's.
        if (replaced !== undefined && replaced !== part) await bucket.remove([replaced]).catch(() => undefined);
      }
      let etag: string;
      let stamped = generation;
      // False when others' changes were recorded after this write read the bucket: what it derived misses them.
      let current = true;
      if (modulesOnly) {
        let over: string;
        ({ etag, generation: stamped, over } = await announce(bucket, states, record, split.root, objectOptions));
        current = over === remote.etag;
      } else {
        const manifestBytes = manifestTextWithGeneration(written, generation);
        await bucket.put(recordFile(manifestBytes), recordText({ ...record, objects: split.root }), RECORD_HEADERS);
        crashPoint('before-manifest');
        const put = await bucket.putIf(
          MANIFEST_FILE,
          manifestBytes,
          objectHeaders(MANIFEST_FILE, manifestBytes, objectOptions),
          remote ? { ifMatch: remote.etag } : { ifNoneMatch: '*' },
        );
        if (put !== 'lost') etag = put.etag;
        else {
          // A 500 may hide a write that landed: the manifest read back says.
          const now = await bucket.get(MANIFEST_FILE);
          if (!now?.body.equals(manifestBytes)) return { done: false };
          etag = now.etag;
        }
        on.committed();
        // The record of the replaced manifest is no longer the live one's; a writer still reading it will lose its race.
        if (remote) await bucket.remove([recordFile(remote.body)]).catch(() => undefined);
      }
      // Step 3 begins: what this writer derived, unless a later manifest is live already (then it derives
      // again from that one, rather than replacing a later writer's documents).
      if (current && (await bucket.etag(MANIFEST_FILE)) === etag) {
        await uploadInOrder(
          bucket,
          after.map((u) => ({ ...u, generation: stamped })),
          { concurrency: options.concurrency ?? 16 },
        );
      } else after.length = 0;
      const uploaded = [
        ...new Set([...inWriteOrder(before.map((u) => u.rel)), ...states.map((u) => u.rel), MANIFEST_FILE, ...inWriteOrder(after.map((u) => u.rel))]),
      ];
      // Derived again from the truth as it is now (deriveAfterCommit) when this write's was not the latest.
      return { done: true, result: { ...result, uploaded }, committed: current ? { etag } : { etag: '' } };
    },
  );
}

/**
 * Signs each of `rels` (module states and the root) as the bucket holds it
 * now, and stores the signature beside it, FILE.asc; then again while the
 * object changed meanwhile. Another writer that replaced it signs its own
 * after its commit, so whichever writer signs last signs the live bytes.
 * Returns the signatures stored.
 */
export async function signLiveTruth(bucket: Bucket, rels: string[], signer: PrivateSigningKey): Promise<string[]> {
  const stored: string[] = [];
  for (const rel of rels) {
    const signature = rel + TRUTH_SIGNATURE_SUFFIX;
    for (let round = 1; ; round++) {
      const live = await bucket.get(rel);
      if (!live) break;
      const body = Buffer.from(await signBytes(live.body, signer));
      await bucket.put(signature, body, objectHeaders(signature, body, {}));
      if ((await bucket.etag(rel)) === live.etag) break;
      if (round >= 30) {
        throw new MirrorError('LOCK_BUSY', `${bucket.name(rel)} kept changing while this write signed it: 30 tries.`, {
          hint: 'The change is live; the next signed write of the same module signs it again.',
        });
      }
    }
    stored.push(signature);
  }
  return stored;
}

/** The same root but for what follows the modules: the recent versions and the generation. */
export function sameRoot(a: Manifest, b: Manifest): boolean {
  const strip = ({ recent: _recent, generation: _generation, modules: _modules, forced: _forced, removed, ...rest }: Manifest) => ({
    ...rest,
    removed: removed?.filter((r) => r.module === undefined),
  });
  return JSON.stringify(strip(a)) === JSON.stringify(strip(b));
}

/**
 * Makes the change of the modules whose `states` were just stored known in the manifest: its recent
 * versions and a new generation, over whatever manifest is live (another writer's included), until
 * one lands. Each try is cheap: the manifest is small, and nothing else is redone.
 */
async function announce(
  bucket: Bucket,
  states: Upload[],
  record: ObjectRecord,
  objects: Record<string, string>,
  objectOptions: ObjectOptions,
): Promise<{ etag: string; generation: number; over: string }> {
  const modules = states.map((u) => parseModuleState(u.body().toString('utf8'), moduleOfStateFile(u.rel)!));
  return recordInManifest(bucket, modules, async () => recordText({ ...record, objects }), objectOptions);
}

/**
 * What a dead writer's marker names, once its states may be stored and not yet in the manifest: the
 * manifest records them (and gets a new generation, so what is derived again replaces what is there).
 */
export async function recordModulesInManifest(bucket: Bucket, keys: string[]): Promise<void> {
  const modules: ModuleState[] = [];
  for (const [rel, object] of await fetchAll(bucket, [...new Set(keys)].map(moduleStateFile), 16)) {
    try {
      modules.push(parseModuleState(object.body.toString('utf8'), moduleOfStateFile(rel)!));
    } catch {
      // An unreadable state is verify's to report; the others are recorded.
    }
  }
  const live = await bucket.get(MANIFEST_FILE);
  const record = live ? parseRecord((await bucket.get(recordFile(live.body)))?.body) : undefined;
  await recordInManifest(bucket, modules, async (body) => (await bucket.get(recordFile(body)))?.body ?? recordText(record ?? { format: 1, objects: {} }), {
    terraformGet: record?.options?.terraformGet === true,
  });
}

/** The manifest as it is live, with `modules`' versions among its recent ones and a new generation, until one such lands. */
async function recordInManifest(
  bucket: Bucket,
  modules: ModuleState[],
  recordOf: (liveBody: Buffer) => Promise<Buffer>,
  objectOptions: ObjectOptions,
): Promise<{ etag: string; generation: number; over: string }> {
  for (let attempt = 1; attempt <= 60; attempt++) {
    const live = await bucket.get(MANIFEST_FILE);
    if (!live) throw new MirrorError('OUTPUT_FAILED', `${bucket.name(MANIFEST_FILE)} is gone: the mirror was deleted while this write ran.`);
    const root = parseRemoteManifest(bucket, live.body);
    const generation = nextGeneration(root);
    const bytes = manifestTextWithGeneration({ ...root, recent: recentVersions(modules, root.recent) }, generation);
    await bucket.put(recordFile(bytes), await recordOf(live.body), RECORD_HEADERS);
    crashPoint('before-manifest');
    const put = await bucket.putIf(MANIFEST_FILE, bytes, objectHeaders(MANIFEST_FILE, bytes, objectOptions), { ifMatch: live.etag });
    if (put !== 'lost') {
      await bucket.remove([recordFile(live.body)]).catch(() => undefined);
      return { etag: put.etag, generation, over: live.etag };
    }
    const now = await bucket.get(MANIFEST_FILE);
    if (now?.body.equals(bytes)) return { etag: now.etag, generation, over: live.etag };
    await bucket.remove([recordFile(bytes)]).catch(() => undefined);
    await new Promise((r) => setTimeout(r, Math.random() * 20 * Math.min(attempt, 10)));
  }
  throw new MirrorError('LOCK_BUSY', `${bucket.name(MANIFEST_FILE)} kept changing: 60 tries to record this write's modules in it.`, {
    hint: 'The change is live (its module states are stored); the next write into this mirror, or modmirror verify --repair, lists it.',
  });
}

/**
 * The rest of step 3, once a writer has uploaded what it derived from the
 * manifest it made live: while the bucket's manifest is another (a later
 * writer's) or other writers' markers name modules to heal, derives those
 * documents again from the manifest there. Returns what it uploaded.
 */
export async function deriveAfterCommit(
  bucket: Bucket,
  job: Pick<BucketWrite<unknown>, 'modules' | 'refresh'>,
  committed: Committed | undefined,
  options: Pick<BucketWriteOptions, 'concurrency'>,
  ownMarker?: string,
): Promise<string[]> {
  const uploaded: string[] = [];
  let derivedFrom = committed?.etag;
  const markers = (await pendingMarkers(bucket)).filter((m) => m.rel !== ownMarker);
  let heal = markers.flatMap((m) => m.modules);
  if (heal.length > 0) await recordModulesInManifest(bucket, heal);
  for (let round = 1; ; round++) {
    if (heal.length === 0 && derivedFrom !== undefined && (await bucket.etag(MANIFEST_FILE)) === derivedFrom) break;
    if (round > 30) {
      throw new MirrorError('LOCK_BUSY', `${bucket.name(MANIFEST_FILE)} kept changing while this write derived its documents: 30 tries.`, {
        hint: 'The change is live; the next write into this mirror, or modmirror verify --repair, writes its listings again.',
      });
    }
    const refreshed = await refreshInBucket(bucket, job, [...job.modules, ...heal], options);
    derivedFrom = refreshed.etag;
    uploaded.push(...refreshed.uploaded);
    if (derivedFrom !== undefined) heal = [];
  }
  // Its modules are derived from a manifest at least as new as the marker's writer's: a dead writer's marker can go.
  const stale = markers.filter((m) => Date.now() - m.at > PENDING_STALE_MS).map((m) => m.rel);
  if (stale.length > 0) await bucket.remove(stale).catch(() => undefined);
  return uploaded;
}

/**
 * Derives the documents of `keys` and every index from the bucket's manifest as it is now, uploading
 * what differs; the manifest's ETag they were derived from, or undefined when it changed before the upload.
 */
export async function refreshInBucket(
  bucket: Bucket,
  job: Pick<BucketWrite<unknown>, 'refresh'>,
  keys: string[],
  options: Pick<BucketWriteOptions, 'concurrency'>,
): Promise<{ etag: string | undefined; uploaded: string[] }> {
  const remote = await bucket.get(MANIFEST_FILE);
  if (!remote) throw new MirrorError('OUTPUT_FAILED', `${bucket.name(MANIFEST_FILE)} is gone: the mirror was deleted while this write ran.`);
  const manifest = parseRemoteManifest(bucket, remote.body);
  const record = parseRecord((await bucket.get(recordFile(remote.body)))?.body);
  const objectOptions = { terraformGet: record?.options?.terraformGet === true };
  return withFetched(
    bucket,
    remote,
    manifest,
    keys,
    (part) => refreshReads(keys, part),
    options,
    objectOptions,
    async (mirror) => {
      await job.refresh(mirror.dir, keys);
      // What differs from the bucket's object where it was fetched; the rest always, but for the files no
      // writer derives from the truth (the browse page's own), which the record of the manifest vouches for.
      const derived = (rel: string) =>
        rel.startsWith(MODULES_BASE) || rel.startsWith(V2_MODULES_BASE) || rel.startsWith(`${BROWSE_MODULES_DIR}/`) || phaseOf(rel) === 'indexes';
      const unchanged = (u: Upload) => (mirror.known.has(u.rel) ? mirror.known.get(u.rel) === u.id : !derived(u.rel) && record?.objects[u.rel] === u.id);
      const generation = manifest.generation ?? 0;
      const uploads = mirror
        .written()
        .filter((u) => u.rel !== MANIFEST_FILE && moduleOfStateFile(u.rel) === undefined && !unchanged(u))
        .map((u) => ({ ...u, generation }));
      // Derived from a manifest that is no longer live: nothing is uploaded, and the caller derives again.
      if ((await bucket.etag(MANIFEST_FILE)) !== remote.etag) return { etag: undefined, uploaded: [] };
      await uploadInOrder(bucket, uploads, { concurrency: options.concurrency ?? 16 });
      return { etag: remote.etag, uploaded: uploads.map((u) => u.rel) };
    },
  );
}

/** What deriving the documents of `keys` again reads: each module's details and its archives' sizes. */
function refreshReads(keys: string[], manifest: Manifest | undefined): BucketReads {
  const reads: BucketReads = { files: [], standIns: [] };
  for (const key of new Set(keys)) {
    const part = moduleReads(parseAddressKey(key), manifest, { siblings: false });
    reads.files.push(...part.files);
    reads.standIns.push(...part.standIns);
  }
  reads.files = [...new Set(reads.files)];
  return reads;
}

interface Fetched {
  dir: string;
  at(rel: string): string;
  /** Object ids of what was fetched (the manifest included). */
  known: Map<string, string>;
  /** ETags of the module states fetched: each is stored again only over the one read. */
  etags: Map<string, string>;
  /** Every file the local writer wrote (a new file, not the fetched one), as an upload, in path order. */
  written(): Upload[];
}

/**
 * The bucket's manifest and what a write of `modules` reads, in a temporary folder for `fn`, removed
 * afterwards. Of a format-3 mirror, first the truth those modules' documents and listings are written
 * from (truthReads), then what `reads` names given it (their documents, their archives as stand-ins).
 */
async function withFetched<T>(
  bucket: Bucket,
  remote: StoredObject | undefined,
  manifest: Manifest | undefined,
  modules: string[] | 'all',
  reads: (manifest: Manifest | undefined) => BucketReads,
  options: Pick<BucketWriteOptions, 'concurrency'>,
  objectOptions: ObjectOptions,
  fn: (mirror: Fetched) => Promise<T>,
): Promise<T> {
  const temp = mkdtempSync(join(tmpdir(), 'modmirror-bucket-'));
  try {
    const dir = join(temp, 'mirror');
    const known = new Map<string, string>();
    const etags = new Map<string, string>();
    const fetched = new Map<string, number>();
    const keep = (rel: string, object: StoredObject) => {
      place(dir, rel, object.body);
      known.set(rel, objectId(object.body, objectHeaders(rel, object.body, objectOptions)));
      fetched.set(rel, statSync(join(dir, rel)).ino);
      if (moduleOfStateFile(rel) !== undefined) etags.set(rel, object.etag);
    };
    const standIn = (rel: string, size: number) => {
      if (fetched.has(rel)) return;
      place(dir, rel, Buffer.alloc(0));
      if (size > 0) truncateSync(join(dir, rel), size);
      fetched.set(rel, statSync(join(dir, rel)).ino);
    };
    let standIns = new Set<string>();
    let part = manifest;
    if (remote) {
      keep(MANIFEST_FILE, remote);
      // A signed mirror's root signature: with it there, the local writer refuses a change it has no key to sign.
      const rootSignature = await bucket.get(MANIFEST_FILE + TRUTH_SIGNATURE_SUFFIX);
      if (rootSignature) keep(MANIFEST_FILE + TRUTH_SIGNATURE_SUFFIX, rootSignature);
      if (manifest && manifest.format >= 3) {
        const truth = await truthReads(bucket, modules, options.concurrency ?? 16, keep);
        for (const namespace of truth.namespaces) mkdirSync(join(dir, MODULE_STATES_DIR, namespace), { recursive: true });
        // The namespaces whose pages the bucket has: the writer writes the others' whole.
        for (const namespace of truth.paged) mkdirSync(join(dir, BROWSE_MODULES_DIR, namespace), { recursive: true });
        for (const rel of truth.listed) standIn(rel, 0);
        standIns = new Set(truth.listed.filter((rel) => known.get(rel) === undefined));
        part = readManifest(dir, truth.family);
      }
      const plan = reads(part);
      for (const [rel, object] of await fetchAll(bucket, plan.files, options.concurrency ?? 16)) keep(rel, object);
      for (const { rel, size } of plan.standIns) {
        standIn(rel, size);
        standIns.add(rel);
      }
    }
    return await fn({
      dir,
      at: (rel) => join(realpathSync(dir), rel),
      known,
      etags,
      written() {
        // What the writer wrote is a new file; what it left is still the fetched one (a hard link to it).
        const root = realpathSync(dir);
        const out: Upload[] = [];
        for (const rel of filesOf(root)) {
          const file = join(root, rel);
          if (fetched.get(rel) === statSync(file).ino || rel === MANIFEST_FILE) continue;
          if (standIns.has(rel)) throw new Error(`the writer replaced the stand-in ${rel}`);
          const body = readFileSync(file);
          const headers = objectHeaders(rel, body, objectOptions);
          out.push({ rel, body: () => readFileSync(file), headers, id: objectId(body, headers) });
        }
        return out;
      },
    });
  } finally {
    rmSync(temp, { recursive: true, force: true, maxRetries: 5 });
  }
}

/** As many module states as the first page of a listing can need: more than it shows, for modules with no version left. */
const LISTING_STATES = 32;

/**
 * What a write of `modules` reads of a format-3 mirror's truth: the namespaces, the names of the states
 * in each namespace it writes (stand-ins, so listings know every module), the states of each module's
 * family (its name's providers) and of the first modules of its namespace and of the mirror (the
 * listings' first pages), and the browse page's pages it replaces with the states of the modules they
 * lack rows for (browse-reads.ts); a namespace with no pages yet has them all written, so it is read
 * as a namespace the write touches. `keep` stores each object fetched.
 */
async function truthReads(
  bucket: Bucket,
  modules: string[] | 'all',
  concurrency: number,
  keep: (rel: string, object: StoredObject) => void,
): Promise<{ namespaces: string[]; paged: string[]; listed: string[]; family: string[] }> {
  const fetch = async (rels: string[]) => {
    const fetched = await fetchAll(bucket, rels, concurrency);
    for (const [rel, object] of fetched) keep(rel, object);
    return fetched;
  };
  const namespaces = await bucket.folders(`${MODULE_STATES_DIR}/`);
  const paged = await bucket.folders(`${BROWSE_MODULES_DIR}/`);
  if (modules === 'all') {
    const every: string[] = [];
    for await (const rel of bucket.list(`${MODULE_STATES_DIR}/`)) if (moduleOfStateFile(rel) !== undefined) every.push(rel);
    await fetch(every);
    // Every page is written again from the states: those the bucket has are read only to upload no page that is the same.
    const lists = await fetch(paged.map(browsePageListFile));
    await fetch(
      lists.flatMap(([rel, object]) => {
        const namespace = rel.slice(BROWSE_MODULES_DIR.length + 1, rel.lastIndexOf('/'));
        return (parsePageList(object.body.toString('utf8')) ?? []).map((page) => browsePageFile(namespace, page));
      }),
    );
    return { namespaces, paged, listed: every, family: every.map((rel) => moduleOfStateFile(rel)!) };
  }
  const touched = new Set(modules.map((key) => key.slice(0, key.indexOf('/'))));
  const browsed = [...new Set([...touched, ...namespaces.filter((namespace) => !paged.includes(namespace))])];
  const listed: string[] = [];
  const real = new Set<string>();
  const family: string[] = [];
  const keysIn = new Map<string, string[]>();
  for (const namespace of browsed) {
    const inNamespace: string[] = [];
    for await (const rel of bucket.list(`${MODULE_STATES_DIR}/${namespace}/`)) if (moduleOfStateFile(rel) !== undefined) inNamespace.push(rel);
    inNamespace.sort();
    listed.push(...inNamespace);
    keysIn.set(namespace, inNamespace.map((rel) => moduleOfStateFile(rel)!).sort());
    if (!touched.has(namespace)) continue;
    inNamespace.slice(0, LISTING_STATES).forEach((rel) => real.add(rel));
    for (const key of modules.filter((k) => k.startsWith(`${namespace}/`))) {
      const prefix = `${key.split('/').slice(0, 2).join('/')}/`;
      for (const rel of inNamespace) {
        const other = moduleOfStateFile(rel)!;
        if (other.startsWith(prefix)) family.push(other);
      }
      family.push(key);
    }
  }
  // The mirror's first modules, for its own listing: a listing is in key order, as the bucket lists.
  let first = 0;
  for await (const rel of bucket.list(`${MODULE_STATES_DIR}/`)) {
    if (moduleOfStateFile(rel) === undefined) continue;
    listed.push(rel);
    real.add(rel);
    if (++first >= LISTING_STATES) break;
  }
  for (const key of family) real.add(moduleStateFile(key));
  const pagedSet = new Set(paged);
  // The writer's modules are those with states and those it writes, which a new module has none of yet.
  const namespacesBrowsed = browsed.map((namespace) => {
    const keys = [...new Set([...keysIn.get(namespace)!, ...family.filter((key) => key.startsWith(`${namespace}/`))])].sort();
    return { namespace, keys, paged: pagedSet.has(namespace) };
  });
  for (const key of await browseReads(fetch, namespacesBrowsed, new Set(family))) real.add(moduleStateFile(key));
  await fetch([...real]);
  return { namespaces, paged, listed: [...new Set(listed)], family: [...new Set(family)] };
}

function parseRemoteManifest(bucket: Bucket, body: Buffer): Manifest {
  try {
    return parseManifest(body.toString('utf8'));
  } catch (error) {
    throw new MirrorError('OUTPUT_FAILED', `${bucket.name(MANIFEST_FILE)} is not a modmirror manifest: ${(error as Error).message}`, { cause: error });
  }
}

export interface PendingMarker {
  readonly rel: string;
  /** Puts the marker, once, before the write's first upload. */
  put: () => Promise<void>;
  remove: () => Promise<void>;
}

/** A write's marker: the modules it changes, named in the bucket from before its commit until their documents are derived. */
export function pendingMarker(bucket: Bucket, modules: string[]): PendingMarker {
  const rel = `${PENDING_PREFIX}${randomUUID()}.json`;
  let state: 'none' | 'put' | 'removed' = 'none';
  return {
    rel,
    async put() {
      if (state !== 'none') return;
      await bucket.put(rel, Buffer.from(`${JSON.stringify({ modules, at: new Date().toISOString() })}\n`), RECORD_HEADERS);
      state = 'put';
    },
    async remove() {
      if (state !== 'put') return;
      await bucket.remove([rel]);
      state = 'removed';
    },
  };
}

/** Every writer's marker in the bucket; an unreadable one names nothing. */
async function pendingMarkers(bucket: Bucket): Promise<{ rel: string; modules: string[]; at: number }[]> {
  const out = [];
  for await (const rel of bucket.list(PENDING_PREFIX)) {
    const body = (await bucket.get(rel))?.body;
    try {
      const { modules, at } = JSON.parse(body?.toString('utf8') ?? '') as { modules: unknown; at: unknown };
      out.push({
        rel,
        modules: Array.isArray(modules) ? modules.filter((m): m is string => typeof m === 'string') : [],
        at: typeof at === 'string' ? Date.parse(at) : 0,
      });
    } catch {
      out.push({ rel, modules: [], at: 0 });
    }
  }
  return out;
}

function place(dir: string, rel: string, body: Buffer): void {
  mkdirSync(dirname(join(dir, rel)), { recursive: true });
  writeFileSync(join(dir, rel), body);
}

export async function fetchAll(bucket: Bucket, rels: string[], concurrency: number): Promise<[string, StoredObject][]> {
  const out: [string, StoredObject][] = [];
  let next = 0;
  const worker = async () => {
    while (next < rels.length) {
      const rel = rels[next++]!;
      const object = await bucket.get(rel);
      if (object) out.push([rel, object]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, rels.length) }, worker));
  return out;
}
