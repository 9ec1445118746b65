// The registry's route table (spec 4.4, 2.9): a path pattern
// (http/route-path.ts) and a handler for each resource, first match wins. Every registry answer gets
// the short cache lifetime unless its route says otherwise.

import { matchRoutePath, routePath } from '../../http/route-path.js';
import { notFound, type Answer, type RouteRequest } from '../registry.js';
import { discovery } from './discovery.js';
import { downloadsSummary } from './downloads-summary.js';
import { listAll, listNamespace, listProviders, search } from './listings.js';
import { archive, belowModule, download, downloadLatest, latestDetail, versionDetail, versions } from './modules.js';
import { providerDownload, providerVersions } from './providers.js';
import { staticFile } from './static-files.js';

type Handler = (r: RouteRequest) => Answer | undefined | Promise<Answer | undefined>;

interface Route {
  /** The route's class, as /metrics and the JSON log name it: a bounded set, never a path. */
  name: string;
  pattern: string[];
  handler: Handler;
  /** In private mode, the handler decides who may have it (archives: a signature or a token; the browse page's files). */
  ownAccess?: boolean;
}

const route = (name: string, pattern: string, handler: Handler, ownAccess = false): Route => ({
  name,
  pattern: routePath(pattern),
  handler,
  ownAccess,
});

const MODULE = 'v1/modules/:namespace/:name/:provider';

const ROUTES: Route[] = [
  route('discovery', '.well-known/terraform.json', discovery, true),
  route('modules_list', 'v1/modules', listAll),
  route('search', 'v1/modules/search', search),
  route('namespace_list', 'v1/modules/:namespace', listNamespace),
  route('providers_list', 'v1/modules/:namespace/:name', listProviders),
  route('module_detail', MODULE, latestDetail),
  route('versions', `${MODULE}/versions`, versions),
  route('download_latest', `${MODULE}/download`, downloadLatest),
  route('version_detail', `${MODULE}/:version`, versionDetail),
  route('download', `${MODULE}/:version/download`, download),
  route('archive', `${MODULE}/:version/:file`, archive, true),
  route('module_other', `${MODULE}/*rest`, belowModule),
  route('downloads_summary', 'v2/modules/:namespace/:name/:provider/downloads/summary', downloadsSummary),
  route('provider_versions', 'v1/providers/:namespace/:type/versions', providerVersions),
  route('provider_download', 'v1/providers/:namespace/:type/:version/download/:os/:arch', providerDownload),
  route('provider_other', 'v1/providers/*rest', () => {
    throw notFound();
  }),
  // The API's paths are never files of the tree, even where one would match.
  route('module_other', 'v2/modules/*rest', () => {
    throw notFound();
  }),
  route('static', '*path', staticFile, true),
];

/** The route for decoded path segments, and what its pattern captured. */
export function findRoute(segments: string[]): { name: string; handler: Handler; params: Record<string, string>; ownAccess: boolean } {
  const path = asProtocolPath(segments);
  for (const { name, pattern, handler, ownAccess = false } of ROUTES) {
    const params = matchRoutePath(pattern, path);
    if (params) return { name, handler, params, ownAccess };
  }
  // Unreachable: `*path` matches every path.
  throw notFound();
}

/**
 * `v1/modules/…/index.json` is where a document sits in the tree; the browse
 * page asks for that, which any file host has. It names the same resource
 * as the protocol path of its folder.
 */
function asProtocolPath(segments: string[]): string[] {
  const isModules = segments[0] === 'v1' && segments[1] === 'modules';
  return isModules && segments.at(-1) === 'index.json' ? segments.slice(0, -1) : segments;
}
