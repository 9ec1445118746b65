import { readFileSync } from 'node:fs';

/** modmirror's own version, from package.json (one level above src/ and lib/). */
export const VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** Recorded in the manifest, so a mirror says what made it. */
export const GENERATOR = `modmirror ${VERSION}`;
