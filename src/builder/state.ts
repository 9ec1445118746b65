// What the last build of an output folder read, kept in the cache folder
// (not in the mirror, which stays a pure function of its sources). A build
// whose sources have the same fingerprint, over a mirror whose manifest is
// the one that build wrote, has nothing to do; it repeats what that build
// reported about its versions (partial documentation, links left out).

import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { MANIFEST_FILE } from '../protocol/paths.js';
import type { PartialVersion } from '../types.js';
import { writeFileAtomic } from '../atomic.js';

/** What a build said about its versions, beyond the scan's own warnings. */
export interface BuildReport {
  partial: PartialVersion[];
  warnings: string[];
}

interface BuildState extends Partial<BuildReport> {
  fingerprint: string;
  manifestSha256: string;
}

function stateFile(cacheDir: string, outDir: string): string {
  return join(cacheDir, 'builds', `${createHash('sha256').update(outDir).digest('hex').slice(0, 24)}.json`);
}

function manifestDigest(outDir: string): string | undefined {
  const file = join(outDir, MANIFEST_FILE);
  return existsSync(file) ? createHash('sha256').update(readFileSync(file)).digest('hex') : undefined;
}

/** The last build's report when the mirror is up to date with `fingerprint`, else undefined. */
export function upToDateReport(cacheDir: string, outDir: string, fingerprint: string): BuildReport | undefined {
  try {
    const state = JSON.parse(readFileSync(stateFile(cacheDir, outDir), 'utf8')) as BuildState;
    if (state.fingerprint !== fingerprint || state.manifestSha256 !== manifestDigest(outDir)) return undefined;
    return { partial: state.partial ?? [], warnings: state.warnings ?? [] };
  } catch {
    return undefined;
  }
}

export async function recordBuild(cacheDir: string, outDir: string, fingerprint: string | undefined, report: BuildReport): Promise<void> {
  const file = stateFile(cacheDir, outDir);
  const manifestSha256 = manifestDigest(outDir);
  await mkdir(join(cacheDir, 'builds'), { recursive: true });
  // No fingerprint (a build with failures) records nothing that could match.
  await writeFileAtomic(file, JSON.stringify(fingerprint && manifestSha256 ? { fingerprint, manifestSha256, ...report } : {}));
}
