// What a change to one module reads of a mirror, so a write into a bucket
// fetches only that: the mirror-wide documents publish opens (discovery,
// search index, deprecations), every version's detail of the module and of
// the same name's other providers (a detail lists them), and the module's
// archives as stand-ins (its documents are checked against their sizes).

import type { Manifest } from '../mirror/manifest.js';
import { DEPRECATIONS_FILE } from '../mirror/deprecations.js';
import { addressKey, archiveFile, DISCOVERY_FILE, SEARCH_INDEX_FILE, versionDetailFile } from '../protocol/paths.js';
import type { ModuleAddress } from '../types.js';
import type { BucketReads } from './write.js';

export function moduleReads(address: ModuleAddress, manifest: Manifest | undefined): BucketReads {
  const files = [DISCOVERY_FILE, SEARCH_INDEX_FILE, DEPRECATIONS_FILE];
  const standIns: BucketReads['standIns'] = [];
  // A new provider for the name rewrites its siblings' details too (they list the providers).
  const newProvider = manifest?.modules[addressKey(address)] === undefined;
  for (const [key, { versions }] of Object.entries(manifest?.modules ?? {})) {
    const [namespace = '', name = '', provider = ''] = key.split('/');
    if (namespace !== address.namespace || name !== address.name) continue;
    const sibling = { namespace, name, provider };
    if (key !== addressKey(address) && !newProvider) continue;
    for (const v of versions) {
      files.push(versionDetailFile(sibling, v.version));
      standIns.push({ rel: archiveFile(sibling, v.version), size: v.size });
    }
  }
  return { files, standIns };
}
