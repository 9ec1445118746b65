// Spec 2.9: a module's download counts, live from the server's counter
// rather than the zeros the build wrote.

import { jsonPayload } from '../../http/payload.js';
import { downloadsSummaryDocument } from '../../protocol/documents.js';
import { CACHE_NONE } from '../../protocol/headers.js';
import { addressOf, moduleOf, type Answer, type RouteRequest } from '../registry.js';

/** GET /v2/modules/:namespace/:name/:provider/downloads/summary */
export function downloadsSummary(r: RouteRequest): Answer {
  const counts = r.registry.downloads.windows(moduleOf(r).key);
  return { payload: jsonPayload(downloadsSummaryDocument(addressOf(r), counts)), headers: { 'Cache-Control': CACHE_NONE } };
}
