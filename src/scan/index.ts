// Scan stage: config sources -> every module version to build, with its
// metadata, sorted by address then version (newest first).

import { resolve } from 'node:path';
import { compareVersionsDesc } from '../version-order.js';
import { moduleMeta, type ResolvedConfig } from '../config/index.js';
import { MirrorError } from '../errors.js';
import { addressKey } from '../protocol/paths.js';
import type { ModuleAddress, VersionSource } from '../types.js';
import { scanFolder } from './folder.js';
import { scanGit } from './git.js';

export interface ScanResult {
  versions: VersionSource[];
  warnings: string[];
}

export async function scan(config: ResolvedConfig): Promise<ScanResult> {
  const warnings: string[] = [];
  const warn = (message: string) => warnings.push(message);
  const found: VersionSource[][] = await Promise.all(
    config.sources.map((source) =>
      source.kind === 'folder'
        ? scanFolder(source, (address) => moduleMeta(config, address), warn)
        : scanGit(source, moduleMeta(config, source.address, source.meta), config.cacheDir, warn),
    ),
  );
  return { versions: dedupe(found.flat(), warn), warnings };
}

/**
 * One entry per module version. Two tags of one repository naming the same
 * version (`v1.0.0` and `1.0.0`) keep the first in tag order with a warning;
 * two sources giving the same module address is a configuration mistake.
 * Sorted first (the sort is stable, so the first given stays first), then
 * each version is compared with the one before it: a drop of 400,000
 * versions is held once, with no second table of them.
 */
function dedupe(versions: VersionSource[], warn: (message: string) => void): VersionSource[] {
  const originOf = new Map<string, string>();
  for (const v of versions) {
    const module = addressKey(v.address);
    const origin = v.origin.kind === 'folder' ? resolve(v.origin.dir, '../../../..') : v.origin.gitDir;
    const firstOrigin = originOf.get(module);
    if (firstOrigin !== undefined && firstOrigin !== origin) {
      throw new MirrorError('CONFIG_INVALID', `Duplicate module address ${module}: it comes from two sources (${firstOrigin} and ${origin}).`, {
        hint: 'Give each source its own namespace/name/provider, or remove one of them.',
      });
    }
    if (firstOrigin === undefined) originOf.set(module, origin);
  }
  versions.sort(compareVersionSources);
  let kept = 0;
  for (const v of versions) {
    const before = kept > 0 ? versions[kept - 1]! : undefined;
    if (before && compareVersionSources(before, v) === 0) {
      warn(`${v.label}: skipping: version ${v.version} of ${addressKey(v.address)} is already given by ${before.label}`);
      continue;
    }
    versions[kept++] = v;
  }
  versions.length = kept;
  return versions;
}

/** By address, then newest first. A scan shares one address object among a module's versions, so its key is made once, not per comparison. */
export function compareVersionSources(a: VersionSource, b: VersionSource): number {
  const ka = keyOf(a.address);
  const kb = keyOf(b.address);
  if (ka !== kb) return ka < kb ? -1 : 1;
  return compareVersionsDesc(a.version, b.version);
}

const keys = new WeakMap<ModuleAddress, string>();
function keyOf(address: ModuleAddress): string {
  let key = keys.get(address);
  if (key === undefined) keys.set(address, (key = addressKey(address)));
  return key;
}
