// The bundle: one .tar.gz that carries a mirror (or the part of it another
// mirror lacks) across an air gap. Its first entry, `modmirror-bundle.json`,
// lists every other entry with its sha256 and size; the other entries are
// mirror files at their paths in the mirror, so `tar xzf` alone also gives a
// servable tree.

import { MirrorError } from '../errors.js';
import { providerArchivesOf, type Manifest } from '../manifest.js';

export const BUNDLE_MANIFEST = 'modmirror-bundle.json';
export const BUNDLE_FORMAT = 1;

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
  /** Every file in the bundle after this one, in order. */
  files: BundleFile[];
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
  if (value.format !== BUNDLE_FORMAT) throw invalid(`format ${JSON.stringify(value.format)} is not ${BUNDLE_FORMAT}; it was made by another modmirror version`);
  if (!Array.isArray(value.files)) throw invalid(`${BUNDLE_MANIFEST} has no "files" list`);
  const seen = new Set<string>();
  for (const f of value.files) {
    const ok = typeof f === 'object' && f !== null && typeof f.path === 'string' && isSafePath(f.path) &&
      typeof f.sha256 === 'string' && /^[0-9a-f]{64}$/.test(f.sha256) && Number.isSafeInteger(f.size) && f.size >= 0;
    if (!ok) throw invalid(`${BUNDLE_MANIFEST} has an unusable file entry ${JSON.stringify(f).slice(0, 200)}`);
    if (seen.has(f.path)) throw invalid(`${BUNDLE_MANIFEST} lists ${f.path} twice`);
    seen.add(f.path);
  }
  if (!seen.has('manifest.json')) throw invalid('it carries no manifest.json');
  return value;
}
