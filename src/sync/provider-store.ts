// Writing synced provider packages into a provider folder, in the layout
// `terraform providers mirror` writes (HOSTNAME/NAMESPACE/TYPE/ with
// index.json, VERSION.json and the zips side by side), one version at a time:
// the zips are downloaded and checked in a scratch folder beside them (a
// name starting with ".", which readers skip), renamed into place, and only
// then does VERSION.json name them and index.json list the version. A sync
// killed at any point leaves the folder as it was, or the version whole.

import { existsSync } from 'node:fs';
import { readdir, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../atomic.js';
import {
  providerIndexDocument,
  providerSignatureName,
  providerSumsName,
  providerVersionDocument,
  providerZipName,
  type ProviderAddress,
} from '../protocol/providers.js';
import { compareVersionsDesc, validVersion } from '../version-order.js';

export interface Archive {
  url: string;
  hashes: string[];
}

export function providerTypeDir(into: string, address: ProviderAddress): string {
  return join(into, address.hostname, address.namespace, address.type);
}

/** The release name of a package; the folder's own name for it, whatever the upstream called it. */
export function packageFileName(address: ProviderAddress, version: string, platform: string): string {
  return providerZipName(address.type, version, platform);
}

/** The archives a version's VERSION.json lists whose zip is there; empty when the version is not in the folder. */
export async function storedArchives(typeDir: string, version: string): Promise<Record<string, Archive>> {
  let text: string;
  try {
    text = await readFile(join(typeDir, `${version}.json`), 'utf8');
  } catch {
    return {};
  }
  let archives: unknown;
  try {
    archives = (JSON.parse(text) as { archives?: unknown }).archives;
  } catch {
    // A damaged file (written by hand): the version is fetched again and the file replaced.
    return {};
  }
  const kept: Record<string, Archive> = {};
  for (const [platform, value] of Object.entries(typeof archives === 'object' && archives !== null ? archives : {})) {
    const archive = value as Partial<Archive>;
    if (typeof archive?.url === 'string' && !archive.url.includes('/') && Array.isArray(archive.hashes) && existsSync(join(typeDir, archive.url))) {
      kept[platform] = { url: archive.url, hashes: archive.hashes.filter((h): h is string => typeof h === 'string') };
    }
  }
  return kept;
}

/**
 * Moves checked packages from the scratch folder into `typeDir` and records
 * them: VERSION.json (the version's earlier platforms kept), then index.json.
 */
export async function storeProviderPackages(
  typeDir: string,
  version: string,
  packages: { platform: string; file: string; name: string; hashes: string[] }[],
): Promise<void> {
  const archives = await storedArchives(typeDir, version);
  for (const p of packages) {
    await rename(p.file, join(typeDir, p.name));
    archives[p.platform] = { url: p.name, hashes: p.hashes };
  }
  const sorted = Object.entries(archives)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([platform, a]) => ({ platform, ...a }));
  await writeFileAtomic(join(typeDir, `${version}.json`), `${JSON.stringify(providerVersionDocument(sorted), null, 2)}\n`);
  await writeIndex(typeDir);
}

/** index.json lists every version that has its VERSION.json, oldest first. */
async function writeIndex(typeDir: string): Promise<void> {
  const names = await readdir(typeDir);
  const versions = names
    .filter((n) => n.endsWith('.json') && n !== 'index.json' && !n.startsWith('.'))
    .map((n) => n.slice(0, -'.json'.length))
    .filter((v) => validVersion(v) === v)
    .sort((a, b) => compareVersionsDesc(b, a));
  await writeFileAtomic(join(typeDir, 'index.json'), `${JSON.stringify(providerIndexDocument(versions), null, 2)}\n`);
}

/** A version's SHA256SUMS as the upstream signed it, checked: its bytes, the signature's, the key that made it, and what the upstream listed. */
export interface SignedList {
  sums: Buffer;
  signature: Buffer;
  keyId: string;
  /** The signing keys as the upstream's download document listed them. */
  keys: Record<string, unknown>[];
  /** The plugin protocol versions it named. */
  protocols: string[];
}

/** terraform-provider-TYPE_VERSION_registry.json: the key and what the upstream listed, beside the SHA256SUMS and its .sig. */
const registryName = (type: string, version: string) => `terraform-provider-${type}_${version}_registry.json`;

/** Keeps a version's signed SHA256SUMS, its signature and the upstream's keys beside its packages, byte for byte. */
export async function storeRelease(typeDir: string, address: ProviderAddress, version: string, list: SignedList): Promise<void> {
  await writeFileAtomic(join(typeDir, providerSumsName(address.type, version)), list.sums);
  await writeFileAtomic(join(typeDir, providerSignatureName(address.type, version)), list.signature);
  const registry = { key_id: list.keyId, protocols: list.protocols, gpg_public_keys: list.keys };
  await writeFileAtomic(join(typeDir, registryName(address.type, version)), `${JSON.stringify(registry, null, 2)}\n`);
}

/** What storeRelease kept for a version; undefined when it kept nothing (or not all of it). */
export async function readRelease(typeDir: string, address: ProviderAddress, version: string): Promise<SignedList | undefined> {
  try {
    const registry = JSON.parse(await readFile(join(typeDir, registryName(address.type, version)), 'utf8')) as {
      key_id: string;
      protocols: string[];
      gpg_public_keys: Record<string, unknown>[];
    };
    return {
      sums: await readFile(join(typeDir, providerSumsName(address.type, version))),
      signature: await readFile(join(typeDir, providerSignatureName(address.type, version))),
      keyId: registry.key_id,
      keys: registry.gpg_public_keys,
      protocols: registry.protocols,
    };
  } catch {
    return undefined;
  }
}
