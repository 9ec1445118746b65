// What a build keeps of the mirror it replaces. A build makes the mirror
// match its sources, but never by losing or changing what is published: a
// version the sources no longer produce (published by hand, synced, from a
// removed source) is carried forward with its archive and documents until it
// is pruned on purpose (`--prune`, recorded in the ledger); a version the
// sources now produce with other bytes (a moved tag, a re-zipped provider)
// fails, and the published one stays, unless replaced on purpose
// (`--replace`, modules only: lock files pin provider hashes).

import { MirrorError } from '../errors.js';
import { ledgerOf, requester } from '../mirror/ledger.js';
import type { Ledger, Manifest, ManifestVersion, ProvidersManifest } from '../mirror/manifest.js';
import { addressKey } from '../protocol/paths.js';
import { providerKey } from '../protocol/providers.js';
import type { ProviderPackage } from '../providers/scan.js';
import type { BuildProblem, VersionSource } from '../types.js';
import { compareVersionsDesc } from '../version-order.js';

export interface KeepOptions {
  /** Remove the published versions the sources no longer produce, on record. */
  prune?: boolean;
  /** `ns/name/provider@version` of module versions whose published bytes may be replaced, on record. */
  replace?: string[];
  /** Every module version the sources now give with other bytes replaces the published one, on record: a preview mirror (`modmirror dev`), whose sources are being edited. */
  replaceAll?: boolean;
}

export interface Published {
  /** Module versions the sources no longer produce, by module key, carried forward. */
  carried: Map<string, ManifestVersion[]>;
  /** Provider versions carried forward (the sources lack them, or offer other bytes). */
  carriedProviders: ProvidersManifest;
  /** The host name a `publish --provider-release` gave the mirror, kept for the next. */
  providersHostname: string | undefined;
  /** Published zips (paths in the mirror) the provider folders offer again with the same bytes, beside new platforms: linked from the mirror. */
  heldZips: Set<string>;
  /** Provider versions (`host/ns/type@version`) the provider folders offer exactly as published: carried as they are. */
  held: Set<string>;
  /** Scanned provider packages, less those of versions whose published bytes differ. */
  packages: ProviderPackage[];
  /** Provider versions refused for other bytes (`host/ns/type@version`, carried as published), and the build errors saying so. */
  refused: Set<string>;
  errors: BuildProblem[];
  /** The new manifest's ledger: the old records, this build's removals, and (added as versions are built) its replacements. */
  ledger: Required<Ledger>;
  /** How many published versions this build removes on purpose. */
  pruned: number;
  /** A built version's verdict against the published one of that number. */
  check(source: VersionSource, sha256: string): 'new' | 'same' | 'replaced' | MirrorError;
  /** What the mirror published under a source's version, to keep when the source fails. */
  entry(source: VersionSource): PublishedEntry | undefined;
}

/** What keeping a published version needs of its manifest entry: its archive's path follows from the address. */
export type PublishedEntry = Pick<ManifestVersion, 'version' | 'sha256' | 'size'>;

export function keepPublished(previous: Manifest | undefined, versions: VersionSource[], packages: ProviderPackage[], options: KeepOptions): Published {
  const ledger = ledgerOf(previous);
  const at = new Date().toISOString();
  const by = requester();
  // Only a mirror with published modules needs to know which the sources still produce.
  const produced = new Set(previous && Object.keys(previous.modules).length > 0 ? versions.map((v) => `${addressKey(v.address)}@${v.version}`) : []);
  const carried = new Map<string, ManifestVersion[]>();
  // Held for the whole build: the digest and size of each published version, and nothing more.
  const publishedSha = new Map<string, [sha256: string, size: number]>();
  let pruned = 0;
  for (const [key, { versions: list }] of Object.entries(previous?.modules ?? {})) {
    for (const v of list) {
      publishedSha.set(`${key}@${v.version}`, [v.sha256, v.size]);
      if (produced.has(`${key}@${v.version}`)) continue;
      if (options.prune) {
        ledger.removed.push({ module: key, version: v.version, sha256: v.sha256, at, by });
        pruned++;
      } else carried.set(key, [...(carried.get(key) ?? []), v]);
    }
  }

  const offered = new Map<string, ProviderPackage[]>();
  for (const p of packages) {
    const id = `${providerKey(p.address)}@${p.version}`;
    offered.set(id, [...(offered.get(id) ?? []), p]);
  }
  const carriedProviders: ProvidersManifest = {};
  const carry = (key: string, v: ProvidersManifest[string]['versions'][number]) => {
    carriedProviders[key] = { versions: [...(carriedProviders[key]?.versions ?? []), v] };
  };
  const refused = new Set<string>();
  const heldZips = new Set<string>();
  const held = new Set<string>();
  const errors: BuildProblem[] = [];
  for (const [key, { versions: list }] of Object.entries(previous?.providers ?? {})) {
    for (const v of list) {
      const id = `${key}@${v.version}`;
      const offers = offered.get(id);
      if (!offers) {
        if (!options.prune) carry(key, v);
        else {
          ledger.removed.push({ provider: key, version: v.version, archives: Object.fromEntries(v.archives.map((a) => [a.platform, a.sha256])), at, by });
          pruned++;
        }
        continue;
      }
      const changed = v.archives.filter((a) => offers.some((p) => p.platform === a.platform && p.sha256 !== a.sha256));
      if (changed.length === 0) {
        // Offered as published: kept whole, with its signature and documents, rather than made again
        // (a release re-signed since has other signature bytes for the same zips).
        const samePlatforms = offers.length === v.archives.length && offers.every((p) => v.archives.some((a) => a.platform === p.platform));
        if (samePlatforms) {
          held.add(id);
          carry(key, v);
        } else for (const a of v.archives) heldZips.add(a.archive);
        continue;
      }
      refused.add(id);
      carry(key, v);
      const lines = changed.map(
        (a) => `  ${a.platform}: published sha256 ${a.sha256}, the provider folder's ${offers.find((p) => p.platform === a.platform)!.sha256}`,
      );
      errors.push({
        code: 'VERSION_CONFLICT',
        message: `${key} ${v.version}: the provider folder holds other bytes than the published version, which stays as it was:\n${lines.join('\n')}\n  Lock files hold the published hashes: release the change as a new version.`,
        where: offers[0]!.file,
      });
    }
  }

  const replace = new Set(options.replace ?? []);
  return {
    carried,
    carriedProviders,
    providersHostname: previous?.providers_hostname,
    heldZips,
    packages: packages.filter((p) => !refused.has(`${providerKey(p.address)}@${p.version}`) && !held.has(`${providerKey(p.address)}@${p.version}`)),
    held,
    refused,
    errors,
    ledger,
    pruned,
    check(source, sha256) {
      const key = addressKey(source.address);
      const published = publishedSha.get(`${key}@${source.version}`)?.[0];
      if (published === undefined) return 'new';
      if (published === sha256) return 'same';
      if (options.replaceAll === true || replace.has(`${key}@${source.version}`)) {
        ledger.forced.push({ module: key, version: source.version, previous_sha256: published, sha256, at, by });
        return 'replaced';
      }
      const tag = source.tag === source.version ? '' : ` (tag ${source.tag})`;
      return new MirrorError(
        'VERSION_CONFLICT',
        `${source.version}${tag} is published with other content, which stays as it was:\n  published: sha256 ${published}\n  the source: sha256 ${sha256}`,
        {
          hint: `A moved tag? Published versions are immutable: tag a new version. To replace it on purpose (recorded in the manifest): modmirror build --replace ${key}@${source.version}`,
        },
      );
    },
    entry(source) {
      const found = publishedSha.get(`${addressKey(source.address)}@${source.version}`);
      return found && { version: source.version, sha256: found[0], size: found[1] };
    },
  };
}

/** What the sources no longer have stays published, or goes on record with --prune: say which. */
export function warnAboutKept(published: Published, warnings: string[]): void {
  const list = (ids: string[]) => `${ids.slice(0, 10).join(', ')}${ids.length > 10 ? ', ...' : ''}`;
  const kept = [
    ...[...published.carried].flatMap(([key, versions]) => versions.map((v) => `${key}@${v.version}`)),
    ...Object.entries(published.carriedProviders).flatMap(([key, p]) => p.versions.map((v) => `${key}@${v.version}`)),
  ];
  // A provider version offered as published is carried too (quietly), and one refused for other bytes is reported as an error.
  const quiet = kept.filter((id) => !published.refused.has(id) && !published.held.has(id));
  if (quiet.length > 0)
    warnings.push(`keeping ${plural(quiet.length, 'published version')} the sources no longer have (build --prune removes them, on record): ${list(quiet)}`);
  const removed = published.ledger.removed.slice(-published.pruned).map((r) => `${r.module ?? r.provider}@${r.version}`);
  if (published.pruned > 0)
    warnings.push(`removing ${plural(published.pruned, 'version')} the sources no longer have, as --prune asked (recorded in the manifest): ${list(removed)}`);
}

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;

/** Module versions by module, then newest first. */
export const byVersion = (a: { module: string; version: string }, b: { module: string; version: string }) =>
  a.module === b.module ? compareVersionsDesc(a.version, b.version) : a.module < b.module ? -1 : 1;
