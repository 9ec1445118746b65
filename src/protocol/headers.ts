// HTTP-level protocol rules, in one place so that every way of serving the
// tree says the same thing: `modmirror serve` and the nginx block, Caddyfile
// and `_headers` file written for plain file hosts. Content types, the
// download answer's headers (spec 4.4), cache lifetimes and CORS.

/** Registry documents (spec 4.4), including the protocol files that have no extension. */
export const JSON_TYPE = 'application/json';
/** Management API documents (spec 2.1, 7.1). */
export const JSONAPI_TYPE = 'application/vnd.api+json';
/**
 * Module archives. Never sent with a Content-Encoding: every real client would
 * undo the gzip and receive a bare tar instead of the archive.
 */
export const ARCHIVE_TYPE = 'application/gzip';

/**
 * Provider packages (network mirror). Never sent with a Content-Encoding
 * either: Terraform checks the zip's own bytes against its zh: hash.
 */
export const PROVIDER_ZIP_TYPE = 'application/zip';

/** Archives never change once published (`publish --force` aside), so clients and CDNs may keep them. */
export const CACHE_LONG = 'public, max-age=31536000, immutable';
/** Versions, listings, details and downloads change with every publish: a minute keeps a CDN useful and a new version visible. */
export const CACHE_SHORT = 'public, max-age=60';
/** Download counts served live by `modmirror serve` change with every download: always ask again. */
export const CACHE_NONE = 'no-cache';
/** A private registry's answers depend on the caller: no shared cache may keep them, and each use revalidates. */
export const CACHE_PRIVATE = 'private, no-cache';
/** A private registry's archives: the bytes never change, but only the caller's own cache may keep them. */
export const CACHE_PRIVATE_LONG = 'private, max-age=31536000, immutable';
/** A download answer carrying a signed, expiring URL: kept by no cache. */
export const CACHE_NO_STORE = 'private, no-store';

/** CORS for a browse page on another origin; it may read the download headers too. */
export const CORS_HEADERS: Record<string, string> = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': 'X-Terraform-Get, X-Service-Get',
};

/** Terraform reads only X-Terraform-Get; the spec (4.4) names X-Service-Get. Both carry the same value. */
export const DOWNLOAD_HEADERS = ['X-Terraform-Get', 'X-Service-Get'];

/**
 * The download answer's headers (spec 4.4). Every host sends them with status
 * 200 and the `download` file's JSON body `{"location": ...}`: Terraform reads
 * the header (200 or 204), OpenTofu 1.6+ the body when there is one.
 */
export function downloadHeaders(location: string): Record<string, string> {
  return Object.fromEntries(DOWNLOAD_HEADERS.map((name) => [name, location]));
}
