// serve --upstream: what the module routes and the network mirror's
// documents do before answering. A version the mirror lacks is filled from
// the upstream (upstream/), then answered from the mirror like any other; a
// version list is the mirror's versions and the upstream's, so a client
// picks from both. When the upstream fails,
// the answer is what the mirror holds, marked stale; with nothing held, a
// 502 or 504, never a 500.

import { MirrorError } from '../errors.js';
import { jsonPayload, type Payload } from '../http/payload.js';
import { addressKey, isValidName, versionsFile } from '../protocol/paths.js';
import { providerVersionFile, type ProviderAddress } from '../protocol/providers.js';
import { normalizeHost } from '../protocol/source-address.js';
import type { ModuleAddress } from '../types.js';
import type { ListedProviderVersion, UpstreamCache, VersionList } from '../upstream/index.js';
import { compareVersionsDesc, latestVersion, validVersion } from '../version-order.js';
import { addressOf, notFound, type Answer, type RouteRequest } from './registry.js';

/**
 * Says how an answer was made: `hit` from the mirror (and a version list
 * still fresh), `miss` after asking the upstream now, `stale` from the
 * mirror because the upstream failed.
 */
export const CACHE_HEADER = 'X-Modmirror-Cache';
export type CacheState = 'hit' | 'miss' | 'stale';

const validAddress = (a: ModuleAddress) => isValidName(a.namespace) && isValidName(a.name) && isValidName(a.provider);

/** Private mode: a namespace that is an organization's is never asked of the upstream (its name would leave the site). */
const privateNamespace = (r: RouteRequest, namespace: string) => r.registry.access?.isPrivateNamespace(namespace) === true;

/** Whether the request's module may be filled from the upstream (an upstream, and a namespace that is not an organization's). */
export function fillsFromUpstream(r: RouteRequest): boolean {
  return r.registry.upstream !== undefined && !privateNamespace(r, addressOf(r).namespace);
}

interface VersionEntry {
  version: string;
}

/** GET …/versions with an upstream: the mirror's versions (kept even when the upstream drops them) and the upstream's. */
export async function upstreamVersions(r: RouteRequest, upstream: UpstreamCache): Promise<Answer> {
  const address = addressOf(r);
  if (!validAddress(address)) throw notFound(`Module ${addressKey(address)} not found`);
  const held = r.index.byKey.has(addressKey(address)) ? await r.registry.mirror.document(versionsFile(address)) : undefined;
  const list = await upstream.versions(address, held !== undefined);
  if (list.kind === 'failed') {
    if (!held) throw list.error;
    return { payload: held, headers: { [CACHE_HEADER]: 'stale' } };
  }
  if (list.kind === 'missing') {
    if (!held) throw notFound(`Module ${addressKey(address)} not found here or upstream`);
    return { payload: held, headers: { [CACHE_HEADER]: 'hit' } };
  }
  const ours = held ? (JSON.parse(held.body.toString('utf8')) as { modules: { versions: VersionEntry[] }[] }).modules[0]!.versions : [];
  const have = new Set(ours.map((v) => v.version));
  // Only what a client could ask for: a version string the mirror would take.
  const theirs = list.versions.filter((v) => !have.has(v) && validVersion(v) !== null).map((version) => ({ version }));
  const versions = [...ours, ...theirs].sort((a, b) => compareVersionsDesc(a.version, b.version));
  return {
    payload: jsonPayload({ modules: [{ source: addressKey(address), versions }] }),
    headers: { [CACHE_HEADER]: list.asked ? 'miss' : 'hit' },
  };
}

/**
 * Before a version's download or detail: fills the version from the upstream
 * when the mirror lacks it, and points the request at the mirror that now
 * holds it; gives the header that says which. A version the mirror holds is
 * never asked for again. Without an upstream, nothing.
 */
export async function fillFromUpstream(r: RouteRequest): Promise<Record<string, string>> {
  return r.registry.upstream && fillsFromUpstream(r) ? { [CACHE_HEADER]: await fillVersion(r, r.registry.upstream, r.params['version'] ?? '') } : {};
}

/**
 * Before a module's latest detail or latest download: a module the mirror
 * does not hold at all gets the upstream's newest version. One it holds is
 * answered as it is, newest as far as the mirror knows.
 */
export async function fillLatestFromUpstream(r: RouteRequest): Promise<Record<string, string>> {
  const upstream = r.registry.upstream;
  if (!upstream || !fillsFromUpstream(r)) return {};
  const address = addressOf(r);
  if (!validAddress(address) || r.registry.mirror.current().byKey.has(addressKey(address))) return { [CACHE_HEADER]: 'hit' };
  const list = await upstream.versions(address);
  if (list.kind === 'failed') throw list.error;
  const newest = list.kind === 'listed' ? latestVersion(list.versions.filter((v) => validVersion(v) !== null)) : undefined;
  if (newest === undefined) throw notFound(`Module ${addressKey(address)} not found here or upstream`);
  return { [CACHE_HEADER]: await fillVersion(r, upstream, newest) };
}

async function fillVersion(r: RouteRequest, upstream: UpstreamCache, version: string): Promise<CacheState> {
  const address = addressOf(r);
  const valid = validAddress(address) && validVersion(version) !== null;
  // The route's own 404 answers what is not a version, or what the caller may not read.
  if (!valid || r.registry.mirror.current().byKey.get(addressKey(address))?.versions.includes(version)) return 'hit';
  await upstream.fill(address, version);
  const { mirror, access } = r.registry;
  r.index = access && r.caller ? access.view(mirror.current(), r.caller) : mirror.current();
  return 'miss';
}

/** A file of the network mirror's folder a cache answers: HOST/NS/TYPE/ index.json, VERSION.json, or providers.v1's `versions` and VERSION/download/OS/ARCH. */
type ProviderPath =
  | { kind: 'index' | 'versions'; address: ProviderAddress }
  | { kind: 'version'; address: ProviderAddress; version: string }
  | { kind: 'download'; address: ProviderAddress; version: string; platform: string };

function providerPathOf(rest: string, hosts: Set<string>): ProviderPath | undefined {
  const parts = rest.split('/');
  const hostname = normalizeHost(parts[0] ?? '');
  const [, namespace = '', type = '', file = ''] = parts;
  if (hostname === undefined || !hosts.has(hostname) || !isValidName(namespace) || !isValidName(type)) return undefined;
  const address = { hostname, namespace, type };
  if (parts.length === 4 && (file === 'index.json' || file === 'versions')) return { kind: file === 'versions' ? 'versions' : 'index', address };
  if (parts.length === 4 && file.endsWith('.json')) return { kind: 'version', address, version: file.slice(0, -'.json'.length) };
  if (parts.length === 7 && parts[4] === 'download') return { kind: 'download', address, version: file, platform: `${parts[5]}_${parts[6]}` };
  return undefined;
}

/** A document of the mirror's tree, or undefined when it has none there. */
function heldDocument(r: RouteRequest, path: string): Promise<Payload | undefined> {
  return r.registry.mirror.document(path).catch((error: unknown) => {
    if (error instanceof MirrorError && error.code === 'NOT_FOUND') return undefined;
    throw error;
  });
}

/**
 * GET {providers}/HOST/NS/TYPE/index.json and VERSION.json with an upstream
 * that fills providers: the index lists the held versions and the
 * upstream's; a VERSION.json the mirror lacks is filled first. The same
 * folder is the upstream's providers.v1 for HOST (a host block points there):
 * `versions` lists the held versions and the upstream's, and a download
 * document of a version the mirror lacks is filled first, for the config's
 * platforms. Undefined for any other path, or one the mirror answers as it is.
 */
export async function upstreamProviderFile(r: RouteRequest, path: string): Promise<Answer | { filled: true } | undefined> {
  const upstream = r.registry.upstream;
  const providers = upstream?.providers;
  if (!upstream || !providers || !path.startsWith(`${providers.path}/`)) return undefined;
  const file = providerPathOf(path.slice(providers.path.length + 1), providers.hosts);
  if (!file) return undefined;
  // Private mode: only a caller with a token makes the cache fetch (401 before anything is asked).
  if (r.registry.access) r.caller ??= r.registry.access.caller(r.req);
  const { address } = file;
  if (privateNamespace(r, address.namespace)) return undefined;
  const held = await heldDocument(r, path);
  if (file.kind === 'version' || file.kind === 'download') {
    if (held || validVersion(file.version) === null) return undefined;
    if (file.kind === 'download') {
      // Another platform than the config's is not filled (a version in the mirror never changes, so it would never get the config's);
      // nor is a version the mirror holds without the upstream's signed SHA256SUMS: the route's 404 answers both.
      const kept = await heldDocument(r, providerVersionFile(providers.path, address, file.version));
      if (kept || !providers.platforms.includes(file.platform)) return undefined;
    }
    await upstream.fillProvider(address, file.version);
    const { mirror, access } = r.registry;
    r.index = access && r.caller ? access.view(mirror.current(), r.caller) : mirror.current();
    // Private: the route answers, as for any version it holds (the zips' URLs signed for the caller).
    return access ? { filled: true } : { payload: await mirror.document(path), headers: { [CACHE_HEADER]: 'miss' } };
  }
  if (file.kind === 'versions') {
    const list = await upstream.providerRegistryVersions(address, held !== undefined);
    if (list.kind !== 'listed') return unlisted(list, held, address);
    // The held versions as the mirror serves them, then the upstream's others as it lists them.
    const ours = held ? (JSON.parse(held.body.toString('utf8')) as { versions: ListedProviderVersion[] }).versions : [];
    const have = new Set(ours.map((v) => v.version));
    const theirs = list.versions.filter((v) => !have.has(v.version) && validVersion(v.version) !== null);
    return {
      payload: jsonPayload({ versions: [...ours, ...theirs].sort((a, b) => compareVersionsDesc(a.version, b.version)) }),
      headers: listedHeaders(list),
    };
  }
  const list = await upstream.providerVersions(address, held !== undefined);
  if (list.kind !== 'listed') return unlisted(list, held, address);
  const ours = held ? Object.keys((JSON.parse(held.body.toString('utf8')) as { versions: Record<string, unknown> }).versions) : [];
  const versions = [...new Set([...ours, ...list.versions.filter((v) => validVersion(v) !== null)])].sort(compareVersionsDesc);
  return { payload: jsonPayload({ versions: Object.fromEntries(versions.map((v) => [v, {}])) }), headers: listedHeaders(list) };
}

const listedHeaders = (list: { asked: boolean }) => ({ [CACHE_HEADER]: list.asked ? 'miss' : 'hit' });

/** A provider's version list the upstream failed to give, or does not have: what the mirror holds, marked, or the failure. */
function unlisted(list: Exclude<VersionList<unknown>, { kind: 'listed' }>, held: Payload | undefined, address: ProviderAddress): Answer {
  if (list.kind === 'failed') {
    if (!held) throw list.error;
    return { payload: held, headers: { [CACHE_HEADER]: 'stale' } };
  }
  if (!held) throw notFound(`Provider ${address.hostname}/${address.namespace}/${address.type} not found here or upstream`);
  return { payload: held, headers: { [CACHE_HEADER]: 'hit' } };
}
