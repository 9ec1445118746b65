// What a cache holds, as `modmirror cache list` shows it: every module
// version and provider package of the mirror (its truth, the manifest), each
// with what the data folder says of it: when it was filled from the upstream
// and with which upstream digest (record.ts), and when it was last
// downloaded. A version the mirror got another way (publish, a build, a
// bundle) is listed too, with no fill: the mirror is what a bundle carries.

import type { Manifest } from '../mirror/manifest.js';
import { isModuleFill, type Fill, type ModuleFill, type ProviderFill } from './record.js';

interface Held {
  version: string;
  /** The archive's sha256 in the mirror. */
  sha256: string;
  /** Its path in the mirror. */
  archive: string;
  /** When it was filled from the upstream; null when the mirror got it another way. */
  fetched: string | null;
  /** The upstream's sha256 of what it sent (null: not filled, or a git checkout). */
  upstream_sha256: string | null;
  /** When it was last downloaded whole through serve --upstream; null when never since the cache recorded it. */
  last_used: string | null;
}

export type HeldModule = Held & { module: string };
export type HeldProvider = Held & { provider: string; platform: string };

export interface Holdings {
  modules: HeldModule[];
  providers: HeldProvider[];
}

export function holdingsOf(manifest: Manifest, fills: Fill[], lastUse: Record<string, string>): Holdings {
  // The last fill of each: a version removed and filled again was filled when the last line says.
  const moduleFills = new Map<string, ModuleFill>();
  const providerFills = new Map<string, ProviderFill>();
  for (const fill of fills) {
    if (isModuleFill(fill)) moduleFills.set(`${fill.module} ${fill.version}`, fill);
    else providerFills.set(`${fill.provider} ${fill.version} ${fill.platform}`, fill);
  }
  const held = (archive: string, sha256: string, fill: { at: string; sha256: string; upstream_sha256: string | null } | undefined) => {
    // A fill recorded for other bytes than the mirror's says nothing of what it holds now.
    const filled = fill?.sha256 === sha256 ? fill : undefined;
    return { sha256, archive, fetched: filled?.at ?? null, upstream_sha256: filled?.upstream_sha256 ?? null, last_used: lastUse[archive] ?? null };
  };
  const modules: HeldModule[] = [];
  for (const [module, entry] of Object.entries(manifest.modules).sort(([a], [b]) => (a < b ? -1 : 1))) {
    for (const v of entry.versions) modules.push({ module, version: v.version, ...held(v.archive, v.sha256, moduleFills.get(`${module} ${v.version}`)) });
  }
  const providers: HeldProvider[] = [];
  for (const [provider, entry] of Object.entries(manifest.providers ?? {}).sort(([a], [b]) => (a < b ? -1 : 1))) {
    for (const v of entry.versions) {
      for (const a of v.archives) {
        const fill = providerFills.get(`${provider} ${v.version} ${a.platform}`);
        providers.push({ provider, version: v.version, platform: a.platform, ...held(a.archive, a.sha256, fill) });
      }
    }
  }
  return { modules, providers };
}
