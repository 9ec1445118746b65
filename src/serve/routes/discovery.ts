// Spec 4.4: service discovery. With a base URL the server is reached at, the
// document says so; otherwise it is the one the build wrote. A private
// registry also announces terraform login (login.v1), and answers without a
// token: `terraform login` asks before it has one, and service URLs are no
// secret. A token that works gets its own view (whether providers.v1 is there).

import { jsonPayload } from '../../http/payload.js';
import { discoveryDocument, loginService } from '../../protocol/documents.js';
import { DISCOVERY_FILE } from '../../protocol/paths.js';
import type { Answer, RouteRequest } from '../registry.js';

/** GET /.well-known/terraform.json */
export async function discovery({ registry, index, req }: RouteRequest): Promise<Answer> {
  const { access } = registry;
  if (!access) {
    if (!registry.baseUrl) return { payload: await registry.mirror.document(DISCOVERY_FILE) };
    return { payload: jsonPayload(discoveryDocument(registry.baseUrl, { providers: index.providers.registry.size > 0 })) };
  }
  const caller = access.callerOrNone(req);
  const seen = caller ? access.view(index, caller) : index;
  const services = registry.baseUrl
    ? discoveryDocument(registry.baseUrl, { providers: seen.providers.registry.size > 0 })
    : (JSON.parse((await registry.mirror.document(DISCOVERY_FILE)).body.toString('utf8')) as Record<string, unknown>);
  if (!registry.baseUrl && caller && seen.providers.registry.size === 0) delete services['providers.v1'];
  return { payload: jsonPayload({ ...services, 'login.v1': loginService(registry.baseUrl) }) };
}
