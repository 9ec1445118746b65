// Spec 4.4: one module's documents, read from the tree (details with the live
// download count patched in), the download answer, the redirect to the
// latest version's download, and the archive itself, counted when fetched.

import { payload, type Payload } from '../../http/payload.js';
import { ARCHIVE_TYPE, CACHE_LONG, downloadHeaders } from '../../protocol/headers.js';
import { archiveFile, archiveName, downloadFile, latestDetailFile, versionDetailFile, versionsFile } from '../../protocol/paths.js';
import { latestVersion } from '../../version-order.js';
import type { IndexedModule } from '../mirror.js';
import { addressOf, moduleOf, notFound, versionOf, type Answer, type RouteRequest } from '../registry.js';

/** GET {base}/:namespace/:name/:provider: the latest version's detail. */
export async function latestDetail(r: RouteRequest): Promise<Answer> {
  return { payload: await detail(r, moduleOf(r), latestDetailFile(addressOf(r))) };
}

/** GET {base}/:namespace/:name/:provider/:version */
export async function versionDetail(r: RouteRequest): Promise<Answer> {
  const module = moduleOf(r);
  return { payload: await detail(r, module, versionDetailFile(addressOf(r), versionOf(r, module))) };
}

/** GET {base}/:namespace/:name/:provider/versions */
export async function versions(r: RouteRequest): Promise<Answer> {
  moduleOf(r); // 404 unless the mirror holds the module, before the file is looked for
  return { payload: await r.registry.mirror.document(versionsFile(addressOf(r))) };
}

/** GET {base}/:namespace/:name/:provider/download: 302 to the latest version's download. */
export function downloadLatest(r: RouteRequest): Answer {
  const module = moduleOf(r);
  // The server answers at its host's root, so a protocol path is its URL path.
  const location = `/${downloadFile(addressOf(r), latestVersion(module.versions)!)}`;
  const html = `<!doctype html><title>Redirecting</title><a href="${location}">${location}</a>\n`;
  return { payload: payload(html, 'text/html; charset=utf-8'), status: 302, headers: { Location: location } };
}

/**
 * GET {base}/:namespace/:name/:provider/:version/download: the answer every
 * client accepts, the same as the static hosts': 200, the JSON body OpenTofu
 * prefers and the headers Terraform reads.
 */
export async function download(r: RouteRequest): Promise<Answer> {
  const module = moduleOf(r);
  const document = await r.registry.mirror.document(downloadFile(addressOf(r), versionOf(r, module)));
  const { location } = JSON.parse(document.body.toString('utf8')) as { location: string };
  return { payload: document, headers: downloadHeaders(location) };
}

/** GET the archive beside `download`; a complete GET counts as one download (spec 2.9). */
export async function archive(r: RouteRequest): Promise<undefined> {
  const module = moduleOf(r);
  const address = addressOf(r);
  const version = versionOf(r, module);
  if (r.params['file'] !== archiveName(address, version)) throw notFound();
  r.res.on('finish', () => {
    if (r.req.method === 'GET' && r.res.statusCode === 200) r.registry.downloads.record(module.key);
  });
  await r.registry.serveFile(r.req, r.res, archiveFile(address, version), { 'Content-Type': ARCHIVE_TYPE, 'Cache-Control': CACHE_LONG });
  return undefined;
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
