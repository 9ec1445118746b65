// What a `bundle --since` leaves out besides the archives the base has. The
// sender knows only the receiver's manifest.json, so it decides only for the
// files of versions that manifest lists with the same archive: their detail
// documents are derived (the receiver rebuilds each from its own copy with
// the keys the bundle carries). Every other file is carried; unbundle checks
// all of it before writing.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Manifest } from '../mirror/manifest.js';
import { DETAIL_CONTENT_KEYS } from '../protocol/documents.js';
import { latestDetailFile, versionDetailFile } from '../protocol/paths.js';
import type { ModuleAddress } from '../types.js';
import { latestVersion } from '../version-order.js';
import { derivedText } from './derive.js';
import type { DerivedFile } from './format.js';

export interface SinceSplit {
  derived: DerivedFile[];
  shared: Record<string, Record<string, unknown>>;
}

const CONTENT_KEYS = new Set<string>(DETAIL_CONTENT_KEYS);

/**
 * Derived files of the mirror in `dir` for a receiver at `base`. Nothing
 * but archives is left out when another modmirror version wrote the base:
 * its documents may differ in ways no key replaces.
 */
export function splitSince(dir: string, files: Set<string>, manifest: Manifest, base: Manifest): SinceSplit {
  const split: SinceSplit = { derived: [], shared: {} };
  if (base.generator !== manifest.generator) return split;
  for (const [key, { versions }] of Object.entries(manifest.modules)) {
    const baseSha = new Map((base.modules[key]?.versions ?? []).map((v) => [v.version, v.sha256]));
    const old = versions.filter((v) => baseSha.get(v.version) === v.sha256).map((v) => v.version);
    if (old.length === 0) continue;
    const address = addressOf(key);
    const details = old.map((version) => versionDetailFile(address, version));
    // The module's own detail is its latest version's: the base had that version too when it is old.
    const latest = latestVersion(versions.map((v) => v.version));
    if (latest !== undefined && old.includes(latest)) details.push(latestDetailFile(address));
    deriveModule(
      dir,
      key,
      details.filter((path) => files.has(path)),
      split,
    );
  }
  return split;
}

/**
 * One module's details: values equal in all of them are carried once
 * (`shared`), each detail's other values but its content keys with it, and
 * a detail is derived only if that rebuilds this very file from itself.
 */
function deriveModule(dir: string, module: string, paths: string[], split: SinceSplit): void {
  // Two passes over the files, holding only small values: a module of thousands of versions
  // has thousands of `versions` lists, so a value is held per file only where it differs from the first file's.
  const first = new Map<string, string>();
  const notShared = new Set<string>();
  const plans: { path: string; keys: string[]; differing: Record<string, unknown> }[] = [];
  for (const path of paths) {
    const document = readObject(join(dir, path));
    if (!document) continue;
    const keys = Object.keys(document);
    if (!DETAIL_CONTENT_KEYS.every((k) => keys.includes(k))) continue;
    const differing: Record<string, unknown> = {};
    for (const key of keys) {
      if (CONTENT_KEYS.has(key)) continue;
      const text = JSON.stringify(document[key]);
      if (plans.length === 0) first.set(key, text);
      else if (first.get(key) !== text) {
        notShared.add(key);
        differing[key] = document[key];
      }
    }
    for (const key of first.keys()) if (!keys.includes(key)) notShared.add(key);
    plans.push({ path, keys, differing });
  }
  if (plans.length === 0) return;
  const shared: Record<string, unknown> = {};
  for (const [key, text] of first) if (!notShared.has(key)) shared[key] = JSON.parse(text);
  const firstValues = (key: string) => JSON.parse(first.get(key)!) as unknown;
  let derivedAny = false;
  for (const { path, keys, differing } of plans) {
    const values: Record<string, unknown> = {};
    for (const key of keys) {
      if (CONTENT_KEYS.has(key) || Object.hasOwn(shared, key)) continue;
      values[key] = Object.hasOwn(differing, key) ? differing[key] : firstValues(key);
    }
    const bytes = readFileSync(join(dir, path));
    const own = bytes.toString('utf8');
    // A file emit did not write this way (or whose keys a reader reorders) is carried instead.
    if (derivedText(own, { keys, values }, shared) !== own) continue;
    // Described from the bytes just read, so the file is not read a third time to list it.
    split.derived.push({ path, sha256: createHash('sha256').update(bytes).digest('hex'), size: bytes.length, module, keys, values });
    derivedAny = true;
  }
  if (derivedAny) split.shared[module] = shared;
}

function readObject(file: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function addressOf(key: string): ModuleAddress {
  const [namespace = '', name = '', provider = ''] = key.split('/');
  return { namespace, name, provider };
}
