// The order in which a change reaches readers, one file at a time: on a
// bucket (each object uploaded) and in a folder (each file renamed into the
// live mirror). Archives and provider packages, then documents, then what
// lists versions (versions files, listings, indexes), then the truth (each
// module's state, the manifest's root last): a reader never meets a version
// whose archive or documents are not there yet.

import { isTruthFile } from './manifest.js';
import { DISCOVERY_FILE, MANIFEST_FILE, SEARCH_INDEX_FILE, VERSIONS_INDEX_FILE } from '../protocol/paths.js';

export const PHASES = ['archives', 'documents', 'indexes', 'manifest'] as const;
export type Phase = (typeof PHASES)[number];

const INDEX_NAMES = new Set(['versions', 'index.json', 'index.html', '_headers']);
const TOP_INDEXES = new Set([DISCOVERY_FILE, SEARCH_INDEX_FILE, VERSIONS_INDEX_FILE]);

export function phaseOf(rel: string): Phase {
  if (isTruthFile(rel)) return 'manifest';
  if (/(\.tar\.gz|\.zip|_SHA256SUMS|_SHA256SUMS\.sig)$/.test(rel)) return 'archives';
  // A version's own detail is a document; other index.json files list what is below them.
  if (/^v1\/modules\/[^/]+\/[^/]+\/[^/]+\/[^/]+\/index\.json$/.test(rel)) return 'documents';
  const name = rel.slice(rel.lastIndexOf('/') + 1);
  // Top-level files (providers-index.json, the browse page's index) say what the tree holds.
  return INDEX_NAMES.has(name) || TOP_INDEXES.has(rel) || !rel.includes('/') ? 'indexes' : 'documents';
}

/** `rels` in write order, stable within a phase. */
export function inWriteOrder(rels: Iterable<string>): string[] {
  const list = [...rels];
  const ordered = PHASES.flatMap((phase) => list.filter((rel) => phaseOf(rel) === phase));
  // The root last: it is what a reader (and a running server) takes as the mirror having changed.
  return [...ordered.filter((rel) => rel !== MANIFEST_FILE), ...ordered.filter((rel) => rel === MANIFEST_FILE)];
}
