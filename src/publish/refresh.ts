// Derived documents written again from the mirror's truth: the documents of
// the modules named (versions, details, downloads) and the indexes, listings,
// browse page and `_headers` that show them, all from the manifest and each
// version's content. What a bucket writer does after its commit when other
// writers may have overwritten what it derived, what heals a module a killed
// writer left half-derived, and what `verify --repair` does for every module
// (of a folder here; of a bucket through bucket/repair.ts).

import { emitModule } from '../emit/index.js';
import { writeMirrorIndexes } from '../emit/indexes.js';
import { ledgerOf } from '../mirror/ledger.js';
import { carriedProviders } from '../mirror/manifest.js';
import { moduleFamily, readModuleVersions } from '../mirror/read.js';
import { MANIFEST_FILE, parseAddressKey } from '../protocol/paths.js';
import { GENERATOR } from '../version.js';
import { withPartialWrite } from './write.js';

export interface RefreshOptions {
  outDir: string;
  /** As the config's browse.imageHosts, so the browse page matches a build's. */
  imageHosts: string[];
  /** False when the archives are stand-ins of their size (a bucket's mirror fetched for a write). */
  hashArchives?: boolean;
}

/**
 * Writes the derived documents of `keys` (those the mirror holds; every
 * module with `all`) and every index again; the manifest changes only to
 * upgrade a format-1 one. Returns the modules refreshed and the files that changed.
 */
export function refreshModules(keys: string[] | 'all', options: RefreshOptions): Promise<{ refreshed: string[]; changed: string[] }> {
  const refreshed: string[] = [];
  const check = () => ({ modules: refreshed, hashArchives: options.hashArchives !== false });
  const modules = (dir: string) => (keys === 'all' ? undefined : [...new Set(keys.flatMap((key) => moduleFamily(dir, parseAddressKey(key))))]);
  return withPartialWrite({ outDir: options.outDir, what: 'the refresh', check, modules }, async (tx, mirror) => {
    const { manifest } = mirror;
    const held = [...new Set(keys === 'all' ? Object.keys(manifest.modules) : keys)].filter((key) => (manifest.modules[key]?.versions.length ?? 0) > 0).sort();
    const changed = await tx.stage(async (staging) => {
      const baseUrl = mirror.baseUrl ?? '';
      for (const key of held) {
        const address = parseAddressKey(key);
        const versions = await readModuleVersions(mirror.dir, manifest, address);
        await emitModule(staging, versions, mirror.providersOf(address.namespace, address.name), { baseUrl, deprecations: mirror.deprecations[key] });
        refreshed.push(key);
      }
      await writeMirrorIndexes(staging, mirror.records(), {
        baseUrl,
        imageHosts: options.imageHosts,
        generator: GENERATOR,
        ledger: ledgerOf(manifest),
        deprecations: mirror.deprecations,
        ...(keys === 'all' ? {} : { only: held.map(parseAddressKey) }),
        providers: carriedProviders(manifest),
        ...(mirror.live && keys !== 'all' ? { live: mirror.live } : {}),
      });
      // The manifest is rewritten with the bytes it had (but for a format-1 upgrade): what changed is derived.
      return (staging.changed ?? []).filter((rel) => rel !== MANIFEST_FILE);
    });
    return { refreshed, changed };
  });
}
