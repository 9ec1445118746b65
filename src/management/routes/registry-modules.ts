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
import { addressKey, isValidName } from '../../protocol/paths.js';
import type { ModuleAddress } from '../../types.js';
import { canAccess, canManageModules, newId, principalLabel, type Principal } from '../auth.js';
import { invalid, notFound, pageLinksAndMeta, paginate, readBody, resourceBody, type Reply } from '../jsonapi.js';
import {
  manageableOrganization,
  moduleResource,
  moduleResourceId,
  moduleView,
  modulesOfOrganization,
  readableOrganization,
  refuseDuringUpload,
  type RegistryHooks,
} from '../registry.js';
import type { Store } from '../store.js';
import type { Data } from '../types.js';

type ReadArgs = { data: Data; principal: Principal; params: string[]; query: URLSearchParams; registry: RegistryHooks | undefined };
type WriteArgs = { store: Store; principal: Principal; params: string[]; req: IncomingMessage; registry: RegistryHooks | undefined };

// go-tfe v1 RegistryModules.Create: POST organizations/:org/registry-modules with
// {"data":{"type":"registry-modules","attributes":{"name","provider","registry-name":"private"}}}.
export async function createModule({ store, principal, params, req, registry }: WriteArgs): Promise<Reply> {
  const organization = params[0]!;
  manageableOrganization(store.read(), principal, organization, registry);
  const attributes = resourceBody(await readBody(req), 'registry-modules');
  const address = { namespace: organization, name: nameAttribute(attributes, 'name'), provider: nameAttribute(attributes, 'provider') };
  const registryName = attributes['registry-name'] ?? 'private';
  if (registryName !== 'private') throw invalid('registry-name must be "private": this registry holds private modules only.', '/data/attributes/registry-name');
  const namespace = attributes['namespace'];
  if (namespace !== undefined && namespace !== null && namespace !== '' && namespace !== organization) {
    throw invalid(`A private module's namespace is its organization, "${organization}".`, '/data/attributes/namespace');
  }
  const now = new Date().toISOString();
  await store.mutate(['registryModules'], (data) => {
    if (moduleView(data, registry, address)) throw invalid(`The module ${addressKey(address)} already exists.`, '/data/attributes/name');
    data.registryModules.push({ id: newId('mod'), organization, ...address, createdAt: now, updatedAt: now });
  });
  const data = store.read();
  return { status: 201, document: { data: moduleResource(moduleView(data, registry, address)!, true) } };
}

function nameAttribute(attributes: Record<string, unknown>, name: string): string {
  const value = attributes[name];
  if (typeof value !== 'string' || !isValidName(value))
    throw invalid(`${name} must be letters, digits, "-" and "_" (at most 64), got ${JSON.stringify(value)}.`, `/data/attributes/${name}`);
  return value;
}

// go-tfe v1 RegistryModules.List: GET organizations/:org/registry-modules, paged, with
// optional q, filter[provider], filter[registry_name], filter[organization_name].
export function listModules({ data, principal, params, query, registry }: ReadArgs): Reply {
  const org = readableOrganization(data, principal, params[0]!);
  const q = (query.get('q') ?? '').toLowerCase();
  const provider = query.get('filter[provider]');
  const registryName = query.get('filter[registry_name]');
  const owner = query.get('filter[organization_name]');
  const views = modulesOfOrganization(data, registry, org.name).filter(
    (v) =>
      (q === '' || addressKey(v.address).toLowerCase().includes(q)) &&
      (provider === null || provider === '' || v.address.provider === provider) &&
      (registryName === null || registryName === '' || registryName === 'private') &&
      (owner === null || owner === '' || owner === org.name),
  );
  const page = paginate(views, query);
  const canManage = canManageModules(data, principal, org);
  return {
    status: 200,
    document: {
      data: page.items.map((v) => moduleResource(v, canManage)),
      ...pageLinksAndMeta(page, `/api/v2/organizations/${org.name}/registry-modules`, query),
    },
  };
}

// go-tfe v1 RegistryModules.Read: GET organizations/:org/registry-modules/private/:namespace/:name/:provider.
export function readModule({ data, principal, params, registry }: ReadArgs): Reply {
  const [organization, namespace, name, provider] = params as [string, string, string, string];
  const org = readableOrganization(data, principal, organization);
  const view = namespace === organization ? moduleView(data, registry, { namespace, name, provider }) : undefined;
  if (!view) throw notFound();
  return { status: 200, document: { data: moduleResource(view, canManageModules(data, principal, org)) } };
}

// go-tfe v1 RegistryModules.Read with only an id: GET registry-modules/:id. The id is
// looked up among the organizations the caller may read, so a stranger's id is the same 404.
export function readModuleById({ data, principal, params, registry }: ReadArgs): Reply {
  const id = params[0]!;
  for (const org of data.organizations) {
    if (!canAccess(data, principal, org)) continue;
    const view = modulesOfOrganization(data, registry, org.name).find((v) => moduleResourceId(v) === id);
    if (view) return { status: 200, document: { data: moduleResource(view, canManageModules(data, principal, org)) } };
  }
  throw notFound();
}

// go-tfe v1 RegistryModules.DeleteProvider (.../private/:ns/:name/:provider) and DeleteByName
// (.../private/:ns/:name): every version goes from the mirror, each on record in its ledger;
// refused while a version of the module is being uploaded (refuseDuringUpload).
export async function deleteModule({ store, principal, params, registry }: WriteArgs): Promise<Reply> {
  const [organization, namespace, name, provider] = params as [string, string, string, string | undefined];
  const { hooks } = manageableOrganization(store.read(), principal, organization, registry);
  const data = store.read();
  const matches = (key: string) => (provider === undefined ? key.startsWith(`${namespace}/${name}/`) : key === `${namespace}/${name}/${provider}`);
  const views = namespace === organization ? modulesOfOrganization(data, registry, organization).filter((v) => matches(addressKey(v.address))) : [];
  if (views.length === 0) throw notFound();
  // The records go first, in the change that refuses a module with a version being uploaded; then the mirror's versions, on record.
  await store.mutate(['registryModules', 'moduleVersions'], (d) => {
    refuseDuringUpload(d, (v) => matches(v.module));
    d.registryModules = d.registryModules.filter((m) => !matches(addressKey(m)));
    d.moduleVersions = d.moduleVersions.filter((v) => !matches(v.module));
  });
  if (hooks.modulesOf(namespace).some(matches))
    await hooks.remove({ namespace, name, ...(provider !== undefined ? { provider } : {}) }, undefined, principalLabel(principal));
  return { status: 204 };
}
export type DeprecateHook = (address: ModuleAddress, version: string, deprecation: Deprecation | null) => Promise<void>;

const POINTER = '/data/attributes/deprecation';

export async function updateModuleVersion(
  store: Store,
  principal: Principal,
  params: string[],
  req: IncomingMessage,
  deprecate: DeprecateHook | undefined,
): Promise<Reply> {
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
          deprecation: deprecation
            ? { 'deprecated-status': 'Deprecated', reason: deprecation.reason, link: deprecation.link }
            : { 'deprecated-status': 'Undeprecated', reason: null, link: null },
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
  if (link !== null && link !== '' && (typeof link !== 'string' || checkDeprecationLink(link) !== undefined))
    throw invalid('link must be an http(s) URL, or null.', `${POINTER}/link`);
  return { reason, link: link === '' ? null : link };
}
