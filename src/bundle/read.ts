// Reading a bundle: a streaming walk over its entries, and the first of the
// two passes `unbundle` makes, which checks every entry against the bundle's
// list of sha256 sums before anything is written.

import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Parser, type ReadEntry } from 'tar';
import { MirrorError, messageOf } from '../errors.js';
import { isTruthFile, moduleOfStateFile, parseManifest, parseModuleState, withModuleStates, type Manifest, type ModuleState } from '../mirror/manifest.js';
import { MANIFEST_FILE } from '../protocol/paths.js';
import { BUNDLE_MANIFEST, parseBundleManifest, type BundleFile, type BundleManifest } from './format.js';

/** What one entry's bytes go to; called synchronously as they are read, so nothing piles up in memory. */
export interface EntrySink {
  data(chunk: Buffer): void;
  end(): void;
}

export interface EntryHeader {
  path: string;
  type: string;
  size: number;
}

/** The largest bundle manifest read into memory (about a million files). */
const MAX_MANIFEST_BYTES = 256 * 1024 * 1024;

/** Sees each chunk of a file as it is read; a promise it returns holds the reading until it settles. */
export type RawReader = (chunk: Buffer) => Promise<void> | undefined;

/**
 * Streams the bundle's entries in order to `open`. Any damage (a truncated
 * or corrupted gzip or tar stream) rejects, as does an exception from a sink.
 * `raw`, when given, sees every byte of the file as it is read.
 */
export function walkBundle(file: string, open: (header: EntryHeader) => EntrySink, raw?: RawReader): Promise<void> {
  return new Promise((resolve, reject) => {
    const input = createReadStream(file);
    if (raw) {
      input.on('data', (chunk) => {
        const waiting = raw(chunk as Buffer);
        if (!waiting) return;
        input.pause();
        void waiting.then(() => input.resume());
      });
    }
    const parser = new Parser({ strict: true });
    let failed = false;
    const fail = (error: unknown) => {
      if (failed) return;
      failed = true;
      input.destroy();
      reject(error);
    };
    const guard = (fn: () => void) => {
      try {
        if (!failed) fn();
      } catch (error) {
        fail(error);
      }
    };
    parser.on('entry', (entry: ReadEntry) => {
      let sink: EntrySink | undefined;
      guard(() => (sink = open({ path: entry.path, type: entry.type, size: entry.size ?? 0 })));
      entry.on('data', (chunk: Buffer) => guard(() => sink?.data(chunk)));
      entry.on('end', () => guard(() => sink?.end()));
    });
    parser.on('error', (error: Error) => fail(damaged(file, error)));
    parser.on('end', () => (failed ? undefined : resolve()));
    input.on('error', (error) => fail(new MirrorError('BUNDLE_INVALID', `Cannot read the bundle ${file}: ${error.message}`, { cause: error })));
    input.pipe(parser);
  });
}

function damaged(file: string, error: Error): MirrorError {
  const why = /unexpected end of file|Truncated input/i.test(error.message) ? 'it is truncated' : 'it is damaged';
  return new MirrorError('BUNDLE_INVALID', `The bundle ${file} is unusable: ${why} (${error.message}). Nothing was changed.`, {
    hint: 'Copy the bundle again and compare its sha256 with the one modmirror bundle printed.',
    cause: error,
  });
}

export interface VerifiedBundle {
  manifest: BundleManifest;
  /** The mirror's manifest.json the bundle carries. */
  mirrorManifest: Manifest;
}

/**
 * Pass one: every entry is listed, whole and matches its sha256; returns the
 * two manifests. `raw`, when given, sees every byte of the file as it is
 * read: the signature check, so that the list every later read is checked
 * against is the one of the very bytes signed.
 */
export async function verifyBundle(file: string, raw?: RawReader): Promise<VerifiedBundle> {
  const refuse = (why: string) =>
    new MirrorError('BUNDLE_INVALID', `The bundle ${file} is unusable: ${why}. Nothing was changed.`, {
      hint: 'Copy the bundle again (compare its sha256 with the one modmirror bundle printed), or make it again.',
    });
  let manifest: BundleManifest | undefined;
  let expected = new Map<string, BundleFile>();
  const seen = new Set<string>();
  let mirrorManifestText = '';
  // Format 3: the root and each module's state, read back as one manifest.
  const states: ModuleState[] = [];
  await walkBundle(
    file,
    (header) => {
      if (manifest === undefined) {
        if (header.path !== BUNDLE_MANIFEST || header.type !== 'File') throw refuse(`its first entry is ${header.path}, not ${BUNDLE_MANIFEST}`);
        if (header.size > MAX_MANIFEST_BYTES) throw refuse(`${BUNDLE_MANIFEST} is ${header.size} bytes`);
        const chunks: Buffer[] = [];
        return {
          data: (chunk) => chunks.push(chunk),
          end: () => {
            manifest = parseBundleManifest(Buffer.concat(chunks).toString('utf8'), file);
            expected = new Map(manifest.files.map((f) => [f.path, f]));
          },
        };
      }
      const listed = expected.get(header.path);
      if (header.type !== 'File' || !listed)
        throw refuse(`it holds ${header.type === 'File' ? 'a file' : `a ${header.type} entry`} ${header.path} that its list does not name`);
      if (seen.has(header.path)) throw refuse(`it holds ${header.path} twice`);
      seen.add(header.path);
      const hash = createHash('sha256');
      const keep: Buffer[] = [];
      let size = 0;
      return {
        data: (chunk) => {
          hash.update(chunk);
          size += chunk.length;
          if (isTruthFile(header.path)) keep.push(chunk);
        },
        end: () => {
          const sha256 = hash.digest('hex');
          if (size !== listed.size || sha256 !== listed.sha256) {
            throw refuse(`${header.path} is damaged: sha256 ${sha256} (${size} bytes), its list says ${listed.sha256} (${listed.size} bytes)`);
          }
          if (header.path === MANIFEST_FILE) mirrorManifestText = Buffer.concat(keep).toString('utf8');
          else if (isTruthFile(header.path)) {
            const key = moduleOfStateFile(header.path)!;
            try {
              states.push(parseModuleState(Buffer.concat(keep).toString('utf8'), key));
            } catch (error) {
              throw refuse(`its ${header.path} is unusable (${messageOf(error)})`);
            }
          }
        },
      };
    },
    raw,
  );
  if (!manifest) throw refuse('it is empty');
  const missing = manifest.files.filter((f) => !seen.has(f.path)).map((f) => f.path);
  if (missing.length > 0) throw refuse(`it lacks ${missing.length} listed file(s): ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', ...' : ''}`);
  let mirrorManifest: Manifest;
  try {
    mirrorManifest = parseManifest(mirrorManifestText);
    if (mirrorManifest.format >= 3)
      mirrorManifest = withModuleStates(
        mirrorManifest,
        states.sort((a, b) => (a.module < b.module ? -1 : 1)),
      );
  } catch (error) {
    throw refuse(`its ${MANIFEST_FILE} is unusable (${messageOf(error)})`);
  }
  return { manifest, mirrorManifest };
}
