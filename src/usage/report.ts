// The usage report: who downloaded which module version, from a day on, for
// one module or all; with `deprecated`, only the versions the mirror marks
// deprecated, the ones a site wants to know are still used before removing
// them. One function for `modmirror usage` and the management API.

import { MirrorError } from '../errors.js';
import { readDeprecations, type Deprecation } from '../mirror/deprecations.js';
import { readManifest } from '../mirror/manifest.js';
import { compareVersionsDesc } from '../version-order.js';
import type { UsageEvent, UsageRow } from './store.js';

export interface UsageFilter {
  /** YYYY-MM-DD: this day and later. */
  since?: string;
  /** NAMESPACE/NAME/PROVIDER */
  module?: string;
  deprecated?: boolean;
}

/** A caller's downloads of one version over the days reported. */
export interface UsageEntry extends Omit<UsageEvent, 'day'> {
  downloads: number;
  firstDay: string;
  lastDay: string;
  deprecation?: Deprecation;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const MODULE = /^[^/\s]+\/[^/\s]+\/[^/\s]+$/;

/** The filter's problem, in words a flag or a query parameter can be named in, or undefined. */
export function filterProblem(filter: UsageFilter): string | undefined {
  if (filter.since !== undefined && (!DAY.test(filter.since) || Number.isNaN(Date.parse(filter.since)))) {
    return `since must be a day as YYYY-MM-DD, got "${filter.since}"`;
  }
  if (filter.module !== undefined && !MODULE.test(filter.module)) return `module must be NAMESPACE/NAME/PROVIDER, got "${filter.module}"`;
  return undefined;
}

/** Rows summed per module version and caller, newest version first; deprecations from the mirror at `mirrorDir`. */
export function usageReport(rows: UsageRow[], filter: UsageFilter, mirrorDir: string | undefined): UsageEntry[] {
  const problem = filterProblem(filter);
  if (problem) throw new MirrorError('BAD_REQUEST', `Invalid usage filter: ${problem}.`);
  const deprecations = deprecationsAt(mirrorDir);
  const entries = new Map<string, UsageEntry>();
  for (const row of rows) {
    if (filter.since !== undefined && row.day < filter.since) continue;
    if (filter.module !== undefined && row.module !== filter.module) continue;
    const deprecation = deprecations[row.module]?.[row.version];
    if (filter.deprecated && !deprecation) continue;
    const key = JSON.stringify([row.module, row.version, row.organization, row.team, row.user, row.network]);
    const entry = entries.get(key);
    if (entry) {
      entry.downloads += row.count;
      if (row.day < entry.firstDay) entry.firstDay = row.day;
      if (row.day > entry.lastDay) entry.lastDay = row.day;
      continue;
    }
    entries.set(key, {
      module: row.module,
      version: row.version,
      ...(row.organization !== undefined ? { organization: row.organization } : {}),
      ...(row.team !== undefined ? { team: row.team } : {}),
      ...(row.user !== undefined ? { user: row.user } : {}),
      ...(row.network !== undefined ? { network: row.network } : {}),
      downloads: row.count,
      firstDay: row.day,
      lastDay: row.day,
      ...(deprecation ? { deprecation } : {}),
    });
  }
  return [...entries.values()].sort((a, b) => cmp(a.module, b.module) || compareVersionsDesc(a.version, b.version) || cmp(whoOf(a), whoOf(b)));
}

function deprecationsAt(mirrorDir: string | undefined) {
  if (mirrorDir === undefined) return {};
  return readDeprecations(mirrorDir, readManifest(mirrorDir));
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Who, in words: `organization acme, team platform`, `user alice`, `network 192.0.2.0/24`, or `unknown` (a download recorded with no caller). */
export function whoOf(entry: Pick<UsageEntry, 'organization' | 'team' | 'user' | 'network'>): string {
  if (entry.organization !== undefined) return `organization ${entry.organization}${entry.team !== undefined ? `, team ${entry.team}` : ''}`;
  if (entry.network !== undefined) return `network ${entry.network}`;
  return entry.user !== undefined ? `user ${entry.user}` : 'unknown';
}
