// The provider network mirror (Terraform 0.13.2+, OpenTofu) from the tree:
// index.json and VERSION.json as application/json, which Terraform's mirror
// source requires (it refuses any other media type), compressed for clients
// that ask as every JSON answer is; the zips exactly as stored, never with a
// Content-Encoding (Terraform checks their bytes against zh:), counted as
// downloads of their provider when fetched whole. In private mode the JSON
// needs a known token and the zips a signed URL or a token, and a provider
// whose namespace is an organization's (in-house) is read only as that
// organization shares its providers: for anyone else it does not exist.

import { posix } from 'node:path';
import { jsonPayload } from '../../http/payload.js';
import {
  CACHE_LONG,
  CACHE_NO_STORE,
  CACHE_PRIVATE_LONG,
  CACHE_SHORT,
  PROVIDER_ZIP_TYPE,
  RELEASE_SIGNATURE_TYPE,
  RELEASE_SUMS_TYPE,
} from '../../protocol/headers.js';
import { baseUrlOfModulesService, DISCOVERY_FILE } from '../../protocol/paths.js';
import { isPlatform, providerDownloadFile, providerKey, providerVersionsFile, type ProvidersIndex } from '../../protocol/providers.js';
import type { Caller } from '../access.js';
import { whenSentWhole } from '../downloads.js';
import { cachedAnswer, notFound, type Answer, type RouteRequest } from '../registry.js';
import { CACHE_HEADER, upstreamProviderFile } from '../upstream.js';

/** Download counts of providers share the data file with modules, under keys no module address can take. */
export const providerDownloadKey = (provider: string) => `provider:${provider}`;

/** An answer when `path` is under the mirror's providers folder; undefined for any other path. */
export async function providerFile(r: RouteRequest, path: string): Promise<Answer | null | undefined> {
  const filled = await upstreamProviderFile(r, path);
  if (filled && 'payload' in filled) return { ...filled, headers: { 'Cache-Control': CACHE_SHORT, ...filled.headers } };
  const cacheState: Record<string, string> = filled ? { [CACHE_HEADER]: 'miss' } : {};
  const base = r.index.providers.path;
  if (base === undefined || !path.startsWith(`${base}/`)) return undefined;
  if (path.split('/').some((s) => s.startsWith('.'))) throw notFound();
  const { access } = r.registry;
  if (path.endsWith('.json')) {
    if (!access) return { payload: await r.registry.mirror.document(path), headers: { 'Cache-Control': CACHE_SHORT } };
    readableProvider(r, access.caller(r.req), keyOfProviderPath(base, path));
    return { payload: await signedVersionDocument(r, path), headers: { 'Cache-Control': CACHE_NO_STORE, ...cacheState } };
  }
  if (isUpstreamRegistryDocument(base, path)) {
    // An upstream's release served over providers.v1 (a host block names {providers}/HOSTNAME/): JSON, as the mirror's own providers.v1.
    if (!access) return { payload: await r.registry.mirror.document(path), headers: { 'Cache-Control': CACHE_SHORT } };
    readableProvider(r, access.caller(r.req), keyOfProviderPath(base, path));
    const payload = path.endsWith('/versions')
      ? await r.registry.mirror.document(path)
      : await signedDocument(r, path, ['download_url', 'shasums_url', 'shasums_signature_url']);
    return { payload, headers: { 'Cache-Control': CACHE_NO_STORE, ...cacheState } };
  }
  // Terraform fetches a zip by the signed URL in VERSION.json; other clients may send a token.
  if (access) readableProvider(r, access.signedOrCaller(r.req, path, r.query, 'provider package'), keyOfProviderPath(base, path));
  const releaseFile = r.index.providers.releaseFiles.get(path);
  const provider = r.index.providers.zips.get(path);
  if (releaseFile !== undefined) {
    // An in-house release's SHA256SUMS and signature, exactly as signed: Terraform checks the bytes.
    const type = path.endsWith('.sig') ? RELEASE_SIGNATURE_TYPE : RELEASE_SUMS_TYPE;
    await r.registry.serveFile(r.req, r.res, path, { 'Content-Type': type, 'Cache-Control': access ? CACHE_PRIVATE_LONG : CACHE_LONG });
    return null;
  }
  if (provider === undefined) throw notFound();
  whenSentWhole(r.req, r.res, () => {
    r.registry.downloads.record(providerDownloadKey(provider));
    r.registry.archiveUsed?.(path);
  });
  await r.registry.serveFile(r.req, r.res, path, { 'Content-Type': PROVIDER_ZIP_TYPE, 'Cache-Control': access ? CACHE_PRIVATE_LONG : CACHE_LONG });
  // Sent by sirv.
  return null;
}

/** GET {providers.v1}:namespace/:type/versions; 404 for a provider the mirror does not publish (or the caller may not read). */
export async function providerVersions(r: RouteRequest): Promise<Answer> {
  const { namespace = '', type = '' } = r.params;
  registryProvider(r, namespace, type);
  return {
    payload: await r.registry.mirror.document(providerVersionsFile(namespace, type)),
    headers: { 'Cache-Control': r.registry.access ? CACHE_NO_STORE : CACHE_SHORT },
  };
}

/** GET {providers.v1}:namespace/:type/:version/download/:os/:arch; 404 when that platform was not released. */
export async function providerDownload(r: RouteRequest): Promise<Answer> {
  const { namespace = '', type = '', version = '', os = '', arch = '' } = r.params;
  registryProvider(r, namespace, type);
  if (!/^[0-9A-Za-z][0-9A-Za-z.+-]*$/.test(version) || !isPlatform(`${os}_${arch}`)) throw notFound();
  const path = providerDownloadFile(namespace, type, version, `${os}_${arch}`);
  if (!r.registry.access) return { payload: await r.registry.mirror.document(path), headers: { 'Cache-Control': CACHE_SHORT } };
  return { payload: await signedDocument(r, path, ['download_url', 'shasums_url', 'shasums_signature_url']), headers: { 'Cache-Control': CACHE_NO_STORE } };
}

/** 404 unless the caller's part of the mirror serves NAMESPACE/TYPE over providers.v1; the route has cut the index to that part. */
function registryProvider(r: RouteRequest, namespace: string, type: string): void {
  if (r.index.providers.registry.has(`${namespace}/${type}`)) return;
  if (r.caller && r.registry.mirror.current().providers.registry.has(`${namespace}/${type}`)) {
    r.registry.access?.refuse(r.req, r.caller.label, `provider ${namespace}/${type} is not readable by this caller`);
  }
  throw notFound();
}

/**
 * Private mode: cuts the request's index to what `caller` may read, and
 * answers 404, as for a file that does not exist, when that leaves out the
 * provider the path is under (HOSTNAME/NAMESPACE/TYPE).
 */
function readableProvider(r: RouteRequest, caller: Caller, key: string | undefined): void {
  const access = r.registry.access!;
  const whole = r.index;
  r.caller = caller;
  r.index = access.view(whole, caller);
  if (key === undefined || r.index.providers.keys.has(key) || !whole.providers.keys.has(key)) return;
  access.refuse(r.req, caller.label, `provider ${key} is not readable by this caller`);
  throw notFound();
}

/** HOSTNAME/NAMESPACE/TYPE/versions or HOSTNAME/NAMESPACE/TYPE/VERSION/download/OS/ARCH under the network mirror's folder `base`. */
function isUpstreamRegistryDocument(base: string, path: string): boolean {
  const parts = path.slice(base.length + 1).split('/');
  return (parts.length === 4 && parts[3] === 'versions') || (parts.length === 7 && parts[4] === 'download');
}

/** HOSTNAME/NAMESPACE/TYPE of a file under the network mirror's folder `base`; undefined above that depth. */
function keyOfProviderPath(base: string, path: string): string | undefined {
  const parts = path.slice(base.length + 1).split('/');
  return parts.length > 3 ? parts.slice(0, 3).join('/') : undefined;
}

/** `providers-index.json` in private mode: the providers the caller may read (the browse page lists them). */
export async function providersIndexFor(r: RouteRequest, file: string): Promise<Answer> {
  const full = await r.registry.mirror.document(file);
  return {
    payload: cachedAnswer(r, () => {
      const index = JSON.parse(full.body.toString('utf8')) as ProvidersIndex;
      return jsonPayload({ ...index, providers: index.providers.filter((p) => r.index.providers.keys.has(providerKey(p))) });
    }),
  };
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
  for (const archive of Object.values(parsed.archives)) archive.url = signedUrl(r, path, archive.url);
  return jsonPayload(parsed);
}

/** The same for a providers.v1 download document, whose SHA256SUMS and signature Terraform also fetches without its token. */
async function signedDocument(r: RouteRequest, path: string, fields: string[]) {
  const parsed = JSON.parse((await r.registry.mirror.document(path)).body.toString('utf8')) as Record<string, unknown>;
  const base = await builtBaseUrl(r);
  for (const field of fields) if (typeof parsed[field] === 'string') parsed[field] = signedUrl(r, path, parsed[field], base);
  return jsonPayload(parsed);
}

/** The baseUrl the served tree was built with ('' for none): its download documents' URLs are absolute under it. */
async function builtBaseUrl(r: RouteRequest): Promise<string> {
  const discovery = JSON.parse((await r.registry.mirror.document(DISCOVERY_FILE)).body.toString('utf8')) as Record<string, unknown>;
  const modulesV1 = discovery['modules.v1'];
  return typeof modulesV1 === 'string' ? baseUrlOfModulesService(modulesV1) : '';
}

function signedUrl(r: RouteRequest, documentPath: string, url: string, builtBase = ''): string {
  const access = r.registry.access!;
  const here = new URL(`http://mirror/${documentPath}`);
  const target = builtBase !== '' && url.startsWith(builtBase) ? new URL(url.slice(builtBase.length), 'http://mirror/') : new URL(url, here);
  // Only the mirror's own files are signed; a URL elsewhere is the other host's business.
  if (target.origin !== here.origin || target.search !== '') return url;
  const file = posix.normalize(decodeURIComponent(target.pathname.slice(1)));
  return `${url}?${access.signer.query(file, access.archiveUrlTtlSeconds, r.caller!.tokenId)}`;
}
