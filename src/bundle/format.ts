// The bundle: one .tar.gz that carries a mirror (or the part of it another
// mirror lacks) across an air gap. Its first entry, `modmirror-bundle.json`,
// lists every other entry with its sha256 and size; the other entries are
// mirror files at their paths in the mirror, so `tar xzf` of a full bundle
// alone also gives a servable tree.
//
// Format 2 (`bundle --since`) also lists the files the receiver must already
// have, so unbundle can prove it ends up with exactly the sender's mirror:
// `kept` files it must hold byte for byte, and `derived` files (version
// details) it rebuilds from its own copy with the top-level keys the bundle
// carries, and `copies` of a file the bundle carries under another path (a
// module's latest detail is its newest version's). Format 1 bundles have
// none of these and are still read.

import { MirrorError } from '../errors.js';
import { providerArchivesOf, type Manifest } from '../mirror/manifest.js';
import { MANIFEST_FILE } from '../protocol/paths.js';

export const BUNDLE_MANIFEST = 'modmirror-bundle.json';
export const BUNDLE_FORMAT = 2;
/** Formats unbundle reads: 1 had only carried files. */
const READABLE_FORMATS = [1, 2];

export interface BundleFile {
  path: string;
  sha256: string;
  size: number;
}

export interface BundleManifest {
  format: number;
  generator: string;
  /** Set for `bundle --since`: the manifest the receiving mirror was expected to have. */
  base?: { sha256: string; versions: number };
  /** Every file in the bundle after this one, in order (carried). */
  files: BundleFile[];
  /** Files not in the bundle that the receiver must have at that path with that sha256 (format 2). */
  kept?: BundleFile[];
  /** Files not in the bundle that the receiver derives from its own copy (format 2; ./derive.ts). */
  derived?: DerivedFile[];
  /** Per module key (`ns/name/provider`): top-level values its derived files share, carried once. */
  shared?: Record<string, Record<string, unknown>>;
  /** Files not in the bundle that are byte for byte a carried file, `from` (format 2). */
  copies?: CopiedFile[];
}

export interface CopiedFile extends BundleFile {
  from: string;
}

/**
 * A JSON document rebuilt from the receiver's own file at `path`: its
 * top-level `keys` in this order, each valued from `values`, else from the
 * module's `shared` values, else from the receiver's own file.
 */
export interface DerivedFile extends BundleFile {
  module: string;
  keys: string[];
  values: Record<string, unknown>;
}

/** `ns/name/provider@version` for every version a mirror manifest lists, with its archive's sha256. */
export function versionsOf(manifest: Manifest): Map<string, { sha256: string; archive: string }> {
  const versions = new Map<string, { sha256: string; archive: string }>();
  for (const [key, entry] of Object.entries(manifest.modules)) {
    for (const v of entry.versions) versions.set(`${key}@${v.version}`, { sha256: v.sha256, archive: v.archive });
  }
  return versions;
}

/** Provider packages are keyed apart from module versions (no module address holds a ":"). */
export const PROVIDER_ARCHIVE_PREFIX = 'provider:';

/**
 * Every archive a mirror manifest lists, each with its sha256 and path: module
 * versions (`ns/name/provider@version`) and provider packages
 * (`provider:HOSTNAME/NAMESPACE/TYPE@VERSION:OS_ARCH`), so bundle and
 * unbundle treat both alike: immutable, carried once, left out when the base has them.
 */
export function archivesOf(manifest: Manifest): Map<string, { sha256: string; archive: string }> {
  const archives = versionsOf(manifest);
  for (const [key, a] of providerArchivesOf(manifest)) archives.set(`${PROVIDER_ARCHIVE_PREFIX}${key}`, { sha256: a.sha256, archive: a.archive });
  return archives;
}

/**
 * A path a bundle may write: relative, forward slashes, no `.`/`..`
 * segments, no NUL or backslash, not the bundle's own manifest.
 */
export function isSafePath(path: string): boolean {
  if (path === '' || path === BUNDLE_MANIFEST || path.startsWith('/') || /[\\\0]/.test(path)) return false;
  return path.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..');
}

/** Checks the bundle manifest's shape; every problem is a refusal naming the bundle. */
export function parseBundleManifest(text: string, file: string): BundleManifest {
  const invalid = (why: string) =>
    new MirrorError('BUNDLE_INVALID', `${file} is not a usable modmirror bundle: ${why}.`, {
      hint: 'Make the bundle again with modmirror bundle and copy it again; nothing was changed.',
    });
  let value: BundleManifest;
  try {
    value = JSON.parse(text) as BundleManifest;
  } catch (error) {
    throw invalid(`${BUNDLE_MANIFEST} does not parse (${(error as Error).message})`);
  }
  if (typeof value !== 'object' || value === null) throw invalid(`${BUNDLE_MANIFEST} is not an object`);
  if (!READABLE_FORMATS.includes(value.format))
    throw invalid(`format ${JSON.stringify(value.format)} is not ${READABLE_FORMATS.join(' or ')}; it was made by another modmirror version`);
  if (!Array.isArray(value.files)) throw invalid(`${BUNDLE_MANIFEST} has no "files" list`);
  const { kept = [], derived = [], shared = {}, copies = [] } = value;
  if (value.format === 1 && (value.kept !== undefined || value.derived !== undefined || value.shared !== undefined || value.copies !== undefined)) {
    throw invalid(`${BUNDLE_MANIFEST} of format 1 lists files outside the bundle`);
  }
  if (!Array.isArray(kept) || !Array.isArray(derived) || !isObject(shared) || !Array.isArray(copies)) {
    throw invalid(`${BUNDLE_MANIFEST} has an unusable "kept", "derived", "shared" or "copies"`);
  }
  const seen = new Set<string>();
  const check = (f: BundleFile, ok: boolean) => {
    if (!ok || !isFileEntry(f)) throw invalid(`${BUNDLE_MANIFEST} has an unusable file entry ${JSON.stringify(f).slice(0, 200)}`);
    if (seen.has(f.path)) throw invalid(`${BUNDLE_MANIFEST} lists ${f.path} twice`);
    seen.add(f.path);
  };
  for (const f of value.files) check(f, true);
  for (const f of kept) check(f, true);
  for (const f of derived) {
    const ok =
      isObject(f) &&
      typeof f.module === 'string' &&
      (shared[f.module] === undefined || isObject(shared[f.module])) &&
      Array.isArray(f.keys) &&
      f.keys.every((k) => typeof k === 'string') &&
      new Set(f.keys).size === f.keys.length &&
      isObject(f.values);
    check(f, ok);
  }
  const carried = new Map(value.files.map((f) => [f.path, f]));
  for (const f of copies) {
    // A copy names a carried file with the same bytes, so checking that file checks the copy.
    const from = isObject(f) && typeof f.from === 'string' ? carried.get(f.from) : undefined;
    check(f, from !== undefined && from.sha256 === f.sha256 && from.size === f.size);
  }
  if (!value.files.some((f) => f.path === MANIFEST_FILE)) throw invalid('it carries no manifest.json');
  return value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isFileEntry(f: unknown): f is BundleFile {
  if (!isObject(f)) return false;
  return (
    typeof f.path === 'string' &&
    isSafePath(f.path) &&
    typeof f.sha256 === 'string' &&
    /^[0-9a-f]{64}$/.test(f.sha256) &&
    Number.isSafeInteger(f.size) &&
    (f.size as number) >= 0
  );
}
