// `modmirror push DIR s3://BUCKET/PREFIX`: makes a bucket hold a built mirror.
// Only objects whose id (objects.ts) differs from the record of the bucket's
// manifest go up, archives first and the manifest last, the manifest on the
// condition that nobody changed it meanwhile; objects the mirror no longer
// has are deleted only after that, and only when asked. An interrupted push
// leaves a journal, so the next one skips what already went up.

import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { MirrorError } from '../errors.js';
import { crashPoint } from '../mirror/crash.js';
import { phaseOf } from '../mirror/write-order.js';
import { ledgerRefusal, ledgerViolations } from '../mirror/ledger.js';
import {
  manifestTextWithGeneration,
  MODULE_STATES_DIR,
  moduleOfStateFile,
  parseManifest,
  parseModuleState,
  readManifest,
  withModuleStates,
  type Manifest,
} from '../mirror/manifest.js';
import { problemLines, withMirrorRead } from '../mirror/transaction.js';
import { MANIFEST_FILE, MODULES_BASE } from '../protocol/paths.js';
import { mapLimited } from '../concurrency.js';
import { refreshModules } from '../publish/refresh.js';
import { verifyMirror } from '../verify/index.js';
import { openJournal } from './journal.js';
import { describeBucket } from './location.js';
import {
  objectHeaders,
  filesOf,
  joinClaims,
  moduleRecordFile,
  objectId,
  ownerOfObject,
  sha256,
  parseRecord,
  RECORD_HEADERS,
  RECORD_PREFIX,
  recordFile,
  recordText,
  splitClaims,
  type ObjectOptions,
  type ObjectRecord,
} from './objects.js';
import type { Bucket, StoredObject } from './store.js';
import { progressLine, uploadInOrder, type Upload } from './upload.js';
import { deriveAfterCommit, fetchAll, pendingMarker, recordModulesInManifest, sameRoot, signLiveTruth } from './write.js';
import { isSignedMirror, TRUTH_SIGNATURE_SUFFIX, unsignedWrite } from '../mirror/signed.js';
import type { PrivateSigningKey } from '../openpgp/keys.js';

export interface PushOptions extends ObjectOptions {
  dir: string;
  /** As the config's browse.imageHosts: the browse page, if it must be written again after another writer's change. */
  imageHosts?: string[];
  bucket: Bucket;
  /** Where the journal of an interrupted push is kept. */
  cacheDir: string;
  prune?: boolean;
  /** Upload every object, whatever the record says: for a bucket changed by other means, or a writer killed mid-race. */
  full?: boolean;
  dryRun?: boolean;
  concurrency?: number;
  progress?: (line: string) => void;
  /** A signed mirror's key: its root is signed again as the bucket holds it (a newer generation than the folder's). */
  signer?: PrivateSigningKey;
}

export interface PushResult {
  target: string;
  /** Objects uploaded (or, with dryRun, that would be), the manifest included when it changed. */
  uploaded: number;
  unchanged: number;
  /** Objects deleted with prune. */
  deleted: number;
  /** Objects in the bucket the mirror no longer has, left there (no prune). */
  stale: number;
  dryRun: boolean;
  seconds: number;
  /** With dryRun: the objects that would be uploaded, in upload order. */
  objects?: string[];
}

export function push(options: PushOptions): Promise<PushResult> {
  // Under the mirror's lock: a publish on this machine does not swap the mirror halfway through.
  return withMirrorRead(options.dir, async (mirror) => {
    await mirror.check(
      (root) => verifyMirror(root),
      (problems) =>
        new MirrorError('MIRROR_INVALID', `The mirror in ${mirror.dir} fails verification; nothing was pushed:\n${problemLines(problems, 20)}`, {
          hint: 'Run modmirror verify to see every problem; rebuild or fix the mirror first.',
        }),
    );
    const root = realpathSync(mirror.dir);
    const result = await pushLocked(root, options);
    if (options.signer && !options.dryRun && isSignedMirror(root)) await signLiveTruth(options.bucket, [MANIFEST_FILE], options.signer);
    return result;
  });
}

async function pushLocked(root: string, options: PushOptions): Promise<PushResult> {
  const started = performance.now();
  const { bucket } = options;
  let manifestBytes: Buffer = readFileSync(join(root, MANIFEST_FILE));
  const remote = await bucket.get(MANIFEST_FILE);
  // The bucket's module states, with their ETags: each is replaced only over the one read here.
  const remoteStates = new Map<string, StoredObject>();
  if (remote) {
    let before: Manifest;
    try {
      before = parseManifest(remote.body.toString('utf8'));
      if (before.format >= 3) {
        for await (const rel of bucket.list(`${MODULE_STATES_DIR}/`)) {
          const object = moduleOfStateFile(rel) !== undefined ? await bucket.get(rel) : undefined;
          if (object) remoteStates.set(rel, object);
        }
        before = withModuleStates(
          before,
          [...remoteStates].map(([rel, object]) => parseModuleState(object.body.toString('utf8'), moduleOfStateFile(rel)!)),
        );
      }
    } catch (error) {
      throw new MirrorError('OUTPUT_FAILED', `${bucket.name(MANIFEST_FILE)} is not a modmirror manifest: ${(error as Error).message}`, {
        hint: 'Push to an empty prefix, or delete that object if the prefix holds no mirror.',
        cause: error,
      });
    }
    // The bucket is a published mirror too: what it published stays, unless the mirror records replacing or removing it.
    const local = parseManifest(manifestBytes.toString('utf8'));
    const violations = ledgerViolations(before, readManifest(root)!, { replace: true, remove: true });
    if (violations.length > 0) throw ledgerRefusal(violations);
    manifestBytes = afterGeneration(local, manifestBytes, before, remote.body);
  }
  await refuseUnsignedPush(root, bucket, remote !== undefined, !manifestBytes.equals(readFileSync(join(root, MANIFEST_FILE))), options.signer !== undefined);
  const record: ObjectRecord = (remote && parseRecord((await bucket.get(recordFile(remote.body)))?.body)) || { format: 1, objects: {} };
  // Each module's part of the record, named by its state in the bucket.
  const remoteParts = new Map<string, { rel: string; body: Buffer | undefined }>();
  for (const [rel, state] of remoteStates)
    remoteParts.set(moduleOfStateFile(rel)!, { rel: moduleRecordFile(moduleOfStateFile(rel)!, state.body), body: undefined });
  const partBodies = new Map(
    await fetchAll(
      bucket,
      [...remoteParts.values()].map((p) => p.rel),
      options.concurrency ?? 16,
    ),
  );
  for (const part of remoteParts.values()) part.body = partBodies.get(part.rel)?.body;
  const claims = joinClaims(record.objects, new Map([...remoteParts].map(([key, part]) => [key, parseRecord(part.body)?.objects])));
  const journal = openJournal(options.cacheDir, bucket.location, remote ? sha256(remote.body) : 'none');
  const known = options.full ? {} : { ...claims, ...journal.done };

  const objects: Record<string, string> = {};
  const uploads: Upload[] = [];
  const states: Upload[] = [];
  const localStates = new Map<string, Buffer>();
  for (const rel of filesOf(root)) {
    if (rel === MANIFEST_FILE) continue;
    const body = readFileSync(join(root, rel));
    const headers = objectHeaders(rel, body, options);
    const id = objectId(body, headers);
    objects[rel] = id;
    // The truth goes up last, each state only over the one read (a publish into the bucket may have changed it meanwhile).
    if (moduleOfStateFile(rel) !== undefined) {
      localStates.set(moduleOfStateFile(rel)!, body);
      if (options.full || !remoteStates.get(rel)?.body.equals(body)) states.push({ rel, headers, id, body: () => readFileSync(join(root, rel)) });
      continue;
    }
    if (known[rel] !== id)
      uploads.push({ rel, headers, id, body: () => readFileSync(join(root, rel)), create: phaseOf(rel) === 'archives' && !(rel in known) });
  }
  // Objects the bucket lacks and no listing names go up before the manifest; what lists versions or
  // replaces an object goes up after it, derived from the manifest that won (write.ts).
  const isNew = (u: Upload) => !(u.rel in claims) && phaseOf(u.rel) !== 'indexes';
  const before = uploads.filter(isNew);
  const after = uploads.filter((u) => !isNew(u));
  const manifestChanged = !remote?.body.equals(manifestBytes);
  const gone = [...new Set([...Object.keys(claims), ...(record.stale ?? [])])].filter((rel) => !(rel in objects) && rel !== MANIFEST_FILE);
  const result = (uploaded: number, deleted: number, extra: Partial<PushResult> = {}): PushResult => ({
    target: describeBucket(bucket.location),
    uploaded,
    unchanged: Object.keys(objects).length + 1 - uploaded,
    deleted,
    stale: gone.length - deleted,
    dryRun: options.dryRun === true,
    seconds: (performance.now() - started) / 1000,
    ...extra,
  });
  const count = uploads.length + states.length + (manifestChanged ? 1 : 0);
  if (options.dryRun)
    return result(count, 0, { objects: [...uploads.map((u) => u.rel), ...states.map((u) => u.rel), ...(manifestChanged ? [MANIFEST_FILE] : [])] });

  const refreshIn = (dir: string, keys: string[]) => refreshModules(keys, { outDir: dir, imageHosts: options.imageHosts ?? [], hashArchives: false });
  // The manifest is one of the objects counted, as in the result: the last line and the summary agree.
  const progress = { total: count, done: 0 };
  const upload = (batch: Upload[]) =>
    uploadInOrder(bucket, batch, {
      concurrency: options.concurrency ?? 16,
      onDone: (u) => journal.add(u.rel, u.id),
      progress: options.progress,
      counted: progress,
    });
  const newRecord = recordFile(manifestBytes);
  // The parts as the bucket holds them: one is stored again only when what it claims changed.
  const storedParts = new Map<string, Buffer>();
  for (const part of remoteParts.values()) if (part.body) storedParts.set(part.rel, part.body);
  /** The record of `claimed`: each module's part, named by its state here, then the root part, named by the manifest. */
  const writeRecord = async (claimed: Record<string, string>, stale?: string[]) => {
    const split = splitClaims(claimed, localStates.keys());
    const puts: [string, Buffer][] = [];
    for (const [key, state] of localStates) {
      const rel = moduleRecordFile(key, state);
      const body = recordText({ format: 1, objects: split.part(key) });
      if (!storedParts.get(rel)?.equals(body)) puts.push([rel, body]);
    }
    await mapLimited(puts, options.concurrency ?? 16, async ([rel, body]) => {
      await bucket.put(rel, body, RECORD_HEADERS);
      storedParts.set(rel, body);
    });
    const rootOptions = { terraformGet: options.terraformGet === true };
    await bucket.put(newRecord, recordText({ format: 1, options: rootOptions, objects: split.root, ...(stale ? { stale } : {}) }), RECORD_HEADERS);
  };
  // The parts of states this push replaces, once its states are live.
  const replacedParts = [...remoteParts]
    .filter(([key, part]) => part.body !== undefined && (!localStates.has(key) || moduleRecordFile(key, localStates.get(key)!) !== part.rel))
    .map(([, part]) => part.rel);
  // The record claims only what is stored before the manifest: a push killed after it uploads the rest again.
  const later = new Set(manifestChanged ? after.map((u) => u.rel) : []);
  const claimed = Object.fromEntries(Object.entries(objects).filter(([rel]) => !later.has(rel)));
  await upload(before);
  // A record of one file (an older modmirror's) is split into its parts even when nothing else changed.
  const unsplit = Object.keys(record.objects).some((rel) => ownerOfObject(rel) !== undefined);
  if (count > 0 || unsplit || (await bucket.etag(newRecord)) === undefined) await writeRecord(claimed, gone);
  let committed: string | undefined;
  // What lists versions goes up after the manifest: a push killed in between is finished by the next writer.
  const marker = pendingMarker(bucket, modulesOf(after));
  if (after.length > 0 && (manifestChanged || states.length > 0)) await marker.put();
  for (const state of states) {
    const read = remoteStates.get(state.rel);
    const stored = await bucket.putIf(state.rel, state.body(), state.headers, read ? { ifMatch: read.etag } : { ifNoneMatch: '*' });
    if (stored === 'lost' && !(await bucket.get(state.rel))?.body.equals(state.body())) {
      await marker.remove();
      throw new MirrorError('OUTPUT_FAILED', `${bucket.name(state.rel)} changed while this push ran (a publish into the bucket); the bucket keeps that one.`, {
        hint: 'Push again once the mirror has that publish too (bundle it, or publish it here); a push never replaces what the bucket published.',
      });
    }
    journal.add(state.rel, state.id);
    progress.done++;
    options.progress?.(progressLine(progress));
  }
  if (manifestChanged) {
    const headers = objectHeaders(MANIFEST_FILE, manifestBytes, options);
    crashPoint('before-manifest');
    const outcome = await bucket.putIf(MANIFEST_FILE, manifestBytes, headers, remote ? { ifMatch: remote.etag } : { ifNoneMatch: '*' });
    if (outcome !== 'lost') committed = outcome.etag;
    else if ((await bucket.get(MANIFEST_FILE))?.body.equals(manifestBytes)) committed = await bucket.etag(MANIFEST_FILE);
    else if (states.length > 0) {
      // The module states it stored are live (each over the one it read): the manifest records them, and their
      // documents are derived from the bucket's truth, which has the other writer's change too.
      const keys = states.map((u) => moduleOfStateFile(u.rel)!);
      await recordModulesInManifest(bucket, keys);
      await deriveAfterCommit(bucket, { modules: keys, refresh: refreshIn }, undefined, options, marker.rel);
      await marker.remove();
      journal.finish();
      const live = await bucket.get(MANIFEST_FILE);
      if (live && sameRoot(parseManifest(live.body.toString('utf8')), parseManifest(manifestBytes.toString('utf8')))) return result(count, 0);
      throw new MirrorError(
        'OUTPUT_FAILED',
        `${bucket.name(MANIFEST_FILE)} changed while this push ran (another push or publish): its modules are pushed, its providers and base URL are not.`,
        { hint: 'Push again: it uploads only what still differs.' },
      );
    } else {
      await marker.remove();
      throw new MirrorError(
        'OUTPUT_FAILED',
        `${bucket.name(MANIFEST_FILE)} changed while this push ran (another push or publish); the bucket keeps that one.`,
        {
          hint: 'Push again: it uploads only what still differs. If the other write was a publish, publish into this mirror too, or fetch it first.',
        },
      );
    }
    // The previous manifest's record is no longer the live one's.
    if (remote) await bucket.remove([recordFile(remote.body)]).catch(() => undefined);
    progress.done += 1;
    options.progress?.(progressLine(progress));
  }
  // Derived from the manifest pushed, of its generation; the same manifest pushed again (--full) stores them as they are.
  const generation = committed !== undefined ? parseManifest(manifestBytes.toString('utf8')).generation : undefined;
  await upload(generation === undefined ? after : after.map((u) => ({ ...u, generation })));
  if (committed !== undefined) {
    const job = {
      modules: modulesOf(after),
      refresh: refreshIn,
    };
    await deriveAfterCommit(bucket, job, { etag: committed }, options, marker.rel);
    await marker.remove();
    await writeRecord(objects, gone);
  }
  // Nothing left to derive: the same states and manifest pushed again (--full), or derived above.
  await marker.remove();
  if (replacedParts.length > 0) await bucket.remove(replacedParts).catch(() => undefined);
  journal.finish();
  options.progress?.('');
  if (!options.prune || gone.length === 0) return result(count, 0);
  // Only now that the new manifest is live: nothing it names is deleted.
  await bucket.remove(gone.filter((rel) => !rel.startsWith(RECORD_PREFIX)));
  await writeRecord(objects);
  return result(count, gone.length);
}

/**
 * The manifest to push over the bucket's: the local one, with a generation after the bucket's (its
 * documents are derived from a later truth than any there), or the bucket's own bytes when they
 * differ from the local ones in their generation alone (nothing to push).
 */
/**
 * A signed mirror stays signed (mirror/signed.ts): a folder's signatures go
 * up with it, but a root the bucket gives a newer generation needs the key
 * to be signed again, and an unsigned folder would leave a signed bucket's
 * truth unsigned. Refused before anything is uploaded.
 */
async function refuseUnsignedPush(root: string, bucket: Bucket, remote: boolean, restamped: boolean, signer: boolean): Promise<void> {
  const signed = isSignedMirror(root);
  if (signed && restamped && !signer) throw unsignedWrite([MANIFEST_FILE]);
  if (!signed && remote && (await bucket.etag(MANIFEST_FILE + TRUTH_SIGNATURE_SUFFIX)) !== undefined) {
    throw new MirrorError(
      'SIGNING_KEY_REQUIRED',
      `The mirror in ${bucket.name(MANIFEST_FILE)}'s prefix is signed (${MANIFEST_FILE}${TRUTH_SIGNATURE_SUFFIX}) and ${root} is not: pushing it would leave the bucket's truth unsigned. Nothing was pushed.`,
      { hint: `Sign the folder (build --sign-key), or delete the bucket's ${MANIFEST_FILE}${TRUTH_SIGNATURE_SUFFIX} to stop signing it.` },
    );
  }
}

function afterGeneration(local: Manifest, localBytes: Buffer, remote: Manifest, remoteBytes: Buffer): Buffer {
  const remoteGeneration = remote.generation ?? 0;
  if (localBytes.equals(remoteBytes) || (local.generation ?? 0) > remoteGeneration) return localBytes;
  if (remote.generation !== undefined && manifestTextWithGeneration(local, remote.generation).equals(remoteBytes)) return remoteBytes;
  return manifestTextWithGeneration(local, remoteGeneration + 1);
}

/** The modules (`ns/name/provider`) whose documents are among `uploads`. */
function modulesOf(uploads: Upload[]): string[] {
  const keys = new Set<string>();
  for (const { rel } of uploads) {
    const parts = rel.startsWith(MODULES_BASE) ? rel.slice(MODULES_BASE.length).split('/') : [];
    if (parts.length >= 4) keys.add(parts.slice(0, 3).join('/'));
  }
  return [...keys];
}
