// HCP Terraform's private registry modules (API "Registry modules") as the
// management shim sees them: a module is one the served mirror holds, or one
// made through the API that has no version yet; a version is one the mirror
// holds (status ok), or one made through the API and not (yet) in it. The
// mirror itself is written by the hooks the server passes in: this folder
// knows the data folder, not the mirror.

import type { IncomingMessage } from 'node:http';
import { createHash } from 'node:crypto';
import { MirrorError } from '../errors.js';
import { canAccess, canManageModules, type Principal } from './auth.js';
import { notFound } from './jsonapi.js';
import type { Data, ModuleVersionEntry, Organization, RegistryModuleEntry } from './types.js';
import { addressKey } from '../protocol/paths.js';
import type { ModuleAddress } from '../types.js';

/** What the registry-module routes need from the server that serves the mirror. */
export interface RegistryHooks {
  /** The versions the served mirror holds of `namespace/name/provider`, newest first; undefined for none. */
  published(key: string): string[] | undefined;
  /** The `namespace/name/provider` keys the served mirror holds under a namespace. */
  modulesOf(namespace: string): string[];
  /** Why the mirror cannot be written (served read-only), or undefined. */
  readOnly(): string | undefined;
  /** The absolute, signed, short-lived URL a client PUTs an upload to; `path` is its path. */
  uploadUrl(path: string, req: IncomingMessage): string;
  /** Whether `path` with this query carries a valid signature from uploadUrl. */
  checkUpload(path: string, query: URLSearchParams): 'valid' | 'absent' | 'expired' | 'invalid';
  /** Unpacks the body (a tar.gz) and publishes it as this version, as `modmirror publish` does; throws what went wrong. */
  ingest(address: ModuleAddress, version: string, body: IncomingMessage): Promise<void>;
  /** Removes versions (all of the module when undefined; all providers of namespace/name when no provider), on record as `by`. */
  remove(target: { namespace: string; name: string; provider?: string }, version: string | undefined, by: string): Promise<void>;
}

/** The organization a private-registry path names, when the caller may read it; else the 404 HCP gives. */
export function readableOrganization(data: Data, principal: Principal, name: string): Organization {
  const org = data.organizations.find((o) => o.name === name);
  if (!org || !canAccess(data, principal, org)) throw notFound();
  return org;
}

/** The same, for a change: readers who may not manage modules get the same 404 as strangers. */
export function manageableOrganization(
  data: Data,
  principal: Principal,
  name: string,
  hooks: RegistryHooks | undefined,
): { org: Organization; hooks: RegistryHooks } {
  const org = readableOrganization(data, principal, name);
  if (!canManageModules(data, principal, org) || !hooks) throw notFound();
  const why = hooks.readOnly();
  if (why !== undefined) {
    throw new MirrorError('FORBIDDEN', `This server serves its mirror read-only (${why}), so modules cannot be published or deleted through it.`, {
      hint: 'Publish with modmirror publish where the mirror is written, or serve a writable mirror.',
    });
  }
  return { org, hooks };
}

/** One module of an organization as the API shows it: its API entry and the mirror's versions. */
export interface ModuleView {
  address: ModuleAddress;
  entry: RegistryModuleEntry | undefined;
  /** Newest first. */
  published: string[];
  /** Versions made through the API, in the order made. */
  records: ModuleVersionEntry[];
}

export function moduleView(data: Data, hooks: RegistryHooks | undefined, address: ModuleAddress): ModuleView | undefined {
  const key = addressKey(address);
  const entry = data.registryModules.find((m) => addressKey(m) === key);
  const published = hooks?.published(key) ?? [];
  if (!entry && published.length === 0) return undefined;
  return { address, entry, published, records: data.moduleVersions.filter((v) => v.module === key) };
}

/** Every module of an organization's namespace, by name then provider. */
export function modulesOfOrganization(data: Data, hooks: RegistryHooks | undefined, organization: string): ModuleView[] {
  const keys = new Set([...data.registryModules.filter((m) => m.namespace === organization).map(addressKey), ...(hooks?.modulesOf(organization) ?? [])]);
  return [...keys].sort().map((key) => {
    const [namespace = '', name = '', provider = ''] = key.split('/');
    return moduleView(data, hooks, { namespace, name, provider })!;
  });
}

/**
 * The ids of the versions whose upload this process is taking in: the PUT adds
 * its version in the same change to the data that claims it (`reg_ingressing`)
 * and takes it out in the one that records how the upload ended, so a delete,
 * deciding in a change of its own, sees one or the other. A `reg_ingressing`
 * record missing here was left by a server that stopped mid-upload, and may be
 * deleted. Ids are random, so one set serves every store of the process.
 */
export const uploadsInProgress = new Set<string>();

/**
 * A delete of versions (DeleteVersion, DeleteProvider, DeleteByName) while an
 * upload of one of them is in progress is refused, 409, and changes nothing:
 * the upload goes on and lands, its PUT answers 200, and a delete asked again
 * once it has finished removes the version on record. Neither waiting nor
 * cancelling: the upload's body comes at its client's pace (up to the
 * server's request timeout), so a waiting delete would hang on another
 * client, and a cancelled upload would fail for its sender after it sent the
 * whole module. HCP Terraform's API, too, answers 409 to a change the
 * resource's current state does not allow. Called inside the change that
 * deletes, so no upload claims a version between the check and the delete.
 */
export function refuseDuringUpload(data: Data, matches: (record: ModuleVersionEntry) => boolean): void {
  const busy = data.moduleVersions.find((v) => matches(v) && uploadsInProgress.has(v.id));
  if (busy)
    throw new MirrorError(
      'CONFLICT',
      `${busy.module} ${busy.version} cannot be deleted now: its upload is in progress. Delete it once the upload has finished (the version then reads ok or reg_ingress_failed).`,
    );
}

/** A version's status: the mirror's word first (a version there is `ok`), then its API record's. */
export function versionStatus(view: ModuleView, version: string): { status: string; error?: string; record?: ModuleVersionEntry } | undefined {
  const record = view.records.find((r) => r.version === version);
  if (view.published.includes(version)) return { status: 'ok', ...(record ? { record } : {}) };
  if (!record || record.status === 'ok') return undefined;
  return { status: record.status, ...(record.error !== undefined ? { error: record.error } : {}), record };
}

/** An id for a module or version the mirror holds that was not made through the API: stable, so clients can keep it. */
export function stableId(prefix: string, key: string): string {
  return `${prefix}-${createHash('sha256').update(key).digest('base64url').replace(/[-_]/g, '').slice(0, 16)}`;
}

export function moduleSelf(a: ModuleAddress): string {
  return `/api/v2/organizations/${a.namespace}/registry-modules/private/${a.namespace}/${a.name}/${a.provider}`;
}

/** A module's id: its API entry's, or a stable one for a module only the mirror holds. */
export const moduleResourceId = (view: ModuleView): string => view.entry?.id ?? stableId('mod', addressKey(view.address));

/** A `registry-modules` resource (go-tfe's RegistryModule). */
export function moduleResource(view: ModuleView, canManage: boolean) {
  const { address, entry } = view;
  const statuses = [
    ...view.published.map((version) => ({ version, status: 'ok' })),
    ...view.records
      .filter((r) => r.status !== 'ok' && !view.published.includes(r.version))
      .map((r) => ({ version: r.version, status: r.status, ...(r.error !== undefined ? { error: r.error } : {}) })),
  ];
  const oldest = view.records[0]?.createdAt;
  return {
    id: moduleResourceId(view),
    type: 'registry-modules',
    attributes: {
      name: address.name,
      namespace: address.namespace,
      provider: address.provider,
      'registry-name': 'private',
      status: view.published.length > 0 ? 'setup_complete' : 'pending',
      'version-statuses': statuses,
      'no-code': false,
      'publishing-mechanism': null,
      'vcs-repo': null,
      'created-at': entry?.createdAt ?? oldest ?? null,
      'updated-at': entry?.updatedAt ?? oldest ?? null,
      permissions: { 'can-delete': canManage, 'can-resync': false, 'can-retry': false },
    },
    relationships: { organization: { data: { id: address.namespace, type: 'organizations' } } },
    links: { self: moduleSelf(address) },
  };
}

/** A `registry-module-versions` resource (go-tfe's RegistryModuleVersion); `upload` only while it waits for one. */
export function versionResource(view: ModuleView, version: string, status: { status: string; error?: string; record?: ModuleVersionEntry }, upload?: string) {
  const { record } = status;
  return {
    id: record?.id ?? stableId('modver', `${addressKey(view.address)}@${version}`),
    type: 'registry-module-versions',
    attributes: {
      source: 'tfe-api',
      status: status.status,
      version,
      'commit-sha': record?.commitSha ?? null,
      ...(status.error !== undefined ? { error: status.error } : {}),
      'created-at': record?.createdAt ?? null,
      'updated-at': record?.updatedAt ?? null,
    },
    relationships: { 'registry-module': { data: { id: moduleResourceId(view), type: 'registry-modules' } } },
    links: { self: `${moduleSelf(view.address)}/version?module_version=${encodeURIComponent(version)}`, ...(upload ? { upload } : {}) },
  };
}
