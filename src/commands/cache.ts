// `modmirror cache list`: what a mirror that fills itself (serve --upstream)
// holds, each module version and provider package with when it was fetched
// from the upstream, when it was last downloaded, and its sha256; the mirror
// is the truth, the data folder says the rest.

import { join, resolve } from 'node:path';
import { resolveMirrorConfig } from '../config/index.js';
import { MirrorError } from '../errors.js';
import { readManifest } from '../mirror/manifest.js';
import { holdingsOf, type HeldModule, type HeldProvider } from '../upstream/holdings.js';
import { readFills, readLastUse, UPSTREAM_RECORD_FILE } from '../upstream/record.js';
import { plural, printJson, usageError } from './args.js';
import { requireMirror } from './mirror-flag.js';
import type { CacheFlags } from './options/cache.js';

export async function runCache(values: CacheFlags, positionals: string[]): Promise<number> {
  if (positionals[0] !== 'list') throw usageError('cache', `Unknown cache command "${positionals[0] ?? ''}": expected "modmirror cache list".`);
  const dir = resolveMirrorConfig({ out: values.mirror }).outDir;
  await requireMirror(dir, 'cache');
  const manifest = readManifest(dir);
  if (!manifest)
    throw new MirrorError('OUTPUT_FAILED', `${dir} is not a built mirror (no manifest.json).`, { hint: 'Pass --mirror with the mirror serve serves.' });
  const data = resolve(values.data ?? 'data');
  const holdings = holdingsOf(manifest, readFills(join(data, UPSTREAM_RECORD_FILE)), readLastUse(data));
  if (values.json === true) {
    printJson({ mirror: dir, data, ...holdings });
    return 0;
  }
  const rows = [
    ...holdings.modules.map((m) => row(`${m.module} ${m.version}`, m)),
    ...holdings.providers.map((p) => row(`${p.provider} ${p.version} ${p.platform}`, p)),
  ];
  if (rows.length === 0) {
    console.log(`${dir} holds no module version or provider package yet.`);
    return 0;
  }
  const table = [['HELD', 'FETCHED', 'LAST USED', 'SHA256'], ...rows];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
  for (const r of table) console.log(r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  '));
  const fetched = [...holdings.modules, ...holdings.providers].filter((h) => h.fetched !== null).length;
  console.log(
    `${plural(holdings.modules.length, 'module version')}, ${plural(holdings.providers.length, 'provider package')}; ${fetched} fetched from the upstream.`,
  );
  return 0;
}

/** A held version's line: "-" for a version the mirror got another way, or never downloaded since. */
function row(what: string, held: HeldModule | HeldProvider): string[] {
  return [what, held.fetched ?? '- (not from the upstream)', held.last_used ?? '-', held.sha256];
}
