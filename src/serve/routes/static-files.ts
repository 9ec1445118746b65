// Everything that is not a protocol path is a file of the tree, served as is:
// the browse page and its scripts, the indexes, the manifest. In private mode
// the page itself (which holds no data) is open to all, so a browser can load
// it and ask for a token; its module index is cut to what the caller may
// read (READMEs come from the detail documents, guarded as the registry's),
// and the mirror's truth (manifest, module states) and the browse page's pages of rows to site administrators;
// the provider network mirror and its index to any caller with a known
// token, each cut to the providers that caller may read (providers.ts).

import { BROWSE_ASSET_FILES, BROWSE_INDEX_FILE, browseRow, type RecentRow } from '../../browse/index.js';
import { recentVersions } from '../../mirror/manifest.js';
import { jsonPayload } from '../../http/payload.js';
import { CACHE_PRIVATE, CACHE_SHORT } from '../../protocol/headers.js';
import { PROVIDERS_INDEX_FILE } from '../../protocol/providers.js';
import { cachedAnswer, notFound, type Answer, type RouteRequest } from '../registry.js';
import { providerFile, providersIndexFor } from './providers.js';

/** The browse page's own files: no module data in them. */
const PAGE_FILES = new Set(['', ...BROWSE_ASSET_FILES]);

/** GET /*path: a file of the tree; dot files (`.well-known` aside, which has its route) are not served. */
export async function staticFile(r: RouteRequest): Promise<Answer | undefined> {
  const path = r.params['path']!;
  const { access } = r.registry;
  if (access && path === PROVIDERS_INDEX_FILE) {
    r.caller = access.caller(r.req);
    r.index = access.view(r.index, r.caller);
    return providersIndexFor(r, path);
  }
  // The network mirror's folder is set by the mirror's config, so it is found here rather than in the route table.
  const provider = await providerFile(r, path);
  if (provider !== undefined) return provider ?? undefined;
  const segments = path === '' ? [] : path.split('/');
  if (segments.some((s) => s.startsWith('.'))) throw notFound();
  if (access && !PAGE_FILES.has(path)) {
    const caller = (r.caller = access.caller(r.req));
    r.index = access.view(r.index, caller);
    if (path === BROWSE_INDEX_FILE) return { payload: await browseIndexFor(r) };
    if (!caller.readers.everything) {
      access.refuse(r.req, caller.label, `${path} is not readable by this caller`);
      throw notFound();
    }
  }
  await r.registry.serveFile(r.req, r.res, path, { 'Cache-Control': access ? CACHE_PRIVATE : CACHE_SHORT });
  return undefined;
}

interface BrowseIndex {
  recent: RecentRow[];
}

/**
 * The browse page's index with only the modules the caller may read, rows
 * inline rather than a file per namespace, and the caller's own most recent
 * versions (a mirror written before modules had states has only the global
 * list, then filtered).
 */
async function browseIndexFor(r: RouteRequest) {
  const full = await r.registry.mirror.document(BROWSE_INDEX_FILE);
  return cachedAnswer(r, () => {
    const { namespaces: _all, modules: _rows, ...head } = JSON.parse(full.body.toString('utf8')) as BrowseIndex & { namespaces?: unknown; modules?: unknown };
    const modules = r.index.modules;
    const dated = modules.filter((m) => m.recent.length > 0);
    const recent =
      dated.length > 0
        ? recentVersions(dated.map((m) => ({ module: m.key, versions: m.recent }))).map((v) => [...v.module.split('/'), v.version, v.published_at])
        : head.recent.filter((row) => r.index.byKey.has(row.slice(0, 3).join('/')));
    return jsonPayload({ ...head, modules: modules.map((m) => browseRow(m.summary, m.versions.length, m.calls)), recent });
  });
}
