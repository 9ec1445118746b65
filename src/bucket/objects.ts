// What each file of a mirror is as an object: its headers (the nginx block's,
// hosting/rules.ts) and its id, by which a
// writer knows the bucket already holds it. The ids of a mirror's objects
// are kept in the bucket beside its manifest (the object record), so a push
// compares with that rather than listing or reading back the bucket.

import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileHeaders } from '../hosting/rules.js';
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

/** Named by the manifest's sha256, so the record read always belongs to the manifest read, whoever wrote either. */
export function recordFile(manifest: Buffer): string {
  return `.modmirror/objects-${createHash('sha256').update(manifest).digest('hex')}.json`;
}

export const RECORD_PREFIX = '.modmirror/';

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
