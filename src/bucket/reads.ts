// What a change to one module reads of a mirror, so a write into a bucket
// fetches only that: every version's detail of the module (and, for a new
// provider of a name, of the name's other providers: a detail lists them),
// and the module's archives as stand-ins (its documents are checked against
// their sizes). The manifest holds the rest. A format-1 manifest (an older
// mirror) does not: its base URL, deprecations and module summaries are read
// from discovery, deprecations.json and each module's latest detail, once,
// and the write stores them in the manifest.

import type { Manifest } from '../mirror/manifest.js';
import { DEPRECATIONS_FILE } from '../mirror/deprecations.js';
import { addressKey, archiveFile, DISCOVERY_FILE, parseAddressKey, versionDetailFile } from '../protocol/paths.js';
import type { ModuleAddress } from '../types.js';
import { latestVersion } from '../version-order.js';
import type { BucketReads } from './write.js';

export function moduleReads(address: ModuleAddress, manifest: Manifest | undefined, options: { siblings?: boolean } = {}): BucketReads {
  const files: string[] = [];
  const standIns: BucketReads['standIns'] = [];
  // A new provider for the name rewrites its siblings' details too (they list the providers).
  const newProvider = options.siblings !== false && manifest?.modules[addressKey(address)] === undefined;
  for (const [key, { versions }] of Object.entries(manifest?.modules ?? {})) {
    const sibling = parseAddressKey(key);
    if (sibling.namespace !== address.namespace || sibling.name !== address.name) continue;
    if (key !== addressKey(address) && !newProvider) continue;
    for (const v of versions) {
      files.push(versionDetailFile(sibling, v.version));
      standIns.push({ rel: archiveFile(sibling, v.version), size: v.size });
    }
  }
  if (manifest && manifest.format < 2) files.push(...upgradeReads(manifest));
  return { files: [...new Set(files)], standIns };
}

/** What a format-1 manifest leaves in derived documents: discovery (the base URL), deprecations.json, each module's latest detail. */
function upgradeReads(manifest: Manifest): string[] {
  const files = [DISCOVERY_FILE, DEPRECATIONS_FILE];
  for (const [key, { versions }] of Object.entries(manifest.modules)) {
    const latest = latestVersion(versions.map((v) => v.version));
    if (latest !== undefined) files.push(versionDetailFile(parseAddressKey(key), latest));
  }
  return files;
}
