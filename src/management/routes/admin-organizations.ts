// Spec 4.3 and 3.3: site-administrator management of organizations and of
// module and provider sharing between them.

import type { IncomingMessage } from 'node:http';
import { organizationResource, userResource } from '../documents.js';
import { badRequest, includesOf, invalid, notFound, pageLinksAndMeta, paginate, readBody, resourceBody, type Reply } from '../jsonapi.js';
import { MirrorError } from '../../errors.js';
import { setConsumers, sharingConsequences, type Shared } from '../sharing.js';
import type { Store } from '../store.js';
import type { Data, Organization } from '../types.js';

const BASE = '/api/v2/admin/organizations';

function findOrganization(data: Data, name: string): Organization {
  const org = data.organizations.find((o) => o.name === name);
  if (!org) throw notFound();
  return org;
}

function booleanParam(query: URLSearchParams, name: string): boolean | undefined {
  const raw = query.get(name);
  if (raw === null || raw === '') return undefined;
  if (raw !== 'true' && raw !== 'false') throw badRequest(`${name} must be true or false, got "${raw}".`);
  return raw === 'true';
}

const sharesModules = (o: Organization) => o.globalModuleSharing || o.moduleConsumers.length > 0;
const sharesProviders = (o: Organization) => o.globalProviderSharing || o.providerConsumers.length > 0;

function ownersIncluded(data: Data, orgs: Organization[]) {
  const ids = [...new Set(orgs.flatMap((o) => o.owners))];
  return data.users.filter((u) => ids.includes(u.id)).map((u) => userResource(u, { self: false }));
}

const includesOwners = (query: URLSearchParams) => includesOf(query, ['owners']).length > 0;

export function listOrganizations(data: Data, query: URLSearchParams): Reply {
  const contains = (value: string, needle: string | null) => needle === null || value.toLowerCase().includes(needle.toLowerCase());
  const q = query.get('q');
  const moduleProducer = booleanParam(query, 'filter[module_producer]');
  const providerProducer = booleanParam(query, 'filter[provider_producer]');
  const matching = data.organizations.filter((o) => {
    // q searches name and e-mail, and takes precedence over q[name] and q[email], which must both match.
    const text = q !== null ? contains(o.name, q) || contains(o.email, q) : contains(o.name, query.get('q[name]')) && contains(o.email, query.get('q[email]'));
    return (
      text &&
      (moduleProducer === undefined || sharesModules(o) === moduleProducer) &&
      (providerProducer === undefined || sharesProviders(o) === providerProducer)
    );
  });
  const page = paginate(matching, query);
  const paging = pageLinksAndMeta(page, BASE, query);
  return {
    status: 200,
    document: {
      data: page.items.map(organizationResource),
      ...(includesOwners(query) ? { included: ownersIncluded(data, page.items) } : {}),
      links: paging.links,
      meta: {
        ...paging.meta,
        'status-counts': {
          total: matching.length,
          active: matching.filter((o) => !o.isDisabled).length,
          disabled: matching.filter((o) => o.isDisabled).length,
        },
      },
    },
  };
}

export function showOrganization(data: Data, name: string, query: URLSearchParams): Reply {
  const org = findOrganization(data, name);
  return { status: 200, document: { data: organizationResource(org), ...(includesOwners(query) ? { included: ownersIncluded(data, [org]) } : {}) } };
}

const BOOLEANS = {
  'access-beta-tools': 'accessBetaTools',
  'global-module-sharing': 'globalModuleSharing',
  'global-provider-sharing': 'globalProviderSharing',
  'is-disabled': 'isDisabled',
} as const;
/** Deprecated names first, so the current name wins when both are sent. */
const DURATIONS = [
  ['terraform-build-worker-apply-timeout', 'applyTimeout'],
  ['terraform-build-worker-plan-timeout', 'planTimeout'],
  ['apply-timeout', 'applyTimeout'],
  ['plan-timeout', 'planTimeout'],
] as const;
const GO_DURATION = /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/;

/** Checks every attribute before anything changes: a 422 changes nothing. */
function organizationChanges(attributes: Record<string, unknown>): Partial<Organization> {
  const changes: Partial<Organization> = {};
  const pointer = (name: string) => `/data/attributes/${name}`;
  for (const [name, key] of Object.entries(BOOLEANS)) {
    if (!(name in attributes)) continue;
    if (typeof attributes[name] !== 'boolean') throw invalid(`${name} must be true or false.`, pointer(name));
    changes[key] = attributes[name];
  }
  for (const [name, key] of DURATIONS) {
    if (!(name in attributes)) continue;
    const value = attributes[name];
    if (value !== null && (typeof value !== 'string' || !GO_DURATION.test(value))) {
      throw invalid(`${name} must be a duration such as "24h" or "90m", or null.`, pointer(name));
    }
    changes[key] = value;
  }
  if ('workspace-limit' in attributes) {
    const value = attributes['workspace-limit'];
    if (value !== null && (typeof value !== 'number' || !Number.isInteger(value) || value < 0)) {
      throw invalid('workspace-limit must be an integer of 0 or more, or null.', pointer('workspace-limit'));
    }
    changes.workspaceLimit = value;
  }
  return changes;
}

export async function updateOrganization(store: Store, name: string, req: IncomingMessage): Promise<Reply> {
  findOrganization(store.read(), name);
  // go-tfe sends an empty type on this endpoint; a wrong non-empty one is still refused.
  const changes = organizationChanges(resourceBody(await readBody(req), 'organizations', { allowEmptyType: true }));
  const updated = await store.mutate(['organizations'], (data) => {
    const org = findOrganization(data, name);
    Object.assign(org, changes);
    // Spec 3.3: turning global sharing on disables the configured consumers.
    sharingConsequences(org, changes);
    return org;
  });
  return { status: 200, document: { data: organizationResource(updated) } };
}

export async function deleteOrganization(store: Store, name: string): Promise<Reply> {
  findOrganization(store.read(), name);
  await store.mutate(['organizations', 'teams', 'tokens', 'runs', 'taskStages', 'taskResults', 'registryModules', 'moduleVersions'], (data) => {
    findOrganization(data, name);
    data.organizations = data.organizations.filter((o) => o.name !== name);
    for (const o of data.organizations) {
      o.moduleConsumers = o.moduleConsumers.filter((c) => c !== name);
      o.providerConsumers = o.providerConsumers.filter((c) => c !== name);
    }
    const teams = new Set(data.teams.filter((t) => t.organization === name).map((t) => t.id));
    data.teams = data.teams.filter((t) => !teams.has(t.id));
    data.tokens = data.tokens.filter((t) => !(t.kind === 'organization' && t.subject === name) && !(t.kind === 'team' && teams.has(t.subject)));
    const runs = new Set(data.runs.filter((r) => r.organization === name).map((r) => r.id));
    data.runs = data.runs.filter((r) => !runs.has(r.id));
    const stages = new Set(data.taskStages.filter((s) => runs.has(s.run)).map((s) => s.id));
    data.taskStages = data.taskStages.filter((s) => !stages.has(s.id));
    data.taskResults = data.taskResults.filter((r) => !stages.has(r.taskStage));
    // Modules made through the API that never reached the mirror go with it; the mirror's own stay, as the mirror is not the API's to change here.
    data.registryModules = data.registryModules.filter((m) => m.organization !== name);
    data.moduleVersions = data.moduleVersions.filter((v) => !v.module.startsWith(`${name}/`));
  });
  return { status: 204 };
}

export function listConsumers(data: Data, name: string, kind: 'module' | 'provider', query: URLSearchParams): Reply {
  const org = findOrganization(data, name);
  const names = kind === 'module' ? org.moduleConsumers : org.providerConsumers;
  const page = paginate(
    data.organizations.filter((o) => names.includes(o.name)),
    query,
  );
  return {
    status: 200,
    document: {
      data: page.items.map(organizationResource),
      ...pageLinksAndMeta(page, `${BASE}/${encodeURIComponent(name)}/relationships/${kind}-consumers`, query),
    },
  };
}

/**
 * Sets the module (or provider) consumers; this turns that kind's global
 * sharing off (spec 3.3). The spec shows the provider list's GET only: its
 * PATCH takes the module twin's body.
 */
export async function updateConsumers(store: Store, name: string, kind: Shared, req: IncomingMessage): Promise<Reply> {
  findOrganization(store.read(), name);
  const body = await readBody(req);
  const list = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(list)) throw invalid('data must be a list of {"type": "organizations", "id": NAME}.', '/data');
  const names: string[] = list.map((item, i) => {
    const ref = item as { type?: unknown; id?: unknown } | null;
    if (ref?.type !== 'organizations') throw invalid('type must be "organizations".', `/data/${i}/type`);
    if (typeof ref.id !== 'string') throw invalid('id must be an organization name.', `/data/${i}/id`);
    return ref.id;
  });
  try {
    await setConsumers(store, name, kind, names);
  } catch (error) {
    // Deleted meanwhile: the same 404 as before.
    if (error instanceof MirrorError && error.code === 'NOT_FOUND') throw notFound();
    throw error;
  }
  return { status: 204 };
}
