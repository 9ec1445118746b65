// The records a mirror is written from, and manifest.json's shape: a leaf
// module that emit, browse, hosting, verify and bundle all read, so none of
// them imports another stage for its types.

import type { ModuleSummary } from './protocol/documents.js';
import { addressKey } from './protocol/paths.js';
import type { ModuleAddress } from './types.js';

export const MANIFEST_FORMAT = 1;

export interface ManifestVersion {
  version: string;
  tag: string;
  archive: string;
  sha256: string;
  size: number;
  published_at: string;
}

/** A version replaced with `publish --force`: kept in the manifest so the replacement is on record. */
export interface ForcedReplacement {
  module: string;
  version: string;
  previous_sha256: string;
  sha256: string;
  at: string;
}

/** One provider package (zip) of the network mirror. */
export interface ProviderArchive {
  /** os_arch, as the network mirror keys archives. */
  platform: string;
  /** The zip's path in the mirror. */
  archive: string;
  sha256: string;
  size: number;
  /** ["h1:...", "zh:..."]: what VERSION.json lists and lock files hold. */
  hashes: string[];
}

export interface ProviderVersion {
  version: string;
  /** In platform order. */
  archives: ProviderArchive[];
}

/** Providers by `HOSTNAME/NAMESPACE/TYPE`, in key order; versions newest first. */
export type ProvidersManifest = Record<string, { versions: ProviderVersion[] }>;

/**
 * `manifest.json`: every version with its archive's digest; what verify and
 * publish read back. `providers` and `providers_path` came with the provider
 * network mirror: a manifest without them (an older mirror) has no providers.
 */
export interface Manifest {
  format: number;
  generator: string;
  forced?: ForcedReplacement[];
  modules: Record<string, { versions: ManifestVersion[] }>;
  /** The network mirror's folder in the tree (set when there are providers). */
  providers_path?: string;
  providers?: ProvidersManifest;
}

/** Every provider archive of a manifest, keyed `HOSTNAME/NAMESPACE/TYPE@VERSION:PLATFORM`. */
export function providerArchivesOf(manifest: Pick<Manifest, 'providers'>): Map<string, ProviderArchive> {
  const archives = new Map<string, ProviderArchive>();
  for (const [key, entry] of Object.entries(manifest.providers ?? {})) {
    for (const v of entry.versions) for (const a of v.archives) archives.set(`${key}@${v.version}:${a.platform}`, a);
  }
  return archives;
}

/**
 * What the manifest and the listings keep of each module once its versions
 * are written. Held for every version until the end of a build, so without
 * the archive path: that follows from the address and version (archiveFile).
 */
export interface ModuleRecord {
  address: ModuleAddress;
  latest: ModuleSummary;
  versions: VersionRecord[];
}

export type VersionRecord = Omit<ManifestVersion, 'archive'>;

/** Records in address order, as every index, the browse page and _headers list them: sorted once per write. */
export function sortRecords(records: ModuleRecord[]): ModuleRecord[] {
  return [...records].sort((a, b) => (addressKey(a.address) < addressKey(b.address) ? -1 : 1));
}
