// What the last build of an output folder read, kept in the cache folder
// (not in the mirror, which stays a pure function of its sources). A build
// whose sources have the same fingerprint, over a mirror whose manifest is
// the one that build wrote, has nothing to do.

import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MANIFEST_FILE } from './protocol/paths.js';

interface BuildState {
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

export function isUpToDate(cacheDir: string, outDir: string, fingerprint: string): boolean {
  try {
    const state = JSON.parse(readFileSync(stateFile(cacheDir, outDir), 'utf8')) as BuildState;
    return state.fingerprint === fingerprint && state.manifestSha256 === manifestDigest(outDir);
  } catch {
    return false;
  }
}

export async function recordBuild(cacheDir: string, outDir: string, fingerprint: string | undefined): Promise<void> {
  const file = stateFile(cacheDir, outDir);
  const manifestSha256 = manifestDigest(outDir);
  await mkdir(join(cacheDir, 'builds'), { recursive: true });
  // No fingerprint (a build with failures) records nothing that could match.
  await writeFile(file, JSON.stringify(fingerprint && manifestSha256 ? { fingerprint, manifestSha256 } : {}));
}
