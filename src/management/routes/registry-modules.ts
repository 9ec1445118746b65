// HCP Terraform's module version deprecation (API "Manage module versions"):
// PATCH /organizations/:org/registry-modules/private/:org/:name/:provider/:version
// with {"data": {"type": "module-versions", "attributes": {"deprecation":
// {"deprecated-status": "Deprecated" | "Undeprecated", "reason", "link"}}}}.
// The namespace of a private module is its organization. Site administrators
// and the organization's owners may; anyone else gets the 404 HCP Terraform
// gives ("not authorized ... or does not exist"). The mirror is written by the
// hook the server passes in, so this folder knows nothing of the mirror.

import type { IncomingMessage } from 'node:http';
import { checkDeprecationLink, type Deprecation } from '../../mirror/deprecations.js';
import type { ModuleAddress } from '../../types.js';
import type { Principal } from '../auth.js';
import { invalid, notFound, readBody, resourceBody } from '../jsonapi.js';
import type { Store } from '../store.js';

type Reply = { status: number; document?: unknown };
export type DeprecateHook = (address: ModuleAddress, version: string, deprecation: Deprecation | null) => Promise<void>;

const POINTER = '/data/attributes/deprecation';

export async function updateModuleVersion(store: Store, principal: Principal, params: string[], req: IncomingMessage, deprecate: DeprecateHook | undefined): Promise<Reply> {
  const [organization, namespace, name, provider, version] = params as [string, string, string, string, string];
  const org = store.read().organizations.find((o) => o.name === organization);
  const allowed = principal.kind === 'user' && (principal.user.isSiteAdmin || (org !== undefined && org.owners.includes(principal.user.id)));
  if (!org || org.isDisabled || namespace !== organization || !allowed || !deprecate) throw notFound();
  const deprecation = deprecationOf(resourceBody(await readBody(req), 'module-versions'));
  try {
    await deprecate({ namespace, name, provider }, version, deprecation);
  } catch (error) {
    // A module or version the mirror lacks is the same 404 as one the caller may not change.
    if ((error as { code?: string }).code === 'NOT_FOUND') throw notFound();
    throw error;
  }
  return {
    status: 200,
    document: {
      data: {
        id: `${namespace}/${name}/${provider}/${version}`,
        type: 'module-versions',
        attributes: {
          version,
          deprecation: deprecation ? { 'deprecated-status': 'Deprecated', reason: deprecation.reason, link: deprecation.link } : { 'deprecated-status': 'Undeprecated', reason: null, link: null },
        },
      },
    },
  };
}

/** The attributes' deprecation, checked whole before anything changes: a 422 changes nothing. */
function deprecationOf(attributes: Record<string, unknown>): Deprecation | null {
  const value = attributes['deprecation'];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid('deprecation must be an object with deprecated-status.', POINTER);
  const d = value as Record<string, unknown>;
  const status = d['deprecated-status'];
  if (status === 'Undeprecated') return null;
  if (status !== 'Deprecated') throw invalid('deprecated-status must be "Deprecated" or "Undeprecated".', `${POINTER}/deprecated-status`);
  const reason = d['reason'];
  if (typeof reason !== 'string' || reason.trim() === '') throw invalid('reason must say why the version is deprecated.', `${POINTER}/reason`);
  const link = d['link'] ?? null;
  if (link !== null && link !== '' && (typeof link !== 'string' || checkDeprecationLink(link) !== undefined)) throw invalid('link must be an http(s) URL, or null.', `${POINTER}/link`);
  return { reason, link: link === '' ? null : (link as string | null) };
}
