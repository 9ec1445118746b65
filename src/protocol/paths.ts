// Protocol paths and URLs as pure functions: the one place that knows where
// each registry endpoint (spec 4.4) lives in the dist/ tree.
//
// A protocol path that is also a folder (`/v1/modules/ns/name/provider` holds
// `versions`) is stored as `index.json` inside that folder; a path with no
// children (`versions`, `download`, `summary`) is a file with no extension.

import type { ModuleAddress } from '../types.js';

export const MODULES_BASE = 'v1/modules/';
export const V2_MODULES_BASE = 'v2/modules/';
export const DISCOVERY_FILE = '.well-known/terraform.json';
/** `terraform login`'s endpoints (login.v1), served by `serve --access private` only. */
export const LOGIN_AUTHZ_PATH = 'oauth/authorization';
export const LOGIN_TOKEN_PATH = 'oauth/token';
export const MANIFEST_FILE = 'manifest.json';
export const SEARCH_INDEX_FILE = 'search-index.json';
export const VERSIONS_INDEX_FILE = 'versions-index.json';
export const INDEX_FILE = 'index.json';

/** Listing page sizes (spec 8: each endpoint has its own default and maximum). */
export const LIST_DEFAULT_LIMIT = 15;
export const LIST_MAX_LIMIT = 100;

const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** Namespaces, names and providers: what the public registry accepts, and safe as a path segment. */
export function isValidName(value: string): boolean {
  return NAME.test(value);
}

export function addressKey(a: ModuleAddress): string {
  return `${a.namespace}/${a.name}/${a.provider}`;
}

/** The address an addressKey names. */
export function parseAddressKey(key: string): ModuleAddress {
  const [namespace = '', name = '', provider = ''] = key.split('/');
  return { namespace, name, provider };
}

export function moduleDir(a: ModuleAddress): string {
  return `${MODULES_BASE}${addressKey(a)}/`;
}

/** GET {base}/ns/name/provider/versions */
export function versionsFile(a: ModuleAddress): string {
  return `${moduleDir(a)}versions`;
}

/** GET {base}/ns/name/provider (detail of the latest version) */
export function latestDetailFile(a: ModuleAddress): string {
  return `${moduleDir(a)}${INDEX_FILE}`;
}

/** GET {base}/ns/name/provider/version */
export function versionDetailFile(a: ModuleAddress, version: string): string {
  return `${moduleDir(a)}${version}/${INDEX_FILE}`;
}

/** GET {base}/ns/name/provider/version/download */
export function downloadFile(a: ModuleAddress, version: string): string {
  return `${moduleDir(a)}${version}/download`;
}

/** The archive's file name; it sits beside `download`, so `./NAME` resolves against the download URL. */
export function archiveName(a: ModuleAddress, version: string): string {
  return `${a.name}-${a.provider}-${version}.tar.gz`;
}

export function archiveFile(a: ModuleAddress, version: string): string {
  return `${moduleDir(a)}${version}/${archiveName(a, version)}`;
}

/** A version's provenance sits beside its archive, named after it, as SLSA's tools look for it. */
export const PROVENANCE_SUFFIX = '.intoto.jsonl';

/** The provenance file of the archive at `archiveRel`. */
export const provenanceFile = (archiveRel: string): string => archiveRel + PROVENANCE_SUFFIX;

/** GET {base}/ns/name (latest version for every provider) */
export function providersListingFile(namespace: string, name: string): string {
  return `${MODULES_BASE}${namespace}/${name}/${INDEX_FILE}`;
}

/** GET {base} and {base}/ns (first page of each listing) */
export function listingFile(namespace?: string): string {
  return namespace === undefined ? `${MODULES_BASE}${INDEX_FILE}` : `${MODULES_BASE}${namespace}/${INDEX_FILE}`;
}

/** GET {v2 base}ns/name/provider/downloads/summary */
export function downloadsSummaryFile(a: ModuleAddress): string {
  return `${V2_MODULES_BASE}${addressKey(a)}/downloads/summary`;
}

/**
 * The download location clients are sent to (X-Terraform-Get / `location`):
 * absolute under `baseUrl` when one is configured, else relative to the
 * download URL as spec 4.4 allows, so the tree can be hosted anywhere.
 */
export function archiveLocation(a: ModuleAddress, version: string, baseUrl: string): string {
  return baseUrl === '' ? `./${archiveName(a, version)}` : `${baseUrl}${archiveFile(a, version)}`;
}

/** `modules.v1` for service discovery: absolute under `baseUrl`, else a path. */
export function modulesServiceUrl(baseUrl: string): string {
  return baseUrl === '' ? `/${MODULES_BASE}` : `${baseUrl}${MODULES_BASE}`;
}

/** Path (with query) of a listing page, for `meta.next_url`; `listing` is '', `ns` or `ns/name`. */
export function listingPageUrl(basePath: string, listing: string, offset: number, limit: number): string {
  return `${basePath}${MODULES_BASE}${listing}?offset=${offset}&limit=${limit}`;
}

/** The URL path prefix the tree is served under: `/` unless baseUrl has a path. */
export function basePathOf(baseUrl: string): string {
  return baseUrl === '' ? '/' : new URL(baseUrl).pathname;
}

/**
 * The URL path prefix a discovery document's `modules.v1` implies: the inverse
 * of modulesServiceUrl, for reading a built tree back (`verify`), where only
 * the tree, not the baseUrl it was built with, is known.
 */
export function basePathOfModulesService(modulesV1: string): string {
  const path = new URL(modulesV1, 'http://mirror/').pathname;
  return path.endsWith(MODULES_BASE) ? path.slice(0, -MODULES_BASE.length) : path;
}

/** The baseUrl a tree was built with, from its discovery document's `modules.v1`: '' for a path (none). */
export function baseUrlOfModulesService(modulesV1: string): string {
  return /^https?:\/\//.test(modulesV1) && modulesV1.endsWith(MODULES_BASE) ? modulesV1.slice(0, -MODULES_BASE.length) : '';
}
