// Everything that is not a protocol path is a file of the tree, served as is:
// the browse page and its scripts, the indexes, the manifest.

import { CACHE_SHORT } from '../../protocol/headers.js';
import { notFound, type Answer, type RouteRequest } from '../registry.js';
import { providerFile } from './providers.js';

/** GET /*path: a file of the tree; dot files (`.well-known` aside, which has its route) are not served. */
export async function staticFile(r: RouteRequest): Promise<Answer | undefined> {
  // The network mirror's folder is set by the mirror's config, so it is found here rather than in the route table.
  const provider = await providerFile(r, r.params['path']!);
  if (provider !== undefined) return provider ?? undefined;
  const segments = r.params['path'] === '' ? [] : r.params['path']!.split('/');
  if (segments.some((s) => s.startsWith('.'))) throw notFound();
  await r.registry.serveFile(r.req, r.res, r.params['path']!, { 'Cache-Control': CACHE_SHORT });
  return undefined;
}
