// Spec 4.4: service discovery. With a base URL the server is reached at, the
// document says so; otherwise it is the one the build wrote.

import { jsonPayload } from '../../http/payload.js';
import { discoveryDocument } from '../../protocol/documents.js';
import { DISCOVERY_FILE } from '../../protocol/paths.js';
import type { Answer, RouteRequest } from '../registry.js';

/** GET /.well-known/terraform.json */
export async function discovery({ registry, index }: RouteRequest): Promise<Answer> {
  if (!registry.baseUrl) return { payload: await registry.mirror.document(DISCOVERY_FILE) };
  return { payload: jsonPayload(discoveryDocument(registry.baseUrl, { providers: index.providers.registry.size > 0 })) };
}
