// HCP Terraform's registry module versions, for modules without a VCS
// connection (API "Registry modules": create a version, upload it, read it,
// delete it), as go-tfe v1 calls them. A new version is `pending` with a
// signed, short-lived, single-use `links.upload`; the PUT of a tar.gz there
// publishes it into the mirror through the server's hook (the same path as
// `modmirror publish`), after which it reads `ok`, or `reg_ingress_failed`
// with the error. Deleting a version removes it from the mirror on record;
// a delete during the version's upload is refused (registry.ts,
// refuseDuringUpload), and an upload after its version's delete publishes
// nothing.

import type { IncomingMessage } from 'node:http';
import { addressKey } from '../../protocol/paths.js';
import { MirrorError, messageOf } from '../../errors.js';
import { validVersion } from '../../version-order.js';
import { newId, principalLabel, type Principal } from '../auth.js';
import { badRequest, invalid, notFound, readBody, resourceBody, type Reply } from '../jsonapi.js';
import {
  manageableOrganization,
  moduleView,
  readableOrganization,
  refuseDuringUpload,
  uploadsInProgress,
  versionResource,
  versionStatus,
  type RegistryHooks,
} from '../registry.js';
import type { Store } from '../store.js';
import type { Data, ModuleVersionEntry } from '../types.js';

type ReadArgs = { data: Data; principal: Principal; params: string[]; query: URLSearchParams; registry: RegistryHooks | undefined };
type WriteArgs = { store: Store; principal: Principal; params: string[]; req: IncomingMessage; registry: RegistryHooks | undefined };

/** Where a version's upload goes: under /api/v2, answered without a token (the signature is the permission). */
export const uploadPath = (id: string) => `/api/v2/registry-module-versions/${id}/upload`;

/**
 * go-tfe v1 RegistryModules.CreateVersion posts `registry-modules/:org/:name/:provider/versions`
 * (params: org, name, provider); HCP's documented path is
 * `organizations/:org/registry-modules/private/:namespace/:name/:provider/versions`. Both land here.
 */
export async function createVersion({ store, principal, params, req, registry }: WriteArgs): Promise<Reply> {
  const [organization, namespace, name, provider] = (params.length === 3 ? [params[0], params[0], params[1], params[2]] : params) as [
    string,
    string,
    string,
    string,
  ];
  const { hooks } = manageableOrganization(store.read(), principal, organization, registry);
  const address = { namespace, name, provider };
  if (namespace !== organization || !moduleView(store.read(), registry, address)) throw notFound();
  const attributes = resourceBody(await readBody(req), 'registry-module-versions');
  const version = typeof attributes['version'] === 'string' ? validVersion(attributes['version']) : null;
  if (version === null)
    throw invalid(`version must be a semantic version such as 1.2.3, got ${JSON.stringify(attributes['version'])}.`, '/data/attributes/version');
  const commitSha = attributes['commit-sha'] ?? null;
  if (commitSha !== null && typeof commitSha !== 'string') throw invalid('commit-sha must be a string or null.', '/data/attributes/commit-sha');
  const now = new Date().toISOString();
  const record: ModuleVersionEntry = {
    id: newId('modver'),
    module: addressKey(address),
    version,
    commitSha,
    status: 'pending',
    createdAt: now,
    updatedAt: now,
  };
  await store.mutate(['moduleVersions'], (data) => {
    const view = moduleView(data, registry, address);
    if (!view) throw notFound();
    const current = versionStatus(view, version);
    if (current?.status === 'ok')
      throw invalid(
        `${addressKey(address)} ${version} is already published, and published versions are immutable: create a new version.`,
        '/data/attributes/version',
      );
    if (current && current.status !== 'reg_ingress_failed')
      throw invalid(`${addressKey(address)} ${version} already exists and waits for its upload (status ${current.status}).`, '/data/attributes/version');
    // A failed version may be made again: its record gives way to the new one.
    data.moduleVersions = data.moduleVersions.filter((v) => !(v.module === record.module && v.version === version));
    data.moduleVersions.push(record);
  });
  const view = moduleView(store.read(), registry, address)!;
  return { status: 201, document: { data: versionResource(view, version, { status: 'pending', record }, hooks.uploadUrl(uploadPath(record.id), req)) } };
}

// go-tfe v1 RegistryModules.ReadVersion: GET .../private/:ns/:name/:provider/version?module_version=V.
export function readVersion({ data, principal, params, query, registry }: ReadArgs): Reply {
  const [organization, namespace, name, provider] = params as [string, string, string, string];
  readableOrganization(data, principal, organization);
  const version = query.get('module_version');
  if (version === null || version === '') throw badRequest('module_version is required: .../version?module_version=1.2.3.');
  const view = namespace === organization ? moduleView(data, registry, { namespace, name, provider }) : undefined;
  const status = view && versionStatus(view, version);
  if (!view || !status) throw notFound();
  return { status: 200, document: { data: versionResource(view, version, status) } };
}

// go-tfe v1 RegistryModules.DeleteVersion: DELETE .../private/:ns/:name/:provider/:version, no body.
export async function deleteVersion({ store, principal, params, registry }: WriteArgs): Promise<Reply> {
  const [organization, namespace, name, provider, version] = params as [string, string, string, string, string];
  const { hooks } = manageableOrganization(store.read(), principal, organization, registry);
  const address = { namespace, name, provider };
  const view = namespace === organization ? moduleView(store.read(), registry, address) : undefined;
  const status = view && versionStatus(view, version);
  if (!view || !status) throw notFound();
  const key = addressKey(address);
  // The record goes first, in the change that refuses a version being uploaded; then the mirror's version, on record.
  await store.mutate(['moduleVersions'], (data) => {
    refuseDuringUpload(data, (v) => v.module === key && v.version === version);
    data.moduleVersions = data.moduleVersions.filter((v) => !(v.module === key && v.version === version));
  });
  if (hooks.published(key)?.includes(version)) await hooks.remove(address, version, principalLabel(principal));
  return { status: 204 };
}

/**
 * The PUT to `links.upload` (go-tfe's Upload/UploadTarGzip: no Authorization,
 * Content-Type application/octet-stream; curl's `--data-binary @module.tar.gz`).
 * The first PUT claims the version, so the URL works once; a mirror too busy
 * to take it (another writer's lock) leaves it pending, to be tried again.
 * A version deleted before its upload is a 404 saying so; one that landed is
 * a 200, whatever happened to its record meanwhile.
 */
export async function uploadVersion(
  store: Store,
  id: string,
  req: IncomingMessage,
  query: URLSearchParams,
  registry: RegistryHooks | undefined,
): Promise<Reply> {
  const signature = registry?.checkUpload(uploadPath(id), query) ?? 'invalid';
  if (signature !== 'valid') {
    req.resume();
    if (signature === 'absent') throw new MirrorError('UNAUTHORIZED', 'Upload to the URL the version was created with (links.upload), signature and all.');
    throw new MirrorError(
      'FORBIDDEN',
      signature === 'expired' ? 'This upload URL has expired: create the version again for a new one.' : 'This upload URL is not one this registry signed.',
    );
  }
  const why = registry!.readOnly();
  if (why !== undefined) {
    req.resume();
    throw new MirrorError('FORBIDDEN', `This server serves its mirror read-only (${why}); nothing can be uploaded to it.`);
  }
  let added = false;
  const claimed = await store
    .mutate(['moduleVersions'], (data) => {
      const record = data.moduleVersions.find((v) => v.id === id);
      // The signature says this registry made the version: its record is gone because it was deleted.
      if (!record)
        throw new MirrorError(
          'NOT_FOUND',
          'This version was deleted after this upload URL was made (or its module was), so nothing was published: create the version again to upload it.',
        );
      if (record.status !== 'pending')
        throw new MirrorError(
          'CONFLICT',
          `This upload URL was used already (the version's status is ${record.status}); create the version again to upload again.`,
        );
      record.status = 'reg_ingressing';
      record.updatedAt = new Date().toISOString();
      uploadsInProgress.add(id);
      added = true;
      return { ...record };
    })
    .catch((error: unknown) => {
      // A claim that failed after it was made (its write): this PUT is not taking the upload in; another's may be.
      if (added) uploadsInProgress.delete(id);
      req.resume();
      throw error;
    });
  const [namespace = '', name = '', provider = ''] = claimed.module.split('/');
  const address = { namespace, name, provider };
  let failure: unknown;
  let record: ModuleVersionEntry | undefined;
  try {
    try {
      await registry!.ingest(address, claimed.version, req);
    } catch (error) {
      failure = error;
    }
    const busy = (failure as { code?: string } | undefined)?.code === 'LOCK_BUSY';
    record = await store.mutate(['moduleVersions'], (data) => {
      uploadsInProgress.delete(id);
      const entry = data.moduleVersions.find((v) => v.id === id);
      if (!entry) return undefined;
      entry.status = failure === undefined ? 'ok' : busy ? 'pending' : 'reg_ingress_failed';
      if (failure === undefined || busy) delete entry.error;
      else entry.error = messageOf(failure);
      entry.updatedAt = new Date().toISOString();
      return { ...entry };
    });
  } finally {
    uploadsInProgress.delete(id);
  }
  // eslint-disable-next-line @typescript-eslint/only-throw-error -- what ingest threw, passed on as it was
  if (failure !== undefined) throw failure;
  // It landed: 200, even were its record gone (its organization deleted meanwhile) or the module removed since.
  const view = moduleView(store.read(), registry, address) ?? { address, entry: undefined, published: [], records: [] };
  return { status: 200, document: { data: versionResource(view, claimed.version, { status: 'ok', record: record ?? claimed }) } };
}
