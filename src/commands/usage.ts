// `modmirror usage`: who downloaded which module version through a private
// registry (serve --access private records it in the data folder), from a
// day on, for one module or all, or only the deprecated versions still used.

import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { MirrorError } from '../errors.js';
import { MANIFEST_FILE } from '../protocol/paths.js';
import { filterProblem, usageReport, whoOf, type UsageEntry, type UsageFilter } from '../usage/report.js';
import { downloadsFromLog } from '../usage/nginx-log.js';
import { aggregate, readUsage } from '../usage/store.js';
import { resolveMirrorConfig } from '../config/index.js';
import { plural, printJson, usageError } from './args.js';
import { mirrorFlag } from './mirror-flag.js';
import type { UsageFlags } from './options/usage.js';

export function runUsage(values: UsageFlags): Promise<number> {
  const { since, module } = values;
  const filter: UsageFilter = {
    ...(since !== undefined ? { since } : {}),
    ...(module !== undefined ? { module } : {}),
    deprecated: values.deprecated === true,
  };
  const problem = filterProblem(filter);
  // `since must be ...` as `--since must be ...`: the flag as the user typed it.
  if (problem) throw usageError('usage', `Invalid --${problem}.`);
  const dir = resolveMirrorConfig({ out: mirrorFlag(values, 'usage', 'dir') }).outDir;
  if (filter.deprecated && !existsSync(join(dir, MANIFEST_FILE))) {
    throw new MirrorError('PATH_NOT_FOUND', `--deprecated reads the mirror's deprecations, and "${dir}" holds no built mirror.`, {
      hint: 'Pass --mirror with the mirror serve serves.',
    });
  }
  const fromLog = values['from-log'];
  if (fromLog !== undefined && !existsSync(fromLog)) {
    throw new MirrorError('PATH_NOT_FOUND', `The access log "${fromLog}" (--from-log) does not exist.`, {
      hint: 'Name the nginx access log of the host that serves the mirror (its access_log).',
    });
  }
  const rows = fromLog !== undefined ? rowsFromLog(fromLog) : readUsage(resolve(values.data ?? 'data'));
  const entries = usageReport(rows, filter, existsSync(dir) ? dir : undefined);
  if (values.json === true) printJson({ filter, usage: entries });
  else console.log(usageText(entries, filter));
  return Promise.resolve(0);
}

/** A static host's downloads, by network; a line that is not nginx's combined format is counted and said. */
function rowsFromLog(file: string) {
  const { events, unreadable } = downloadsFromLog(resolve(file));
  if (unreadable > 0) console.error(`warning: ${plural(unreadable, 'line')} of ${file} not in nginx's combined format, skipped`);
  return aggregate(events);
}

/** Per module version, each caller with its downloads and the days of its first and last. */
function usageText(entries: UsageEntry[], filter: UsageFilter): string {
  const since = filter.since !== undefined ? ` since ${filter.since}` : '';
  if (entries.length === 0) return `No ${filter.deprecated ? 'deprecated version ' : ''}downloads recorded${since}.`;
  const lines: string[] = [];
  let last = '';
  for (const e of entries) {
    const head = `${e.module} ${e.version}`;
    if (head !== last) {
      lines.push(`${head}${e.deprecation ? `  (deprecated: ${e.deprecation.reason})` : ''}`);
      last = head;
    }
    const days = e.firstDay === e.lastDay ? e.firstDay : `${e.firstDay} to ${e.lastDay}`;
    lines.push(`  ${whoOf(e).padEnd(40)} ${plural(e.downloads, 'download').padStart(14)}  ${days}`);
  }
  return lines.join('\n');
}
