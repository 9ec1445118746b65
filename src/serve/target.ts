// The request target as the router reads it: decoded path segments and the
// query, refusing anything that could step outside the tree, and which API
// (registry or management) a target is for, so errors take that API's format.

import { MirrorError } from '../errors.js';

export const MAX_URL_LENGTH = 4096;

/**
 * A request target in absolute form (`http://host/p?q`, RFC 9112 3.2.2) as the
 * origin form the router reads (`/p?q`); any other target as it is.
 */
export function originForm(url: string): string {
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/.exec(url);
  if (!scheme) return url;
  const rest = url.slice(scheme[0].length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/** Decoded path segments and the query; `..`, encoded slashes, backslashes and NUL are refused. */
export function parseTarget(url: string): { segments: string[]; query: URLSearchParams } {
  if (url.length > MAX_URL_LENGTH) throw new MirrorError('URI_TOO_LONG', `URL too long: the limit is ${MAX_URL_LENGTH} characters`);
  const q = url.indexOf('?');
  const rawPath = q === -1 ? url : url.slice(0, q);
  if (!rawPath.startsWith('/')) throw new MirrorError('BAD_REQUEST', 'Invalid path');
  const segments: string[] = [];
  for (const raw of rawPath.split('/')) {
    if (raw === '') continue;
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      throw new MirrorError('BAD_REQUEST', 'Invalid percent-encoding in path');
    }
    if (segment === '.' || segment === '..' || /[/\\\0]/.test(segment)) throw new MirrorError('BAD_REQUEST', 'Invalid path');
    segments.push(segment);
  }
  return { segments, query: new URLSearchParams(q === -1 ? '' : url.slice(q + 1)) };
}

/**
 * Whether a request is for the management API: its first two path segments are
 * `api` and `v2`. They are decoded as parseTarget does, but what it refuses is
 * kept as is, so that a malformed management URL still gets that API's errors.
 */
export function isManagementTarget(url: string): boolean {
  const path = url.split('?', 1)[0]!;
  const [first, second] = path
    .split('/')
    .filter((s) => s !== '')
    .slice(0, 2)
    .map(decodeLeniently);
  return first === 'api' && second === 'v2';
}

function decodeLeniently(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
