import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * modmirror's own folder: the nearest one above this file holding
 * package.json. The same code runs from src/ (tests), lib/ (compiled) and
 * lib/cli-bundle/ (the CLI), so files of the package are found from here, never
 * by a fixed number of `../`.
 */
export const PACKAGE_ROOT: string = findPackageRoot(dirname(fileURLToPath(import.meta.url)));

function findPackageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`modmirror's package.json was not found above ${from}`);
  }
}

/** modmirror's own version, from package.json. */
export const VERSION: string = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** Recorded in the manifest, so a mirror says what made it. */
export const GENERATOR = `modmirror ${VERSION}`;
