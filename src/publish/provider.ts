// `modmirror publish --provider-release DIR`: one in-house provider version
// from a release pipeline's output into an existing mirror, in the same
// transaction as every mirror write. Every zip is checked against SHA256SUMS
// and the signature against the given keys (or the release is signed with
// the site's key) before anything is written; the same release again is a
// no-op; different bytes for a published version are refused.

import type { PrivateSigningKey } from '../openpgp/keys.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ProviderFolder } from '../config/providers.js';
import type { SigningConfig } from '../config/signing.js';
import { MirrorError } from '../errors.js';
import type { ProviderVersion, ProvidersManifest } from '../mirror/manifest.js';
import { ledgerOf } from '../mirror/ledger.js';
import { writeMirrorIndexes } from '../emit/indexes.js';
import { emitRegistry, providersManifestOf } from '../providers/emit.js';
import { authenticateReleases, type ProviderRelease } from '../providers/release.js';
import { scanProviders, type ProviderPackage } from '../providers/scan.js';
import { checkChecksumList, verifyChecksumSignature } from '../providers/signature.js';
import {
  DEFAULT_PROVIDER_PROTOCOLS,
  DEFAULT_PROVIDERS_PATH,
  providerIndexDocument,
  providerIndexFile,
  providerKey,
  providerVersionDocument,
  providerVersionFile,
  providerZipName,
  type ProviderAddress,
} from '../protocol/providers.js';
import { compareVersionsDesc } from '../version-order.js';
import { GENERATOR } from '../version.js';
import type { MirrorWrite } from '../mirror/transaction.js';
import type { OpenedMirror } from '../mirror/read.js';
import { withPartialWrite } from './write.js';

export interface ProviderPublishOptions {
  outDir: string;
  cacheDir: string;
  /** Base URL for a new mirror; an existing mirror keeps its own. */
  baseUrl: string;
  imageHosts: string[];
  /** The release pipeline's output folder. */
  dir: string;
  namespace: string;
  type: string;
  /** The provider's host name in HOSTNAME/NAMESPACE/TYPE; default the mirror's own (its base URL's host). */
  hostname?: string;
  /** Armored public key files whose signatures the release may carry. */
  publicKeys: string[];
  signing?: SigningConfig;
  /** Signs the mirror's truth the release changes (its root), as a module publish does. */
  signer?: PrivateSigningKey;
  /** Start a new mirror when `outDir` holds none. */
  newMirror?: boolean;
  dryRun?: boolean;
}

export interface ProviderPublishResult {
  provider: string;
  version: string;
  platforms: string[];
  keyId: string;
  /** True when modmirror signed the release (it came without a .sig). */
  signedHere: boolean;
  /** would-publish: the same as published, on a dry run. */
  outcome: 'published' | 'unchanged' | 'would-publish';
  changed: string[];
  dryRun: boolean;
  seconds: number;
}

export function publishProviderRelease(options: ProviderPublishOptions): Promise<ProviderPublishResult> {
  // No module is read or changed.
  const write = { ...options, what: 'publishing', check: () => ({ modules: [], providers: true }), modules: () => [] };
  return withPartialWrite(write, async (tx, mirror) => {
    const started = performance.now();
    const { manifest } = mirror;
    const path = manifest.providers_path ?? DEFAULT_PROVIDERS_PATH;
    const baseUrl = mirror.baseUrl ?? options.baseUrl;
    // The first host name given is kept in the manifest, so a pipeline's later releases need not repeat it.
    const given = options.hostname?.toLowerCase();
    const kept = manifest.providers_hostname ?? given;
    const hostname = given ?? kept ?? (baseUrl === '' ? '' : new URL(baseUrl).host.toLowerCase());
    if (hostname === '') {
      throw new MirrorError('USAGE', "The provider's host name is unknown: the mirror has no base URL, and no release named one.", {
        hint: 'Pass --hostname registry.example.com (the host users write in required_providers; the mirror keeps it for later releases), or build the mirror with a baseUrl.',
      });
    }
    const folder: ProviderFolder = { kind: 'releases', dir: options.dir, hostname, namespace: options.namespace, registry: { keys: options.publicKeys } };
    const { packages } = await scanProviders([folder], options.cacheDir);
    const others = packages.filter((p) => p.address.type !== options.type);
    if (others.length > 0)
      throw invalid(`${others[0]!.file}: is a release of ${others[0]!.address.type}, not ${options.type}; publish one provider's release folder at a time`);
    const versions = [...new Set(packages.map((p) => p.version))];
    if (versions.length === 0) throw invalid(`${options.dir}: holds no terraform-provider-${options.type}_VERSION_OS_ARCH.zip`);
    if (versions.length > 1) throw invalid(`${options.dir}: holds releases of several versions (${versions.join(', ')}); publish one at a time`);
    const address: ProviderAddress = { hostname, namespace: options.namespace, type: options.type };
    const key = providerKey(address);
    const version = versions[0]!;
    const existing = manifest.providers?.[key]?.versions.find((v) => v.version === version);
    const releases = await authenticateReleases([folder], packages, {
      ...(options.signing ? { signing: options.signing } : {}),
      previousSignature: () => (existing?.registry ? readIfThere(join(mirror.dir, existing.registry.signature.file)) : undefined),
    });
    const release = releases[0]!;
    const entry = providersManifestOf(packages, path, [release])[key]!.versions[0]!;
    const result = (done: 'published' | 'unchanged', changed: string[]): ProviderPublishResult => ({
      provider: key,
      version,
      platforms: entry.archives.map((a) => a.platform),
      keyId: release.key.keyId,
      signedHere: release.signedHere,
      outcome: options.dryRun && done === 'published' ? 'would-publish' : done,
      changed,
      dryRun: options.dryRun === true,
      seconds: (performance.now() - started) / 1000,
    });
    if (existing) {
      const differences = differencesOf(existing, entry);
      if (differences.length === 0) return result('unchanged', []);
      throw new MirrorError('VERSION_CONFLICT', `${key} ${version} is already published with different content:\n${differences.join('\n')}`, {
        hint: 'Published versions are immutable (lock files hold their hashes): publish a new version number.',
      });
    }
    const changed = await stageProviderVersion(tx, mirror, {
      path,
      baseUrl,
      imageHosts: options.imageHosts,
      address,
      entry,
      packages,
      releases: [release],
      ...(kept ? { hostname: kept } : {}),
    });
    return result('published', changed);
  });
}

/** Where a provider version goes and what it is: its packages, its manifest entry, and its release when it is in the registry. */
interface StagedProviderVersion {
  path: string;
  baseUrl: string;
  imageHosts: string[];
  address: ProviderAddress;
  entry: ProviderVersion;
  packages: ProviderPackage[];
  releases: ProviderRelease[];
  /** The host name in-house providers are published under, kept in the manifest. */
  hostname?: string;
}

/** Writes a new provider version into the mirror: its zips, the network mirror's two documents, the registry's when released, the indexes. */
async function stageProviderVersion(tx: MirrorWrite, mirror: OpenedMirror, v: StagedProviderVersion): Promise<string[]> {
  const { manifest } = mirror;
  const key = providerKey(v.address);
  const providers: ProvidersManifest = { ...(manifest.providers ?? {}) };
  providers[key] = { versions: [...(providers[key]?.versions ?? []), v.entry].sort((a, b) => compareVersionsDesc(a.version, b.version)) };
  const entries: ProvidersManifest = Object.fromEntries(Object.entries(providers).sort(([a], [b]) => (a < b ? -1 : 1)));
  return tx.stage(async (staging) => {
    for (const p of v.packages) await staging.copyFrom(p.file, v.entry.archives.find((a) => a.platform === p.platform)!.archive);
    await staging.writeJson(providerIndexFile(v.path, v.address), providerIndexDocument(entries[key]!.versions.map((e) => e.version)));
    const archives = v.entry.archives.map((a) => ({ platform: a.platform, url: a.archive.slice(a.archive.lastIndexOf('/') + 1), hashes: a.hashes }));
    await staging.writeJson(providerVersionFile(v.path, v.address, v.entry.version), providerVersionDocument(archives));
    if (v.releases.length > 0) await emitRegistry(staging, v.path, entries, v.releases, [], v.baseUrl);
    // No module changed: no module listing is rewritten (`only` matches none); the indexes, manifest and browse page are.
    await writeMirrorIndexes(staging, mirror.records(), {
      baseUrl: v.baseUrl,
      imageHosts: v.imageHosts,
      generator: GENERATOR,
      ledger: ledgerOf(manifest),
      deprecations: mirror.deprecations,
      only: [],
      providers: { path: v.path, entries, ...(v.hostname ? { hostname: v.hostname } : {}) },
      ...(mirror.live ? { live: mirror.live } : {}),
    });
    return staging.changed ?? [];
  });
}

export interface ProviderPackagesOptions {
  outDir: string;
  cacheDir: string;
  imageHosts: string[];
  /** A folder laid out as `terraform providers mirror` writes it, holding the version's packages. */
  dir: string;
  address: ProviderAddress;
  version: string;
  /** Signs the truth of a signed mirror. */
  signer?: PrivateSigningKey;
  /**
   * The upstream's signed SHA256SUMS of the version (kept as fetched, `sumsFile`
   * its copy), its signature, the key that made it and the keys the upstream
   * listed: the version is then served over providers.v1 too, as the upstream
   * serves it, so Terraform checks it and records its hashes as from the upstream.
   */
  release?: UpstreamRelease;
}

export interface UpstreamRelease {
  sumsFile: string;
  sums: Buffer;
  signature: Buffer;
  keyId: string;
  keys: Record<string, unknown>[];
  protocols: string[];
}

/**
 * One provider version's packages from a folder in the network mirror's
 * layout (the upstream cache's, checked against the upstream's signed
 * SHA256SUMS as they were fetched) into an existing mirror, as a publish:
 * the same packages again are a no-op, other bytes for a published version
 * are refused, and nothing else of the mirror is read or rebuilt.
 */
export function publishProviderPackages(options: ProviderPackagesOptions): Promise<{ outcome: 'published' | 'unchanged'; changed: string[] }> {
  const write = { ...options, what: 'publishing', check: () => ({ modules: [], providers: true }), modules: () => [] };
  return withPartialWrite(write, async (tx, mirror) => {
    const { manifest } = mirror;
    const path = manifest.providers_path ?? DEFAULT_PROVIDERS_PATH;
    const key = providerKey(options.address);
    const { packages: all } = await scanProviders([{ kind: 'mirror', dir: options.dir }], options.cacheDir);
    const packages = all.filter((p) => providerKey(p.address) === key && p.version === options.version);
    if (packages.length === 0) throw invalid(`${options.dir}: holds no package of ${key} ${options.version}`);
    const releases = options.release ? [await upstreamRelease(options.address, options.version, packages, options.release)] : [];
    const entry = providersManifestOf(packages, path, releases)[key]!.versions[0]!;
    const existing = manifest.providers?.[key]?.versions.find((v) => v.version === options.version);
    if (existing) {
      const differences = differencesOf(existing, entry);
      if (differences.length === 0) return { outcome: 'unchanged', changed: [] };
      throw new MirrorError('VERSION_CONFLICT', `${key} ${options.version} is already published with different content:\n${differences.join('\n')}`, {
        hint: 'Published versions are immutable (lock files hold their hashes).',
      });
    }
    const baseUrl = mirror.baseUrl ?? '';
    const hostname = manifest.providers_hostname;
    const changed = await stageProviderVersion(tx, mirror, {
      path,
      baseUrl,
      imageHosts: options.imageHosts,
      address: options.address,
      entry,
      packages,
      releases,
      ...(hostname ? { hostname } : {}),
    });
    return { outcome: 'published', changed };
  });
}

/** The upstream's release checked again as Terraform will check it here: the signature by the key named, a SHA256SUMS line for each package. */
async function upstreamRelease(address: ProviderAddress, version: string, packages: ProviderPackage[], r: UpstreamRelease): Promise<ProviderRelease> {
  const listed = r.keys.find((k) => (typeof k['key_id'] === 'string' ? k['key_id'] : '') === r.keyId);
  if (typeof listed?.['ascii_armor'] !== 'string') throw invalid(`${r.sumsFile}: the upstream's keys do not include ${r.keyId}, which signed it`);
  const key = { keyId: r.keyId, asciiArmor: listed['ascii_armor'] };
  try {
    await verifyChecksumSignature(r.sums, r.signature, [key]);
    for (const p of packages) checkChecksumList(r.sums, providerZipName(address.type, version, p.platform), p.sha256);
  } catch (error) {
    throw invalid(`${r.sumsFile}: ${(error as Error).message}`);
  }
  return {
    address,
    version,
    protocols: r.protocols.length > 0 ? r.protocols : [...DEFAULT_PROVIDER_PROTOCOLS],
    sumsFile: r.sumsFile,
    sums: r.sums,
    signature: r.signature,
    signedHere: false,
    key,
    upstream: { keys: r.keys },
  };
}

const invalid = (message: string) => new MirrorError('PROVIDER_INVALID', `${message}; nothing was written`);

/** What differs between a published version and the release offered for it, one line each. */
function differencesOf(published: ProviderVersion, offered: ProviderVersion): string[] {
  const lines: string[] = [];
  const platforms = new Set([...published.archives, ...offered.archives].map((a) => a.platform));
  for (const platform of [...platforms].sort()) {
    const a = published.archives.find((x) => x.platform === platform)?.sha256 ?? '(none)';
    const b = offered.archives.find((x) => x.platform === platform)?.sha256 ?? '(none)';
    if (a !== b) lines.push(`  ${platform}: published sha256 ${a}, this one ${b}`);
  }
  const sumsA = published.registry?.shasums.sha256 ?? '(not in the registry)';
  const sumsB = offered.registry?.shasums.sha256;
  if (lines.length === 0 && sumsA !== sumsB) lines.push(`  SHA256SUMS: published sha256 ${sumsA}, this one ${sumsB}`);
  return lines;
}

function readIfThere(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}
