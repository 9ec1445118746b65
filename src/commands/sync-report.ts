// What `modmirror sync` tells its user once an upstream is done: on stdout,
// what it added, what the mirror cannot answer and why, and what it could
// not find (each failure was also logged on stderr as it happened); or, with
// --json, one document a pipeline can read.

import { relative } from 'node:path';
import type { SyncResult } from '../sync/index.js';

export interface UpstreamSummary {
  from: string;
  /** Absolute path of the module folder. */
  into: string;
  result: SyncResult;
}

export function printSummary({ from, into, result }: UpstreamSummary): void {
  const shown = relative(process.cwd(), into) || '.';
  const next = result.fetched.length > 0 ? ' Run modmirror build to serve them.' : '';
  const lines = [`Fetched ${result.fetched.length} version(s) into ${shown}/ (${result.present.length} already there) from ${new URL(from).origin}.${next}`];
  const section = (title: string, items: string[]) => {
    if (items.length > 0) lines.push(`${title}:`, ...items.map((item) => `  ${item}`));
  };
  const via = (calledFrom: string | undefined) => (calledFrom === undefined ? '' : `  (called from ${calledFrom})`);
  section('Added', result.fetched.map((f) => `${f.module} ${f.version}${via(f.calledFrom)}`));
  section('Not mirrored', result.notMirrored.map((n) => `${n.source}${n.version === '' ? '' : ` "${n.version}"`} (${n.calledFrom}): ${n.message}`));
  section('Cycles (each version is mirrored once)', result.cycles.map((c) => c.join(' -> ')));
  section('Could not find or fetch', result.failures.map((f) => f.message));
  section(
    'Providers required (not mirrored yet: modmirror carries modules only)',
    result.providers.map((p) => `${p.source || p.name}${p.version === '' ? '' : ` "${p.version}"`} (${p.calledFrom})`),
  );
  console.log(lines.join('\n'));
}

/** The --json document: `ok` is false when something wanted could not be found or fetched. */
export function summaryJson(summaries: UpstreamSummary[]): unknown {
  return {
    ok: summaries.every((s) => s.result.failures.length === 0),
    upstreams: summaries.map(({ from, into, result }) => ({ from, into, ...result })),
  };
}
