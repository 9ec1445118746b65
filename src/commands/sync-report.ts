// What `modmirror sync` tells its user once an upstream is done: on stdout,
// what it added, what the mirror cannot answer and why, and what it could
// not find (each failure was also logged on stderr as it happened); or, with
// --json, one document a pipeline can read.

import { relative } from 'node:path';
import type { SyncResult } from '../sync/index.js';

export interface UpstreamSummary {
  from: string;
  /** Absolute path of the module folder; absent when only providers were synced. */
  into?: string;
  /** Absolute path of the provider folder; absent when there is none. */
  providersInto?: string;
  result: SyncResult;
}

export function printSummary({ from, into, providersInto, result }: UpstreamSummary): void {
  const shown = (dir: string) => relative(process.cwd(), dir) || '.';
  const packages = result.providerVersions.reduce((n, v) => n + v.fetched.length, 0);
  const next = result.fetched.length + packages > 0 ? ' Run modmirror build to serve them.' : '';
  const origin = new URL(from).origin;
  const lines: string[] = [];
  if (into !== undefined)
    lines.push(`Fetched ${result.fetched.length} version(s) into ${shown(into)}/ (${result.present.length} already there) from ${origin}.`);
  if (providersInto !== undefined && (into === undefined || result.providerVersions.length > 0 || result.providers.length > 0)) {
    const present = result.providerVersions.reduce((n, v) => n + v.present.length, 0);
    lines.push(`Fetched ${packages} provider package(s) into ${shown(providersInto)}/ (${present} already there) from ${origin}.`);
  }
  if (next !== '') lines[lines.length - 1] += next;
  const section = (title: string, items: string[]) => {
    if (items.length > 0) lines.push(`${title}:`, ...items.map((item) => `  ${item}`));
  };
  const via = (calledFrom: string | undefined) => (calledFrom === undefined ? '' : `  (called from ${calledFrom})`);
  section(
    'Added',
    result.fetched.map((f) => `${f.module} ${f.version}${via(f.calledFrom)}`),
  );
  section(
    'Not mirrored',
    result.notMirrored.map((n) => `${n.source}${n.version === '' ? '' : ` "${n.version}"`} (${n.calledFrom}): ${n.message}`),
  );
  section(
    'Cycles (each version is mirrored once)',
    result.cycles.map((c) => c.join(' -> ')),
  );
  section(
    'Added providers',
    result.providerVersions.filter((v) => v.fetched.length > 0).map((v) => `${v.provider} ${v.version} ${v.fetched.join(', ')}${via(v.calledFrom)}`),
  );
  section(
    'No provider package for a platform (the upstream answered 404)',
    result.providerUnavailable.map((u) => `${u.provider} ${u.version} ${u.platform}`),
  );
  section(
    'Could not find, fetch or verify',
    result.failures.map((f) => f.message),
  );
  if (providersInto === undefined) {
    section(
      'Providers required (not mirrored: no provider folder; add "providers: - folder: DIR" to the config or pass --providers-into DIR)',
      result.providers.map((p) => `${p.source || p.name}${p.version === '' ? '' : ` "${p.version}"`} (${p.calledFrom})`),
    );
  }
  console.log(lines.join('\n'));
}

/** The --json document: `ok` is false when something wanted could not be found or fetched. */
export function summaryJson(summaries: UpstreamSummary[]): unknown {
  return {
    ok: summaries.every((s) => s.result.failures.length === 0),
    upstreams: summaries.map(({ from, into, providersInto, result }) => ({
      from,
      ...(into === undefined ? {} : { into }),
      ...(providersInto === undefined ? {} : { providersInto }),
      ...result,
    })),
  };
}
