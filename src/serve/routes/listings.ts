// Spec 4.4 and 8: module listings (all, by namespace, by namespace and name)
// and search, with offset/limit and the provider/namespace/verified filters
// that only a server can apply. `next_url` keeps the caller's filters.

import { MirrorError } from '../../errors.js';
import { jsonPayload, type Payload } from '../../http/payload.js';
import { pageMeta, type ModuleSummary } from '../../protocol/documents.js';
import { LIST_DEFAULT_LIMIT, LIST_MAX_LIMIT } from '../../protocol/paths.js';
import type { IndexedModule } from '../mirror.js';
import { cachedAnswer, MODULES_PATH, notFound, type Answer, type RouteRequest } from '../registry.js';

/** GET {base} */
export function listAll(r: RouteRequest): Answer {
  return { payload: cachedAnswer(r, () => pageOf(r, filtered(r.index.modules, r.query), MODULES_PATH)) };
}

/** GET {base}/:namespace */
export function listNamespace(r: RouteRequest): Answer {
  const namespace = r.params['namespace']!;
  return {
    payload: cachedAnswer(r, () => {
      const modules = r.index.modules.filter((m) => m.summary.namespace === namespace);
      return pageOf(r, filtered(modules, r.query), `${MODULES_PATH}${namespace}`);
    }),
  };
}

/** GET {base}/:namespace/:name: the latest version for every provider. */
export function listProviders(r: RouteRequest): Answer {
  const { namespace, name } = r.params;
  return {
    payload: cachedAnswer(r, () => {
      const modules = r.index.modules.filter((m) => m.summary.namespace === namespace && m.summary.name === name);
      if (modules.length === 0) throw notFound(`Module ${namespace}/${name} not found`);
      return pageOf(r, modules, `${MODULES_PATH}${namespace}/${name}`);
    }),
  };
}

/** GET {base}/search?q=: every word of `q` must appear; exact name matches rank first, then name prefixes, then the rest. */
export function search(r: RouteRequest): Answer {
  return {
    payload: cachedAnswer(r, () => {
      const q = (r.query.get('q') ?? '').trim().toLowerCase();
      if (q === '') throw new MirrorError('BAD_REQUEST', 'Missing query parameter "q"');
      const terms = q.split(/\s+/);
      // Modules are sorted by address already: four rank buckets keep that order without a sort.
      const buckets: IndexedModule[][] = [[], [], [], []];
      for (const m of filtered(r.index.modules, r.query)) {
        if (!terms.every((t) => m.haystack.includes(t))) continue;
        const name = m.nameLower;
        buckets[name === q ? 0 : name.startsWith(q) ? 1 : name.includes(q) ? 2 : 3]!.push(m);
      }
      return pageOf(r, buckets.flat(), `${MODULES_PATH}search`);
    }),
  };
}

/** One page of results with spec 8's meta. */
function pageOf(r: RouteRequest, results: IndexedModule[], path: string): Payload {
  const { offset, limit } = page(r.query);
  const meta = pageMeta(results.length, offset, limit, (next) => {
    const params = new URLSearchParams(r.query);
    params.set('offset', String(next));
    params.set('limit', String(limit));
    return `${path}?${params}`;
  });
  return jsonPayload({ meta, modules: withDownloads(r, results.slice(offset, offset + limit)) });
}

function page(query: URLSearchParams): { offset: number; limit: number } {
  const offset = integerParam(query, 'offset', 0) ?? 0;
  const limit = Math.min(integerParam(query, 'limit', 1) ?? LIST_DEFAULT_LIMIT, LIST_MAX_LIMIT);
  return { offset, limit };
}

function integerParam(query: URLSearchParams, name: string, min: number): number | undefined {
  const raw = query.get(name);
  if (raw === null || raw === '') return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < min || !Number.isSafeInteger(Number(raw))) {
    throw new MirrorError('BAD_REQUEST', `Invalid ${name} "${raw}": expected ${min === 0 ? 'a non-negative' : 'a positive'} integer`);
  }
  return Number(raw);
}

function filtered(modules: IndexedModule[], query: URLSearchParams): IndexedModule[] {
  const provider = query.get('provider');
  const namespace = query.get('namespace');
  const verifiedOnly = query.get('verified') === 'true';
  if (!provider && !namespace && !verifiedOnly) return modules;
  return modules.filter(
    (m) => (!provider || m.summary.provider === provider) && (!namespace || m.summary.namespace === namespace) && (!verifiedOnly || m.summary.verified),
  );
}

function withDownloads(r: RouteRequest, modules: IndexedModule[]): ModuleSummary[] {
  return modules.map((m) => {
    const downloads = r.registry.downloads.total(m.key);
    return downloads === 0 ? m.summary : { ...m.summary, downloads };
  });
}
