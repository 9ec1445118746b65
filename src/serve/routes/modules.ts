// Spec 4.4: one module's documents, read from the tree (details with the live
// download count patched in), the download answer, the redirect to the
// latest version's download, and the archive itself, counted when fetched.

import { jsonPayload, payload, type Payload } from '../../http/payload.js';
import { ARCHIVE_TYPE, CACHE_LONG, CACHE_NO_STORE, CACHE_PRIVATE_LONG, downloadHeaders } from '../../protocol/headers.js';
import { whenSentWhole } from '../downloads.js';
import { archiveFile, archiveName, downloadFile, latestDetailFile, provenanceFile, versionDetailFile, versionsFile } from '../../protocol/paths.js';
import { latestVersion } from '../../version-order.js';
import type { IndexedModule } from '../mirror.js';
import { addressOf, moduleOf, notFound, versionOf, type Answer, type RouteRequest } from '../registry.js';
import { fillFromUpstream, fillLatestFromUpstream, fillsFromUpstream, upstreamVersions } from '../upstream.js';

/** GET {base}/:namespace/:name/:provider: the latest version's detail. */
export async function latestDetail(r: RouteRequest): Promise<Answer> {
  const filled = await fillLatestFromUpstream(r);
  return { payload: await detail(r, moduleOf(r), latestDetailFile(addressOf(r))), headers: filled };
}

/** GET {base}/:namespace/:name/:provider/:version */
export async function versionDetail(r: RouteRequest): Promise<Answer> {
  const filled = await fillFromUpstream(r);
  const module = moduleOf(r);
  return { payload: await detail(r, module, versionDetailFile(addressOf(r), versionOf(r, module))), headers: filled };
}

/** GET {base}/:namespace/:name/:provider/versions */
export async function versions(r: RouteRequest): Promise<Answer> {
  if (r.registry.upstream && fillsFromUpstream(r)) return upstreamVersions(r, r.registry.upstream);
  moduleOf(r); // 404 unless the mirror holds the module, before the file is looked for
  return { payload: await r.registry.mirror.document(versionsFile(addressOf(r))) };
}

/** GET {base}/:namespace/:name/:provider/download: 302 to the latest version's download. */
export async function downloadLatest(r: RouteRequest): Promise<Answer> {
  const filled = await fillLatestFromUpstream(r);
  const module = moduleOf(r);
  // The server answers at its host's root, so a protocol path is its URL path.
  const location = `/${downloadFile(addressOf(r), latestVersion(module.versions)!)}`;
  const html = `<!doctype html><title>Redirecting</title><a href="${location}">${location}</a>\n`;
  return { payload: payload(html, 'text/html; charset=utf-8'), status: 302, headers: { Location: location, ...filled } };
}

/**
 * GET {base}/:namespace/:name/:provider/:version/download: the answer every
 * client accepts, the same as the static hosts': 200, the JSON body OpenTofu
 * prefers and the headers Terraform reads.
 */
export async function download(r: RouteRequest): Promise<Answer> {
  const filled = await fillFromUpstream(r);
  const module = moduleOf(r);
  const address = addressOf(r);
  const version = versionOf(r, module);
  const document = await r.registry.mirror.document(downloadFile(address, version));
  const { location } = JSON.parse(document.body.toString('utf8')) as { location: string };
  const { access } = r.registry;
  if (!access) return { payload: document, headers: { ...downloadHeaders(location), ...filled } };
  // Private: Terraform's go-getter fetches the location with no token, so it carries a signature that expires.
  // OpenTofu 1.12+ reads the body first and, told so, fetches it with the registry's token instead (either works).
  // It names the caller's token, so it stops working when the token would no longer read the archive.
  const signed = `${location}?${access.signer.query(archiveFile(address, version), access.archiveUrlTtlSeconds, r.caller!.tokenId)}`;
  return {
    payload: jsonPayload({ location: signed, use_registry_credentials: true }),
    headers: { ...downloadHeaders(signed), 'Cache-Control': CACHE_NO_STORE, ...filled },
  };
}

/** GET the archive beside `download`; a complete GET counts as one download (spec 2.9). */
export async function archive(r: RouteRequest): Promise<undefined> {
  if (r.registry.access) authorizeArchive(r);
  const module = moduleOf(r);
  const address = addressOf(r);
  const version = versionOf(r, module);
  const cache = r.registry.access ? CACHE_PRIVATE_LONG : CACHE_LONG;
  // The archive's provenance beside it, read as the archive is (the browse page shows where a version came from).
  if (r.params['file'] === provenanceFile(archiveName(address, version))) {
    await r.registry.serveFile(r.req, r.res, provenanceFile(archiveFile(address, version)), { 'Content-Type': 'application/json', 'Cache-Control': cache });
    return undefined;
  }
  if (r.params['file'] !== archiveName(address, version)) throw notFound();
  whenSentWhole(r.req, r.res, () => {
    r.registry.downloads.record(module.key);
    r.registry.archiveSent?.(module.key, version, r.caller);
    r.registry.archiveUsed?.(archiveFile(address, version));
  });
  await r.registry.serveFile(r.req, r.res, archiveFile(address, version), { 'Content-Type': ARCHIVE_TYPE, 'Cache-Control': cache });
  return undefined;
}

/**
 * Private mode: an archive is fetched with a URL the registry signed (go-getter,
 * for Terraform) or with a token that may read the module (OpenTofu's
 * use_registry_credentials, browsers). Decided before the module is looked up,
 * so a caller without either learns nothing of what exists.
 */
function authorizeArchive(r: RouteRequest): void {
  const access = r.registry.access!;
  // A valid signature names this very path and came from this registry; the module is then read as the token it was issued to reads it now.
  const caller = access.signedOrCaller(r.req, archiveFile(addressOf(r), r.params['version'] ?? ''), r.query, 'archive');
  r.caller = r.record.caller = caller;
  r.index = access.view(r.index, caller);
}

/** Deeper paths under a module name nothing, but name the module first if it does not exist. */
export function belowModule(r: RouteRequest): never {
  moduleOf(r); // 404 unless the mirror holds the module, before the file is looked for
  throw notFound();
}

/** A detail document with the module's current download total in `downloads`. */
async function detail(r: RouteRequest, module: IndexedModule, rel: string): Promise<Payload> {
  const doc = await r.registry.mirror.document(rel);
  const count = r.registry.downloads.total(module.key);
  if (count === 0) return doc;
  const key = `${r.registry.mirror.current().generation}:${rel}`;
  const patched = r.registry.patchedDetails;
  const hit = patched.get(key);
  if (hit?.count === count) return hit.payload;
  // The first "downloads" key of a detail document is the module's own (it precedes root/submodules).
  const body = doc.body.toString('utf8').replace(/"downloads": 0\b/, `"downloads": ${count}`);
  const p = payload(body);
  if (patched.size > 10_000) patched.clear();
  patched.set(key, { count, payload: p });
  return p;
}
