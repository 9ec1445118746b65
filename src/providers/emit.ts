// The provider network mirror as static files under the mirror's providers
// folder: per provider an index.json of its versions, a VERSION.json per
// version naming each platform's zip (beside it, so the relative `url`
// resolves to it) with its h1: and zh: hashes, and the zips themselves,
// hard-linked from their input folder: written once, never changed.

import type { Staging } from '../emit/staging.js';
import type { ProvidersManifest, ProviderVersion } from '../manifest.js';
import {
  parseProviderKey,
  providerIndexDocument,
  providerIndexFile,
  providerKey,
  providerVersionDocument,
  providerVersionFile,
  providerZipFile,
  type ProvidersIndex,
} from '../protocol/providers.js';
import { compareVersionsDesc } from '../version-order.js';
import type { ProviderPackage } from './scan.js';

/** The manifest's providers section for these packages: keys sorted, versions newest first, platforms sorted. */
export function providersManifestOf(packages: ProviderPackage[], path: string): ProvidersManifest {
  const byProvider = new Map<string, Map<string, ProviderPackage[]>>();
  for (const p of packages) {
    const key = providerKey(p.address);
    let versions = byProvider.get(key);
    if (!versions) byProvider.set(key, (versions = new Map()));
    versions.set(p.version, [...(versions.get(p.version) ?? []), p]);
  }
  const manifest: ProvidersManifest = {};
  for (const key of [...byProvider.keys()].sort()) {
    const versions = byProvider.get(key)!;
    manifest[key] = {
      versions: [...versions.keys()].sort(compareVersionsDesc).map(
        (version): ProviderVersion => ({
          version,
          archives: versions
            .get(version)!
            .sort((a, b) => (a.platform < b.platform ? -1 : 1))
            .map((p) => ({ platform: p.platform, archive: providerZipFile(path, p.address, version, p.platform), sha256: p.sha256, size: p.size, hashes: [p.h1, p.zh] })),
        }),
      ),
    };
  }
  return manifest;
}

/** Writes every provider's documents and links its zips into the staging folder; returns the manifest section. */
export async function emitProviders(staging: Staging, packages: ProviderPackage[], path: string): Promise<ProvidersManifest> {
  const manifest = providersManifestOf(packages, path);
  const files = new Map(packages.map((p) => [providerZipFile(path, p.address, p.version, p.platform), p.file]));
  for (const [key, entry] of Object.entries(manifest)) {
    const address = parseProviderKey(key);
    await staging.writeJson(providerIndexFile(path, address), providerIndexDocument(entry.versions.map((v) => v.version)));
    for (const v of entry.versions) {
      const archives = v.archives.map((a) => ({ platform: a.platform, url: a.archive.slice(a.archive.lastIndexOf('/') + 1), hashes: a.hashes }));
      await staging.writeJson(providerVersionFile(path, address, v.version), providerVersionDocument(archives));
      for (const a of v.archives) await staging.linkFrom(files.get(a.archive)!, a.archive);
    }
  }
  return manifest;
}

/** providers-index.json: what the server and the browse page need, without the manifest's digests. */
export function providersIndexOf(path: string, manifest: ProvidersManifest): ProvidersIndex {
  return {
    path,
    providers: Object.entries(manifest).map(([key, entry]) => ({
      ...parseProviderKey(key),
      versions: entry.versions.map((v) => ({ version: v.version, platforms: v.archives.map((a) => a.platform) })),
    })),
  };
}
