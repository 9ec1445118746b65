// The provider network mirror (Terraform 0.13.2+, OpenTofu) from the tree:
// index.json and VERSION.json as application/json, which Terraform's mirror
// source requires (it refuses any other media type), compressed for clients
// that ask as every JSON answer is; the zips exactly as stored, never with a
// Content-Encoding (Terraform checks their bytes against zh:), counted as
// downloads of their provider when fetched whole.

import { CACHE_LONG, CACHE_PRIVATE, CACHE_SHORT, PROVIDER_ZIP_TYPE } from '../../protocol/headers.js';
import { notFound, type Answer, type RouteRequest } from '../registry.js';

/** Download counts of providers share the data file with modules, under keys no module address can take. */
export const providerDownloadKey = (provider: string) => `provider:${provider}`;

/** An answer when `path` is under the mirror's providers folder; undefined for any other path. */
export async function providerFile(r: RouteRequest, path: string): Promise<Answer | null | undefined> {
  const base = r.index.providers.path;
  if (base === undefined || !path.startsWith(`${base}/`)) return undefined;
  if (path.split('/').some((s) => s.startsWith('.'))) throw notFound();
  // A private registry's answers are for the caller only, never for a shared cache.
  const isPrivate = r.registry.access !== undefined;
  if (path.endsWith('.json')) return { payload: await r.registry.mirror.document(path), headers: { 'Cache-Control': isPrivate ? CACHE_PRIVATE : CACHE_SHORT } };
  const provider = r.index.providers.zips.get(path);
  if (provider === undefined) throw notFound();
  r.res.on('finish', () => {
    if (r.req.method === 'GET' && r.res.statusCode === 200) r.registry.downloads.record(providerDownloadKey(provider));
  });
  await r.registry.serveFile(r.req, r.res, path, { 'Content-Type': PROVIDER_ZIP_TYPE, 'Cache-Control': isPrivate ? CACHE_PRIVATE : CACHE_LONG });
  // Sent by sirv.
  return null;
}
