// The provider network mirror (Terraform 0.13.2+, OpenTofu) from the tree:
// index.json and VERSION.json as application/json, which Terraform's mirror
// source requires (it refuses any other media type), compressed for clients
// that ask as every JSON answer is; the zips exactly as stored, never with a
// Content-Encoding (Terraform checks their bytes against zh:), counted as
// downloads of their provider when fetched whole. In private mode the JSON
// needs a known token and the zips a signed URL or a token.

import { posix } from 'node:path';
import { jsonPayload } from '../../http/payload.js';
import { CACHE_LONG, CACHE_NO_STORE, CACHE_PRIVATE, CACHE_PRIVATE_LONG, CACHE_SHORT, PROVIDER_ZIP_TYPE } from '../../protocol/headers.js';
import { forbiddenSignature, unauthorized } from '../access.js';
import { notFound, type Answer, type RouteRequest } from '../registry.js';

/** Download counts of providers share the data file with modules, under keys no module address can take. */
export const providerDownloadKey = (provider: string) => `provider:${provider}`;

/** An answer when `path` is under the mirror's providers folder; undefined for any other path. */
export async function providerFile(r: RouteRequest, path: string): Promise<Answer | null | undefined> {
  const base = r.index.providers.path;
  if (base === undefined || !path.startsWith(`${base}/`)) return undefined;
  if (path.split('/').some((s) => s.startsWith('.'))) throw notFound();
  const { access } = r.registry;
  if (path.endsWith('.json')) {
    if (!access) return { payload: await r.registry.mirror.document(path), headers: { 'Cache-Control': CACHE_SHORT } };
    // Mirrored providers belong to no organization: any caller with a known token reads them.
    r.caller = access.caller(r.req);
    return { payload: await signedVersionDocument(r, path), headers: { 'Cache-Control': CACHE_NO_STORE } };
  }
  const provider = r.index.providers.zips.get(path);
  if (access) authorizeZip(r, path);
  if (provider === undefined) throw notFound();
  r.res.on('finish', () => {
    if (r.req.method === 'GET' && r.res.statusCode === 200) r.registry.downloads.record(providerDownloadKey(provider));
  });
  await r.registry.serveFile(r.req, r.res, path, { 'Content-Type': PROVIDER_ZIP_TYPE, 'Cache-Control': access ? CACHE_PRIVATE_LONG : CACHE_LONG });
  // Sent by sirv.
  return null;
}

/**
 * Private mode: Terraform sends the mirror host's credentials for index.json
 * and VERSION.json but fetches the zip a VERSION.json names with a plain HTTP
 * client (its package fetch), as go-getter does a module archive. So each
 * zip's `url` carries a signature that expires, like a module download's location.
 */
async function signedVersionDocument(r: RouteRequest, path: string) {
  const document = await r.registry.mirror.document(path);
  const parsed = JSON.parse(document.body.toString('utf8')) as { archives?: Record<string, { url: string }> };
  if (parsed.archives === undefined) return document;
  const access = r.registry.access!;
  const here = new URL(`http://mirror/${path}`);
  for (const archive of Object.values(parsed.archives)) {
    const target = new URL(archive.url, here);
    // Only the mirror's own zips are signed; a URL elsewhere is the other host's business.
    if (target.origin !== here.origin || target.search !== '') continue;
    const zip = posix.normalize(decodeURIComponent(target.pathname.slice(1)));
    archive.url = `${archive.url}?${access.signer.query(zip, access.archiveUrlTtlSeconds)}`;
  }
  return jsonPayload(parsed);
}

/** A zip is fetched with a URL the registry signed (Terraform) or a known token (other clients, browsers). */
function authorizeZip(r: RouteRequest, path: string): void {
  const access = r.registry.access!;
  const signature = access.signer.check(path, r.query);
  if (signature === 'valid') return;
  const caller = access.callerIfAny(r.req);
  if (caller) {
    r.caller = caller;
    return;
  }
  if (signature === 'absent') {
    access.refuse(r.req, 'anonymous', 'provider package without a signature or a token');
    throw unauthorized();
  }
  access.refuse(r.req, 'anonymous', `provider package URL signature ${signature}`);
  throw forbiddenSignature(signature);
}
