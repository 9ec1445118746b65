// What each file of a mirror is as an object: its headers (the nginx block's,
// hosting/rules.ts) and its id, by which a writer knows the bucket already
// holds it. The ids of a mirror's objects are kept in the bucket (the object
// record), so a push compares with that rather than listing or reading back
// the bucket. The record is split as the truth is: each module's objects in
// a part named by its state's sha256, the rest in the root part named by the
// manifest's, so a write rewrites the parts of what it changes.

import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileHeaders } from '../hosting/rules.js';
import { moduleOfStateFile } from '../mirror/manifest.js';
import { MODULES_BASE, parseAddressKey, V2_MODULES_BASE } from '../protocol/paths.js';
import type { ObjectHeaders } from './store.js';

export interface ObjectOptions {
  /** Store the download location as `x-terraform-get` on each `download` object (Ceph RGW's extended attributes). */
  terraformGet?: boolean;
}

/** The headers an object is stored with: what nginx sends for the file, and with `terraformGet` the download header. */
export function objectHeaders(rel: string, body: Buffer, options: ObjectOptions): ObjectHeaders {
  const headers: ObjectHeaders = fileHeaders(rel);
  if (options.terraformGet && rel.startsWith('v1/modules/') && rel.endsWith('/download')) {
    const location = (JSON.parse(body.toString('utf8')) as { location?: unknown }).location;
    if (typeof location === 'string') headers['X-Terraform-Get'] = location;
  }
  return headers;
}

/** The object's content and headers in one: other headers for the same bytes make another object. */
export function objectId(body: Buffer, headers: ObjectHeaders): string {
  const sha = createHash('sha256').update(body).digest('hex');
  const meta = createHash('sha256').update(JSON.stringify(headers)).digest('hex').slice(0, 8);
  return `${sha}.${meta}`;
}

/** The object record of a manifest: the ids of the objects of the mirror that manifest describes. */
export interface ObjectRecord {
  format: 1;
  objects: Record<string, string>;
  /** How the objects were stored, which every later writer keeps to (push sets it). */
  options?: ObjectOptions;
  /** Objects left in the bucket that the mirror no longer has: what `push --prune` deletes. */
  stale?: string[];
}

export const RECORD_PREFIX = '.modmirror/';

/** The root part, named by the manifest's sha256, so the record read always belongs to the manifest read, whoever wrote either. */
export function recordFile(manifest: Buffer): string {
  return `${RECORD_PREFIX}objects-${sha256(manifest)}.json`;
}

/** A module's part, named by its state's sha256 as the root part is by the manifest's. */
export function moduleRecordFile(key: string, state: Buffer): string {
  const { namespace, name, provider } = parseAddressKey(key);
  return `${RECORD_PREFIX}objects/${namespace}/${name}.${provider}-${sha256(state)}.json`;
}

/**
 * Whose part records an object: a module's own (its state, documents, archives and counts), its
 * family's (the listing of a name's providers, which every provider of the name records), or the
 * root's (undefined: listings, the browse page, providers, discovery).
 */
export function ownerOfObject(rel: string): { module: string } | { family: string } | undefined {
  const state = moduleOfStateFile(rel);
  if (state !== undefined) return { module: state };
  for (const base of [MODULES_BASE, V2_MODULES_BASE]) {
    if (!rel.startsWith(base)) continue;
    const parts = rel.slice(base.length).split('/');
    if (parts.length >= 4) return { module: parts.slice(0, 3).join('/') };
    if (parts.length === 3 && base === MODULES_BASE) return { family: parts.slice(0, 2).join('/') };
  }
  return undefined;
}

const familyOf = (key: string) => key.slice(0, key.lastIndexOf('/'));

export interface SplitClaims {
  /** What the root part holds: the claims of no module, and of modules not among the parts written. */
  root: Record<string, string>;
  /** What the part of module `key` holds: its own objects' claims, and its family's. */
  part(key: string): Record<string, string>;
}

/** The claims of `objects` split into the parts of `modules` (each module's, and its family's) and the root part. */
export function splitClaims(objects: Record<string, string>, modules: Iterable<string>): SplitClaims {
  const inParts = new Set(modules);
  const families = new Set([...inParts].map(familyOf));
  const root: Record<string, string> = {};
  const owned = new Map<string, Record<string, string>>();
  for (const [rel, id] of Object.entries(objects)) {
    const owner = ownerOfObject(rel);
    // A family's claims are kept under its name with a trailing slash, apart from any module's.
    let partKey: string | undefined;
    if (owner !== undefined && 'module' in owner) partKey = inParts.has(owner.module) ? owner.module : undefined;
    else if (owner !== undefined) partKey = families.has(owner.family) ? `${owner.family}/` : undefined;
    if (partKey === undefined) root[rel] = id;
    else (owned.get(partKey) ?? owned.set(partKey, {}).get(partKey)!)[rel] = id;
  }
  return { root, part: (key) => ({ ...owned.get(key), ...owned.get(`${familyOf(key)}/`) }) };
}

/**
 * What the record claims, from the root part and the parts of modules (undefined where a module has
 * none, as in a record written before parts): a module's claims from its part where it has one, and
 * a family's only where every provider of the name that `parts` holds claims the same object (and
 * none with `families` false: a writer that reads one module's part knows nothing of its family's).
 */
export function joinClaims(
  root: Record<string, string>,
  parts: Map<string, Record<string, string> | undefined>,
  options: { families?: boolean } = {},
): Record<string, string> {
  const claims = { ...root };
  const families = new Map<string, (Record<string, string> | undefined)[]>();
  for (const [key, part] of parts) {
    const family = familyOf(key);
    families.set(family, [...(families.get(family) ?? []), part]);
    for (const [rel, id] of Object.entries(part ?? {})) {
      const owner = ownerOfObject(rel);
      if (owner !== undefined && 'module' in owner && owner.module === key) claims[rel] = id;
    }
  }
  if (options.families === false) return claims;
  for (const [family, members] of families) {
    if (members.some((part) => part === undefined)) continue;
    const [first, ...rest] = members as Record<string, string>[];
    for (const [rel, id] of Object.entries(first!)) {
      const owner = ownerOfObject(rel);
      if (owner === undefined || !('family' in owner) || owner.family !== family) continue;
      if (rest.every((part) => part[rel] === id)) claims[rel] = id;
      else delete claims[rel];
    }
  }
  return claims;
}

export function parseRecord(body: Buffer | undefined): ObjectRecord | undefined {
  if (!body) return undefined;
  try {
    const record = JSON.parse(body.toString('utf8')) as ObjectRecord;
    return record.format === 1 && typeof record.objects === 'object' && record.objects !== null ? record : undefined;
  } catch {
    // An unreadable record only means every object is uploaded again.
    return undefined;
  }
}

export function recordText(record: ObjectRecord): Buffer {
  const objects = Object.fromEntries(Object.entries(record.objects).sort(([a], [b]) => (a < b ? -1 : 1)));
  return Buffer.from(
    `${JSON.stringify({ format: 1, ...(record.options?.terraformGet ? { options: { terraformGet: true } } : {}), objects, ...(record.stale?.length ? { stale: [...record.stale].sort() } : {}) })}\n`,
  );
}

export const RECORD_HEADERS: ObjectHeaders = { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache' };

export function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Every file of the mirror in `root`, by its path in the tree. */
export function filesOf(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(root.length + 1))
    .sort();
}
