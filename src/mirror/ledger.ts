// A registry's first promise: a published version stays what it was. Every
// write ends by holding the new manifest against the live one (transaction.ts):
// a version whose bytes changed, or that is gone, must be a change this write
// was allowed to make and recorded in the new manifest's ledger (`forced`,
// `removed`); the ledger itself only grows. Anything else refuses the write.

import { hostname, userInfo } from 'node:os';
import { MirrorError } from '../errors.js';
import { ledgerOwner, type ForcedReplacement, type Ledger, type Manifest, type Removal } from './manifest.js';

/** The changes to published versions a write may make; each must also be recorded in the new manifest. */
export interface LedgerPermissions {
  /** Different bytes under a published module version (`publish --force`, `build --replace`). Provider packages never. */
  replace?: boolean;
  /** Removal of a published version (`build --prune`). */
  remove?: boolean;
}

interface Published {
  /** How the refusal names it: `ns/name/provider 1.2.3` or `host/ns/type 1.2.3 linux_amd64`. */
  what: string;
  kind: 'module' | 'provider';
  key: string;
  version: string;
  /** A provider package's os_arch. */
  platform?: string;
  sha256: string;
}

/** Every published byte stream of a manifest, by `m:KEY@VERSION` or `p:KEY@VERSION:PLATFORM`. */
function publishedOf(manifest: Manifest | undefined): Map<string, Published> {
  const out = new Map<string, Published>();
  if (!manifest) return out;
  for (const [key, { versions }] of Object.entries(manifest.modules)) {
    for (const v of versions) out.set(`m:${key}@${v.version}`, { what: `${key} ${v.version}`, kind: 'module', key, version: v.version, sha256: v.sha256 });
  }
  for (const [key, { versions }] of Object.entries(manifest.providers ?? {})) {
    for (const v of versions) {
      for (const a of v.archives)
        out.set(`p:${key}@${v.version}:${a.platform}`, {
          what: `${key} ${v.version} ${a.platform}`,
          kind: 'provider',
          key,
          version: v.version,
          platform: a.platform,
          sha256: a.sha256,
        });
    }
  }
  return out;
}

/** What removed versions had: a version that comes back must come back with these bytes, or be replaced on purpose. */
function removedOf(ledger: Ledger | undefined): Map<string, Published> {
  const out = new Map<string, Published>();
  for (const r of ledger?.removed ?? []) {
    if (r.module !== undefined && r.sha256 !== undefined)
      out.set(`m:${r.module}@${r.version}`, { what: `${r.module} ${r.version}`, kind: 'module', key: r.module, version: r.version, sha256: r.sha256 });
    for (const [platform, sha256] of Object.entries(r.archives ?? {})) {
      out.set(`p:${r.provider}@${r.version}:${platform}`, {
        what: `${r.provider} ${r.version} ${platform}`,
        kind: 'provider',
        key: r.provider!,
        version: r.version,
        platform,
        sha256,
      });
    }
  }
  return out;
}

/**
 * The lines that refuse `after` as the successor of `before`: one per
 * published version changed or removed without permission and record, and
 * one if the ledger lost a record. Empty when the write keeps the promise.
 */
export function ledgerViolations(before: Manifest | undefined, after: Manifest, allow: LedgerPermissions = {}): string[] {
  const lines: string[] = [];
  // Each module's records, and the providers', only ever grow at their end (a module's are kept in its state).
  const grown = <T extends ForcedReplacement | Removal>(list: T[] | undefined, earlier: T[] | undefined): T[] | undefined => {
    const afterBy = byOwner(list);
    const added: T[] = [];
    for (const [owner, kept] of byOwner(earlier)) {
      const now = afterBy.get(owner) ?? [];
      if (JSON.stringify(now.slice(0, kept.length)) !== JSON.stringify(kept)) return undefined;
    }
    for (const [owner, now] of afterBy) added.push(...now.slice(byOwner(earlier).get(owner)?.length ?? 0));
    return added;
  };
  const newForced = grown(after.forced, before?.forced);
  const newRemoved = grown(after.removed, before?.removed);
  if (!newForced || !newRemoved) lines.push('  the ledger (the "forced" and "removed" records) lost records');
  const now = publishedOf(after);
  const replacedOnPurpose = (p: Published, sha256: string) =>
    allow.replace === true &&
    p.kind === 'module' &&
    (newForced ?? []).some((f) => f.module === p.key && f.version === p.version && f.previous_sha256 === p.sha256 && f.sha256 === sha256);
  const removedOnPurpose = (p: Published) =>
    allow.remove === true &&
    (newRemoved ?? []).some(
      (r) =>
        (p.kind === 'module' ? r.module === p.key && r.sha256 === p.sha256 : r.provider === p.key && r.archives?.[p.platform!] === p.sha256) &&
        r.version === p.version,
    );
  for (const [id, p] of publishedOf(before)) {
    const sha256 = now.get(id)?.sha256;
    if (sha256 === undefined) {
      if (!removedOnPurpose(p)) lines.push(`  ${p.what}: published with sha256 ${p.sha256}, and this write removes it`);
    } else if (sha256 !== p.sha256 && !replacedOnPurpose(p, sha256)) {
      lines.push(`  ${p.what}: published sha256 ${p.sha256}, this write ${sha256}`);
    }
  }
  for (const [id, p] of removedOf(before)) {
    const sha256 = now.get(id)?.sha256;
    if (sha256 !== undefined && sha256 !== p.sha256 && !replacedOnPurpose(p, sha256))
      lines.push(`  ${p.what}: removed with sha256 ${p.sha256}, and this write brings it back as ${sha256}`);
  }
  return lines;
}

/** Ledger records by whose they are: a module's key, or '' for the providers'. */
function byOwner<T extends ForcedReplacement | Removal>(records: T[] | undefined): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const record of records ?? []) {
    const owner = ledgerOwner(record) ?? '';
    const list = out.get(owner);
    if (list) list.push(record);
    else out.set(owner, [record]);
  }
  return out;
}

/** The refusal of a write that would break the promise; nothing was changed. */
export function ledgerRefusal(lines: string[]): MirrorError {
  return new MirrorError(
    'VERSION_CONFLICT',
    `Published versions are immutable, and this write would change them; the mirror is left as it was:\n${lines.join('\n')}`,
    {
      hint:
        'Publish a new version number. To replace a module version on purpose: modmirror publish --force, or modmirror build --replace NS/NAME/PROVIDER@VERSION; ' +
        'to remove what the sources no longer have: modmirror build --prune. Each is recorded in the manifest.',
    },
  );
}

/** The ledger a write starts from: the live manifest's records, copied so the write can add to them. */
export function ledgerOf(manifest: Manifest | undefined): Required<Ledger> {
  return { forced: [...(manifest?.forced ?? [])], removed: [...(manifest?.removed ?? [])] };
}

/** Who a CLI write's record names. */
export function requester(): string {
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry (a container's arbitrary uid): the host still says where it came from.
  }
  return `${user}@${hostname()}`;
}

/** The removal record of a module version. */
export function moduleRemoval(module: string, version: string, sha256: string, at: string, by: string): Removal {
  return { module, version, sha256, at, by };
}
