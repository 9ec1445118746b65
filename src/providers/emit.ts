// The provider network mirror as static files under the mirror's providers
// folder: per provider an index.json of its versions, a VERSION.json per
// version naming each platform's zip (beside it, so the relative `url`
// resolves to it) with its h1: and zh: hashes, and the zips themselves,
// copied from their input folder once and linked from the mirror after:
// written once, never changed, and never shared with a file someone else
// may write to.

import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { sameFile } from '../file-stamp.js';
import { join } from 'node:path';
import type { Staging } from '../mirror/staging.js';
import type { ProvidersManifest, ProviderVersion } from '../mirror/manifest.js';
import {
  parseProviderKey,
  providerDownloadDocument,
  providerDownloadFile,
  providerDownloadUrls,
  providerRegistryBase,
  providerSignatureFile,
  providerSumsFile,
  providerVersionsDocument,
  providerVersionsFile,
  providerIndexDocument,
  providerIndexFile,
  providerKey,
  providerVersionDocument,
  providerVersionFile,
  providerZipFile,
  type ProviderAddress,
  type ProvidersIndex,
} from '../protocol/providers.js';
import { compareVersionsDesc } from '../version-order.js';
import type { ProviderRelease } from './release.js';
import type { ProviderPackage } from './scan.js';

const sha256Of = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** The manifest's providers section for these packages: keys sorted, versions newest first, platforms sorted. */
export function providersManifestOf(packages: ProviderPackage[], path: string, releases: ProviderRelease[] = []): ProvidersManifest {
  const releaseOf = new Map(releases.map((r) => [`${providerKey(r.address)}@${r.version}`, r]));
  const byProvider = new Map<string, Map<string, ProviderPackage[]>>();
  for (const p of packages) {
    const key = providerKey(p.address);
    let versions = byProvider.get(key);
    if (!versions) byProvider.set(key, (versions = new Map<string, ProviderPackage[]>()));
    versions.set(p.version, [...(versions.get(p.version) ?? []), p]);
  }
  const manifest: ProvidersManifest = {};
  for (const key of [...byProvider.keys()].sort()) {
    const versions = byProvider.get(key)!;
    manifest[key] = {
      versions: [...versions.keys()].sort(compareVersionsDesc).map((version): ProviderVersion => ({
        version,
        archives: versions
          .get(version)!
          .sort((a, b) => (a.platform < b.platform ? -1 : 1))
          .map((p) => ({
            platform: p.platform,
            archive: providerZipFile(path, p.address, version, p.platform),
            sha256: p.sha256,
            size: p.size,
            hashes: [p.h1, p.zh],
          })),
        ...registryOf(releaseOf.get(`${key}@${version}`), path),
      })),
    };
  }
  return manifest;
}

function registryOf(release: ProviderRelease | undefined, path: string): Pick<ProviderVersion, 'registry'> {
  if (!release) return {};
  return {
    registry: {
      protocols: release.protocols,
      shasums: { file: providerSumsFile(path, release.address, release.version), sha256: sha256Of(release.sums) },
      signature: { file: providerSignatureFile(path, release.address, release.version), sha256: sha256Of(release.signature) },
      key_id: release.key.keyId,
      ...(release.upstream ? { upstream: true as const } : {}),
    },
  };
}

/** Where a registry version's providers.v1 documents sit: the mirror's own providers.v1, or an upstream's release under its HOSTNAME folder. */
export function registryBaseOf(path: string, address: ProviderAddress, registry: { upstream?: true }): string {
  return providerRegistryBase(path, registry.upstream ? address.hostname : undefined);
}

/** What a build takes from the mirror it replaces (`from`): versions it carries forward as they are there, and the zips it already holds. */
export interface CarriedProviders {
  from: string;
  entries: ProvidersManifest;
  /** Zips (their paths in the mirror) the mirror publishes with the very bytes the provider folders offer. */
  held: Set<string>;
}

/**
 * Writes every provider's documents and links its zips into the staging
 * folder; returns the manifest section. Carried versions keep every file they
 * have in the mirror, linked from it: their bytes never change.
 */
export async function emitProviders(
  staging: Staging,
  packages: ProviderPackage[],
  path: string,
  releases: ProviderRelease[] = [],
  carried?: CarriedProviders,
  baseUrl = '',
): Promise<ProvidersManifest> {
  const scanned = providersManifestOf(packages, path, releases);
  const manifest = mergeProviders(scanned, carried?.entries ?? {});
  const files = new Map(packages.map((p) => [providerZipFile(path, p.address, p.version, p.platform), p.file]));
  for (const [key, entry] of Object.entries(manifest)) {
    const address = parseProviderKey(key);
    await staging.writeJson(providerIndexFile(path, address), providerIndexDocument(entry.versions.map((v) => v.version)));
    for (const v of scanned[key]?.versions ?? []) {
      const archives = v.archives.map((a) => ({ platform: a.platform, url: a.archive.slice(a.archive.lastIndexOf('/') + 1), hashes: a.hashes }));
      await staging.writeJson(providerVersionFile(path, address, v.version), providerVersionDocument(archives));
      for (const a of v.archives) {
        const input = files.get(a.archive)!;
        const own = carried?.held.has(a.archive) ? join(carried.from, a.archive) : undefined;
        // A mirror written before zips were copied holds links to the input itself: those are copied now.
        if (own !== undefined && !sameFile(own, input)) await staging.linkFrom(own, a.archive);
        else await staging.copyFrom(input, a.archive);
      }
    }
    for (const v of carried?.entries[key]?.versions ?? []) {
      const base = v.registry && registryBaseOf(path, address, v.registry);
      const documents = new Map(base ? v.archives.map((a) => [providerDownloadFile(address.namespace, address.type, v.version, a.platform, base), a]) : []);
      for (const file of providerVersionFiles(path, address, v)) {
        const archive = documents.get(file);
        if (archive === undefined || !v.registry) {
          await staging.linkFrom(join(carried!.from, file), file);
          continue;
        }
        // A download document follows the mirror's baseUrl as module locations do; all else of it stays as published.
        const document = JSON.parse(await readFile(join(carried!.from, file), 'utf8')) as Record<string, unknown>;
        Object.assign(
          document,
          providerDownloadUrls(file, { zip: archive.archive, sums: v.registry.shasums.file, signature: v.registry.signature.file }, baseUrl),
        );
        await staging.writeJson(file, document);
      }
    }
  }
  const carriedRegistry = Object.keys(carried?.entries ?? {}).filter((key) => carried!.entries[key]!.versions.some((v) => v.registry));
  await emitRegistry(staging, path, manifest, releases, carriedRegistry, baseUrl);
  return manifest;
}

/** Every file of one published provider version in the mirror. */
function providerVersionFiles(path: string, address: ProviderAddress, v: ProviderVersion): string[] {
  const files = [providerVersionFile(path, address, v.version), ...v.archives.map((a) => a.archive)];
  if (v.registry) {
    files.push(v.registry.shasums.file, v.registry.signature.file);
    const base = registryBaseOf(path, address, v.registry);
    for (const a of v.archives) files.push(providerDownloadFile(address.namespace, address.type, v.version, a.platform, base));
  }
  return files;
}

/** Both sections in one, keys sorted, versions newest first; `b` adds versions `a` lacks. */
function mergeProviders(a: ProvidersManifest, b: ProvidersManifest): ProvidersManifest {
  const merged: ProvidersManifest = {};
  for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    const versions = [...(a[key]?.versions ?? [])];
    for (const v of b[key]?.versions ?? []) if (!versions.some((x) => x.version === v.version)) versions.push(v);
    merged[key] = { versions: versions.sort((x, y) => compareVersionsDesc(x.version, y.version)) };
  }
  return merged;
}

/**
 * The provider registry protocol of in-house releases: each release's
 * SHA256SUMS and signature beside its zips, a download document per platform,
 * and the versions document of every provider `releases` touch (from the
 * manifest, which lists all its versions). publish passes its one release.
 */
export async function emitRegistry(
  staging: Staging,
  path: string,
  manifest: ProvidersManifest,
  releases: ProviderRelease[],
  alsoTouched: string[] = [],
  baseUrl = '',
): Promise<void> {
  const touched = new Set<string>(alsoTouched);
  for (const r of releases) {
    const key = providerKey(r.address);
    const version = manifest[key]?.versions.find((v) => v.version === r.version);
    if (!version?.registry) continue;
    touched.add(key);
    const base = registryBaseOf(path, r.address, version.registry);
    await staging.copyFrom(r.sumsFile, version.registry.shasums.file);
    await staging.write(version.registry.signature.file, r.signature);
    for (const a of version.archives) {
      const document = providerDownloadDocument({
        path,
        address: r.address,
        version: r.version,
        platform: a.platform,
        protocols: r.protocols,
        sha256: a.sha256,
        key: r.key,
        ...(r.upstream ? { listedKeys: r.upstream.keys } : {}),
        base,
        baseUrl,
      });
      await staging.writeJson(providerDownloadFile(r.address.namespace, r.address.type, r.version, a.platform, base), document);
    }
  }
  for (const key of touched) {
    const address = parseProviderKey(key);
    // In-house versions and an upstream's are listed apart, each where its documents are.
    for (const upstream of [false, true]) {
      const listed = manifest[key]!.versions.filter((v) => v.registry && (v.registry.upstream === true) === upstream);
      if (listed.length === 0) continue;
      const versions = listed.map((v) => ({ version: v.version, protocols: v.registry!.protocols, platforms: v.archives.map((a) => a.platform) }));
      const base = providerRegistryBase(path, upstream ? address.hostname : undefined);
      await staging.writeJson(providerVersionsFile(address.namespace, address.type, base), providerVersionsDocument(versions));
    }
  }
}

/** providers-index.json: what the server and the browse page need, without the manifest's digests. */
export function providersIndexOf(path: string, manifest: ProvidersManifest): ProvidersIndex {
  return {
    path,
    providers: Object.entries(manifest).map(([key, entry]) => ({
      ...parseProviderKey(key),
      ...(entry.versions.some((v) => v.registry && !v.registry.upstream) ? { registry: true as const } : {}),
      versions: entry.versions.map((v) => ({
        version: v.version,
        platforms: v.archives.map((a) => a.platform),
        ...(v.registry ? { key_id: v.registry.key_id } : {}),
        ...(v.registry?.upstream ? { upstream: true as const } : {}),
      })),
    })),
  };
}
