// Registry routes (spec 4.4, 7.2, 8): what static files cannot answer
// (offset/limit/filters, search, the download answer, 302 to the latest,
// download counts), and the documents the build wrote for the rest.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { pageMeta, type ModuleSummary } from '../protocol/documents.js';
import { latestVersion } from '../version-order.js';
import {
  downloadFile,
  isValidName,
  LIST_DEFAULT_LIMIT,
  LIST_MAX_LIMIT,
  latestDetailFile,
  versionDetailFile,
  versionsFile,
  archiveName,
} from '../protocol/paths.js';
import { CACHE_LONG, CACHE_SHORT, downloadHeaders } from '../protocol/headers.js';
import type { DownloadCounter } from './downloads.js';
import { HttpError, jsonPayload, payload, sendPayload, type AnswerCache, type Payload } from './http.js';
import type { IndexedModule, Mirror, MirrorIndex } from './mirror.js';
import { validVersion } from '../version-order.js';

export interface RegistryContext {
  mirror: Mirror;
  downloads: DownloadCounter;
  /** Serves a file of the tree (archives) with sirv. */
  serveFile: (req: IncomingMessage, res: ServerResponse, rel: string, headers: Record<string, string>) => Promise<void>;
  /** Path prefix of the registry API, e.g. `/v1/modules/`. */
  basePath: string;
  /** Detail documents with a non-zero download count patched in, by generation and path. */
  patchedDetails: Map<string, { count: number; payload: Payload }>;
  /** Listing and search answers by generation, download epoch and URL. */
  answers: AnswerCache;
}

/** Listings and search are pure functions of the index, the counts and the URL: compute each once. */
function cachedAnswer(ctx: RegistryContext, index: MirrorIndex, req: IncomingMessage, compute: () => Payload): Payload {
  const key = `${index.generation}|${ctx.downloads.epoch}|${req.url}`;
  const hit = ctx.answers.get(key);
  if (hit) return hit;
  const answer = compute();
  ctx.answers.set(key, answer);
  return answer;
}

type Query = URLSearchParams;

/** `segments` are the decoded path segments after `/v1/modules/`. */
export async function handleModules(ctx: RegistryContext, req: IncomingMessage, res: ServerResponse, path: string[], query: Query): Promise<void> {
  const index = ctx.mirror.current();
  // What changes with each publish gets the static hosts' short lifetime (hosting/rules.ts).
  const send = (p: Payload, status = 200, headers: Record<string, string> = {}) => sendPayload(req, res, p, status, { 'Cache-Control': CACHE_SHORT, ...headers });
  // `.../index.json` is where a document sits in the tree; the browse page asks for that, which any file host has.
  const segments = path.at(-1) === 'index.json' ? path.slice(0, -1) : path;
  const [a, b, c, d, e] = segments;
  switch (segments.length) {
    case 0:
      return send(cachedAnswer(ctx, index, req, () => listing(ctx, index.modules, query, '')));
    case 1:
      if (a === 'search') return send(cachedAnswer(ctx, index, req, () => search(ctx, index, query)));
      return send(cachedAnswer(ctx, index, req, () => listing(ctx, index.modules.filter((m) => m.summary.namespace === a), query, a!)));
    case 2:
      return send(cachedAnswer(ctx, index, req, () => providersListing(ctx, index, a!, b!, query)));
  }
  const module = findModule(index, a!, b!, c!);
  const address = { namespace: a!, name: b!, provider: c! };
  if (segments.length === 3) return send(await detail(ctx, module, latestDetailFile(address)));
  if (segments.length === 4) {
    if (d === 'versions') return send(await ctx.mirror.document(versionsFile(address)));
    if (d === 'download') {
      const latest = latestVersion(module.versions)!;
      const location = `${ctx.basePath}${module.key}/${latest}/download`;
      const html = `<!doctype html><title>Redirecting</title><a href="${location}">${location}</a>\n`;
      return send(payload(html, 'text/html; charset=utf-8'), 302, { Location: location });
    }
    return send(await detail(ctx, module, versionDetailFile(address, knownVersion(module, d!))));
  }
  if (segments.length === 5) {
    const version = knownVersion(module, d!);
    if (e === 'download') {
      const document = await ctx.mirror.document(downloadFile(address, version));
      const { location } = JSON.parse(document.body.toString('utf8')) as { location: string };
      // The answer every client accepts, the same as the static hosts': 200, the
      // JSON body OpenTofu prefers and the headers Terraform reads (hosting/rules.ts).
      return send(document, 200, downloadHeaders(location));
    }
    if (e === archiveName(address, version)) {
      res.on('finish', () => {
        if (req.method === 'GET' && res.statusCode === 200) ctx.downloads.record(module.key);
      });
      return ctx.serveFile(req, res, `v1/modules/${module.key}/${version}/${e}`, { 'Content-Type': 'application/gzip', 'Cache-Control': CACHE_LONG });
    }
  }
  throw new HttpError(404, 'Not found');
}

/** GET /v2/modules/ns/name/provider/downloads/summary (spec 2.9). */
export function handleDownloadsSummary(ctx: RegistryContext, req: IncomingMessage, res: ServerResponse, segments: string[]): void {
  const [a, b, c, d, e] = segments;
  if (segments.length !== 5 || d !== 'downloads' || e !== 'summary') throw new HttpError(404, 'Not found');
  const module = findModule(ctx.mirror.current(), a!, b!, c!);
  const attributes = ctx.downloads.windows(module.key);
  sendPayload(req, res, jsonPayload({ data: { type: 'module-downloads-summary', id: module.key, attributes } }), 200, { 'Cache-Control': 'no-cache' });
}

function findModule(index: MirrorIndex, namespace: string, name: string, provider: string): IndexedModule {
  const module = [namespace, name, provider].every(isValidName) ? index.byKey.get(`${namespace}/${name}/${provider}`) : undefined;
  if (!module) throw new HttpError(404, `Module ${namespace}/${name}/${provider} not found`);
  return module;
}

function knownVersion(module: IndexedModule, version: string): string {
  if (validVersion(version) === null || !module.versions.includes(version)) {
    throw new HttpError(404, `Version ${version} of ${module.key} not found`);
  }
  return version;
}

/** A detail document with the module's current download total in `downloads`. */
async function detail(ctx: RegistryContext, module: IndexedModule, rel: string): Promise<Payload> {
  const doc = await ctx.mirror.document(rel);
  const count = ctx.downloads.total(module.key);
  if (count === 0) return doc;
  const key = `${ctx.mirror.current().generation}:${rel}`;
  const patched = ctx.patchedDetails;
  const hit = patched.get(key);
  if (hit?.count === count) return hit.payload;
  // The first "downloads" key of a detail document is the module's own (it precedes root/submodules).
  const body = doc.body.toString('utf8').replace(/"downloads": 0\b/, `"downloads": ${count}`);
  const p = payload(body);
  if (patched.size > 10_000) patched.clear();
  patched.set(key, { count, payload: p });
  return p;
}

// ---- listings and search ---------------------------------------------------

function integerParam(query: Query, name: string, min: number): number | undefined {
  const raw = query.get(name);
  if (raw === null || raw === '') return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < min || !Number.isSafeInteger(Number(raw))) {
    throw new HttpError(400, `Invalid ${name} "${raw}": expected ${min === 0 ? 'a non-negative' : 'a positive'} integer`);
  }
  return Number(raw);
}

function page(query: Query): { offset: number; limit: number } {
  const offset = integerParam(query, 'offset', 0) ?? 0;
  const limit = Math.min(integerParam(query, 'limit', 1) ?? LIST_DEFAULT_LIMIT, LIST_MAX_LIMIT);
  return { offset, limit };
}

function filtered(modules: IndexedModule[], query: Query): IndexedModule[] {
  const provider = query.get('provider');
  const namespace = query.get('namespace');
  const verifiedOnly = query.get('verified') === 'true';
  if (!provider && !namespace && !verifiedOnly) return modules;
  return modules.filter(
    (m) =>
      (!provider || m.summary.provider === provider) &&
      (!namespace || m.summary.namespace === namespace) &&
      (!verifiedOnly || m.summary.verified),
  );
}

function withDownloads(ctx: RegistryContext, modules: IndexedModule[]): ModuleSummary[] {
  return modules.map((m) => {
    const downloads = ctx.downloads.total(m.key);
    return downloads === 0 ? m.summary : { ...m.summary, downloads };
  });
}

/** One page of results with spec 8's meta; `next_url` keeps the caller's filters. */
function pageOf(ctx: RegistryContext, results: IndexedModule[], query: Query, path: string): Payload {
  const { offset, limit } = page(query);
  const meta = pageMeta(results.length, offset, limit, (next) => {
    const params = new URLSearchParams(query);
    params.set('offset', String(next));
    params.set('limit', String(limit));
    return `${path}?${params}`;
  });
  return jsonPayload({ meta, modules: withDownloads(ctx, results.slice(offset, offset + limit)) });
}

function listing(ctx: RegistryContext, modules: IndexedModule[], query: Query, namespace: string): Payload {
  return pageOf(ctx, filtered(modules, query), query, `${ctx.basePath}${namespace}`);
}

function providersListing(ctx: RegistryContext, index: MirrorIndex, namespace: string, name: string, query: Query): Payload {
  const modules = index.modules.filter((m) => m.summary.namespace === namespace && m.summary.name === name);
  if (modules.length === 0) throw new HttpError(404, `Module ${namespace}/${name} not found`);
  return pageOf(ctx, modules, query, `${ctx.basePath}${namespace}/${name}`);
}

/** Every word of `q` must appear; exact name matches rank first, then name prefixes, then the rest. */
function search(ctx: RegistryContext, index: MirrorIndex, query: Query): Payload {
  const q = (query.get('q') ?? '').trim().toLowerCase();
  if (q === '') throw new HttpError(400, 'Missing query parameter "q"');
  const terms = q.split(/\s+/);
  // Modules are sorted by address already: four rank buckets keep that order without a sort.
  const buckets: IndexedModule[][] = [[], [], [], []];
  for (const m of filtered(index.modules, query)) {
    if (!terms.every((t) => m.haystack.includes(t))) continue;
    const name = m.nameLower;
    buckets[name === q ? 0 : name.startsWith(q) ? 1 : name.includes(q) ? 2 : 3]!.push(m);
  }
  return pageOf(ctx, buckets.flat(), query, `${ctx.basePath}search`);
}
