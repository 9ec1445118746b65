// What `modmirror sync` tells its user once an upstream is done: on stdout,
// what it added, what the mirror cannot answer and why, and what it could
// not find (each failure was also logged on stderr as it happened); or, with
// --json, one document a pipeline can read.

import { relative } from 'node:path';
import { LOCAL_CALL_FOLLOWED } from '../sync/closure.js';
import type { SyncResult } from '../sync/index.js';
import type { NotMirrored } from '../sync/types.js';
import { plural } from './args.js';

export interface UpstreamSummary {
  from: string;
  /** Absolute path of the module folder; absent when only providers were synced. */
  into?: string;
  /** Absolute path of the provider folder; absent when there is none. */
  providersInto?: string;
  result: SyncResult;
}

/** With `verbose`, every call not mirrored has a line; without, the calls to the callers' own folders are counted on one. */
export function printSummary({ from, into, providersInto, result }: UpstreamSummary, verbose = false): void {
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
  section('Not mirrored', verbose ? result.notMirrored.map((n) => notMirroredLine(n)) : notMirroredSummary(result.notMirrored));
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

function notMirroredLine(n: NotMirrored, callers = 1): string {
  const more = callers > 1 ? `, and ${plural(callers - 1, 'other caller')}` : '';
  return `${n.source}${n.version === '' ? '' : ` "${n.version}"`} (${n.calledFrom}${more}): ${n.message}`;
}

/**
 * A module's own folders (`./modules/vpc`) are called from every version of
 * it: hundreds of lines that ask nothing of the user. They are counted on one
 * line; every other call is listed once per source, constraint and reason.
 */
function notMirroredSummary(entries: NotMirrored[]): string[] {
  const followed = entries.filter((n) => n.message === LOCAL_CALL_FOLLOWED);
  const groups = new Map<string, { first: NotMirrored; callers: number }>();
  for (const n of entries) {
    if (n.message === LOCAL_CALL_FOLLOWED) continue;
    const key = JSON.stringify([n.source, n.version, n.message]);
    const group = groups.get(key);
    if (group) group.callers += 1;
    else groups.set(key, { first: n, callers: 1 });
  }
  const lines = [...groups.values()].map(({ first, callers }) => notMirroredLine(first, callers));
  if (followed.length > 0)
    lines.unshift(`${plural(followed.length, 'call')} to a local folder (./..., ../...): part of the caller, its calls are followed (--verbose lists them)`);
  return lines;
}

/** The --json document: `ok` is false when something wanted could not be found or fetched. */
export function summaryJson(summaries: UpstreamSummary[]): object {
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
