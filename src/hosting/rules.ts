// What the host configuration files (the nginx block, the Caddyfile, the
// `_headers` file) share beyond the protocol's own HTTP rules
// (protocol/headers.ts): the options they are written for, what only
// `modmirror serve` can answer, and how values are written into them safely.

import { MirrorError } from '../errors.js';
import { ARCHIVE_TYPE, CACHE_LONG, CACHE_SHORT, JSON_TYPE, PROVIDER_ZIP_TYPE, RELEASE_SIGNATURE_TYPE, RELEASE_SUMS_TYPE } from '../protocol/headers.js';
import { archiveLocation, PROVENANCE_SUFFIX } from '../protocol/paths.js';

/** Listing paths (`/v1/modules/`, `/<ns>`, `/<ns>/<name>`): only their first, unfiltered page is a file. */
export const LISTING_PATH = '^/v1/modules/(?:[^/]+/?){0,2}$';

/** Answers for what a static tree cannot hold: the JSON error bodies a plain host sends instead (spec 7.2). */
export const NEEDS_SERVE = {
  search: 'search needs modmirror serve; this static mirror holds search-index.json and the first page of every listing',
  laterPage: 'only the first page of each listing is a static file; later pages (offset > 0) and filters (provider, namespace, verified) need modmirror serve',
  notFound: 'Not found',
};

export interface HostingOptions {
  /** Absolute path of the built mirror. */
  dir: string;
  listen: Listen;
  /** '' for relative download locations, else the absolute URL the mirror is served at (ends in `/`). */
  baseUrl: string;
}

export interface Listen {
  /** Undefined: every address. */
  host?: string;
  port: number;
}

/** The download location for a version named by host variables, built by the same function as the `download` files. */
export function locationTemplate(baseUrl: string, vars: { namespace: string; name: string; provider: string; version: string }): string {
  return archiveLocation({ namespace: vars.namespace, name: vars.name, provider: vars.provider }, vars.version, baseUrl);
}

/** `8080`, `127.0.0.1:8080` or `[::1]:8080`. */
export function parseListen(text: string): Listen {
  const match = /^(?:(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):)?(\d{1,5})$/.exec(text);
  const port = Number(match?.[2]);
  if (!match || port < 1 || port > 65535) {
    throw new MirrorError('USAGE', `Invalid --listen "${text}": expected PORT or ADDRESS:PORT, e.g. 8080 or 127.0.0.1:8080.`);
  }
  return match[1] === undefined ? { port } : { host: match[1], port };
}

/**
 * A literal path inside a host's regular expression. Character classes
 * rather than backslashes, which a Caddy expression's string would read as
 * its own escapes; `$`, `\\` and braces are refused earlier.
 */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?()|[\]^]/g, (c) => (c === '^' ? '\\^' : `[${c}]`));
}

/**
 * Values written into a host configuration must not be able to end a string
 * or start a variable there (`"`, `$`, `{`, `\`, control characters).
 */
export function assertSafeForConfig(value: string, what: string): void {
  if (/["$\\{}`\x00-\x1f\x7f]/.test(value)) {
    throw new MirrorError('USAGE', `${what} "${value}" holds a character a host configuration cannot quote (" $ \\ { } \` or a control character).`, {
      hint: 'Move the mirror to a path without those characters, or use a base URL without them.',
    });
  }
}

/** Content types by file extension, as the nginx block's `types` lists them; anything else is JSON (the protocol's files without an extension). */
export const FILE_TYPES: [extension: string, type: string][] = [
  ['json', JSON_TYPE],
  ['gz', ARCHIVE_TYPE],
  ['zip', PROVIDER_ZIP_TYPE],
  ['sig', RELEASE_SIGNATURE_TYPE],
  ['html', 'text/html'],
  ['css', 'text/css'],
  ['js', 'text/javascript'],
  ['svg', 'image/svg+xml'],
  ['txt', 'text/plain'],
];

/** Archives, their provenance, provider zips and an in-house release's signed files: immutable once published. */
const LONG_LIVED = new RegExp(`(\\.tar\\.gz|\\.zip|_SHA256SUMS|_SHA256SUMS\\.sig|${escapeRegExp(PROVENANCE_SUFFIX)})$`);

/**
 * The Content-Type and Cache-Control a file of the tree is served with by the
 * nginx block (and so stored with in a bucket): one rule per file kind.
 */
export function fileHeaders(rel: string): { 'Content-Type': string; 'Cache-Control': string } {
  const cache = LONG_LIVED.test(rel) ? CACHE_LONG : CACHE_SHORT;
  if (rel.endsWith('_SHA256SUMS')) return { 'Content-Type': RELEASE_SUMS_TYPE, 'Cache-Control': cache };
  const name = rel.slice(rel.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  const type = dot > 0 ? FILE_TYPES.find(([ext]) => ext === name.slice(dot + 1))?.[1] : undefined;
  return { 'Content-Type': type ?? JSON_TYPE, 'Cache-Control': cache };
}
