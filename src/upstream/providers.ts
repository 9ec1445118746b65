// Provider packages for the cache: one version's packages fetched into the
// cache's provider folder by sync's own code (every package checked as
// Terraform checks it, the upstream's signed SHA256SUMS, signature and keys
// kept beside them), then published into the mirror through its one write
// (the lock, staging, the ledger, verification), as a release is: only that
// version's files and the indexes are written, and a provider version
// already published keeps its bytes. With the upstream's SHA256SUMS the
// version is served over providers.v1 too, as the upstream serves it.

import { join } from 'node:path';
import type { ResolvedConfig } from '../config/index.js';
import type { PrivateSigningKey } from '../openpgp/keys.js';
import { MirrorError } from '../errors.js';
import { providerKey, providerSumsName, type ProviderAddress } from '../protocol/providers.js';
import { publishProviderPackages } from '../publish/provider.js';
import type { HttpClient } from '../sync/http.js';
import { providerDownloadUrl } from '../sync/provider-upstream.js';
import { providerTypeDir, readRelease, storedArchives } from '../sync/provider-store.js';
import { mirrorProviders } from '../sync/providers.js';
import { emptySyncResult } from '../sync/types.js';

export interface ProviderRun {
  http: HttpClient;
  /** The upstream's providers.v1 URL. */
  service: URL;
  origin: string;
  log: (line: string) => void;
}

/** A package of the version, as the upstream gave it. */
export interface ProviderPackage {
  platform: string;
  /** The upstream's download document for it. */
  location: string;
  /** The zip's sha256, as the upstream's signed SHA256SUMS lists it. */
  sha256: string;
}

/**
 * Fetches `version`'s packages for `platforms` into `into`, and gives those
 * it holds; NOT_FOUND when the upstream has none of them, BAD_GATEWAY when
 * they fail a check.
 */
export async function fetchProviderVersion(
  run: ProviderRun,
  address: ProviderAddress,
  version: string,
  { into, platforms }: { into: string; platforms: string[] },
): Promise<ProviderPackage[]> {
  const result = emptySyncResult();
  const need = { address, constraint: version, matches: (v: string) => v === version, pick: 'every' as const };
  await mirrorProviders({ http: run.http, service: () => run.service, into, platforms, result, log: run.log, keepReleases: true }, [need]);
  if (result.providerVersions.some((r) => r.fetched.length + r.present.length > 0)) {
    const stored = await storedArchives(providerTypeDir(into, address), version);
    return Object.entries(stored).map(([platform, archive]) => ({
      platform,
      location: providerDownloadUrl(run.service, address, version, platform).href,
      sha256: archive.hashes.find((h) => h.startsWith('zh:'))?.slice(3) ?? '',
    }));
  }
  const failure = result.failures[0];
  if (failure === undefined || /no such provider|no upstream version matches/.test(failure.message))
    throw new MirrorError('NOT_FOUND', `Version ${version} of ${providerKey(address)} not found here or upstream for ${platforms.join(', ')}`);
  throw new MirrorError('BAD_GATEWAY', `The upstream ${run.origin} could not give ${providerKey(address)} ${version}: ${failure.message}`);
}

/** Takes a fetched version's packages into the mirror, as a publish of that version: nothing else of the mirror is read or rebuilt. */
export function takeInProviders(
  config: ResolvedConfig,
  into: string,
  signer?: PrivateSigningKey,
): (address: ProviderAddress, version: string) => Promise<void> {
  return async (address, version) => {
    const typeDir = providerTypeDir(into, address);
    // Kept beside the packages as fetched, so providers.v1 serves the upstream's signed SHA256SUMS.
    const release = await readRelease(typeDir, address, version);
    try {
      await publishProviderPackages({
        ...(release ? { release: { ...release, sumsFile: join(typeDir, providerSumsName(address.type, version)) } } : {}),
        outDir: config.outDir,
        cacheDir: config.cacheDir,
        imageHosts: config.imageHosts,
        dir: into,
        address,
        version,
        ...(signer ? { signer } : {}),
      });
    } catch (error) {
      throw new MirrorError('BAD_GATEWAY', `The provider packages fetched from the upstream cannot be kept in the mirror: ${(error as Error).message}`, {
        cause: error,
      });
    }
  };
}
