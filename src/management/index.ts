// The management API shim under /api/v2 (spec 4.1-4.3, 5, 7.1): a route
// table over the data folder. Every request but ping needs a bearer token;
// admin endpoints exist only for site administrators of a self-hosted
// edition and answer 404 to everyone else, as unknown paths do. GET answers
// are cached until the data changes, here or in another process.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { MirrorError } from '../errors.js';
import { AnswerCache, payload, sendPayload, type Payload } from '../http/payload.js';
import { matchRoutePath, routePath } from '../http/route-path.js';
import { JSONAPI_TYPE } from '../protocol/headers.js';
import { VERSION } from '../version.js';
import { principalKey, principalOf, tokenOf, type Principal } from './auth.js';
import { notFound, sendDocument, unauthorized, type Reply } from './jsonapi.js';
import { accountDetails, changePassword, updateAccount } from './routes/account.js';
import { deleteOrganization, listConsumers, listOrganizations, showOrganization, updateConsumers, updateOrganization } from './routes/admin-organizations.js';
import type { RegistryHooks } from './registry.js';
import { createVersion, deleteVersion, readVersion, uploadVersion } from './routes/registry-module-versions.js';
import { createModule, deleteModule, listModules, readModule, readModuleById, updateModuleVersion, type DeprecateHook } from './routes/registry-modules.js';
import { revokeOrganizationToken } from './routes/tokens.js';
import { createUserToken, deleteUserToken, listUserTokens, showUserToken } from './routes/user-tokens.js';
import { usageReport, type UsageHook } from './routes/admin-usage.js';
import { listStages, overrideStage, showResult, showStage } from './routes/task-stages.js';
import { Store } from './store.js';
import { TokenUse } from './token-use.js';
import type { Data } from './types.js';

interface ReadContext {
  data: Data;
  principal: Principal;
  params: string[];
  query: URLSearchParams;
  registry: RegistryHooks | undefined;
  usage: UsageHook | undefined;
}
interface WriteContext {
  store: Store;
  principal: Principal;
  params: string[];
  req: IncomingMessage;
  hooks: ManagementHooks;
  registry: RegistryHooks | undefined;
}

/** What the API changes outside its data folder, given by the server that runs it. */
export interface ManagementHooks {
  /** Writes a module version's deprecation into the served mirror. */
  deprecate?: DeprecateHook;
  /** The served mirror's modules, read and written by the registry-module routes. */
  registry?: RegistryHooks;
  /** Who downloaded what (the admin usage report). */
  usage?: UsageHook;
}

/**
 * A GET reads the data and nothing else, synchronously: its answer is a pure
 * function of the data, the caller, the path and the query, and is cached;
 * unless `live`, when it also reads the served mirror, which changes without
 * the data (a publish from the CLI). Other methods change the store.
 */
type Route = { path: string[]; admin: boolean } & (
  { method: 'GET'; read: (ctx: ReadContext) => Reply; live?: boolean } | { method: 'PATCH' | 'POST' | 'DELETE'; write: (ctx: WriteContext) => Promise<Reply> }
);

const get = (path: string, read: (ctx: ReadContext) => Reply, admin = false): Route => ({ method: 'GET', path: routePath(path), read, admin });
const live = (path: string, read: (ctx: ReadContext) => Reply, admin = false): Route => ({ method: 'GET', path: routePath(path), read, admin, live: true });
const write = (method: 'PATCH' | 'POST' | 'DELETE', path: string, run: (ctx: WriteContext) => Promise<Reply>, admin = false): Route => ({
  method,
  path: routePath(path),
  write: run,
  admin,
});

/** A path without a namespace names a private module, whose namespace is its organization. */
const inOrganizationNamespace = <T extends { params: string[] }>(ctx: T): T => ({ ...ctx, params: [ctx.params[0]!, ...ctx.params] });

const ROUTES: Route[] = [
  get('account/details', ({ principal }) => accountDetails(principal)),
  write('PATCH', 'account/update', ({ store, principal, req }) => updateAccount(store, principal, req)),
  write('PATCH', 'account/password', ({ store, principal, req }) => changePassword(store, principal, req)),
  get('runs/:run/task-stages', ({ data, principal, params, query }) => listStages(data, principal, params[0]!, query)),
  get('task-stages/:stage', ({ data, principal, params, query }) => showStage(data, principal, params[0]!, query)),
  write('POST', 'task-stages/:stage/actions/override', ({ store, principal, params }) => overrideStage(store, principal, params[0]!)),
  get('task-results/:result', ({ data, principal, params }) => showResult(data, principal, params[0]!)),
  get('admin/organizations', ({ data, query }) => listOrganizations(data, query), true),
  live('admin/usage', ({ query, usage }) => usageReport(query, usage), true),
  get('admin/organizations/:org', ({ data, params, query }) => showOrganization(data, params[0]!, query), true),
  write('PATCH', 'admin/organizations/:org', ({ store, params, req }) => updateOrganization(store, params[0]!, req), true),
  write('DELETE', 'admin/organizations/:org', ({ store, params }) => deleteOrganization(store, params[0]!), true),
  get('admin/organizations/:org/relationships/module-consumers', ({ data, params, query }) => listConsumers(data, params[0]!, 'module', query), true),
  write(
    'PATCH',
    'admin/organizations/:org/relationships/module-consumers',
    ({ store, params, req }) => updateConsumers(store, params[0]!, 'module', req),
    true,
  ),
  get('users/:user/authentication-tokens', ({ data, principal, params, query }) => listUserTokens(data, principal, params[0]!, query)),
  write('POST', 'users/:user/authentication-tokens', ({ store, principal, params, req }) => createUserToken(store, principal, params[0]!, req)),
  get('authentication-tokens/:token', ({ data, principal, params }) => showUserToken(data, principal, params[0]!)),
  write('DELETE', 'authentication-tokens/:token', ({ store, principal, params }) => deleteUserToken(store, principal, params[0]!)),
  write('DELETE', 'organizations/:org/authentication-token', ({ store, principal, params }) => revokeOrganizationToken(store, principal, params[0]!)),
  write('PATCH', 'organizations/:org/registry-modules/private/:namespace/:name/:provider/:version', ({ store, principal, params, req, hooks }) =>
    updateModuleVersion(store, principal, params, req, hooks.deprecate),
  ),
  live('organizations/:org/registry-modules', listModules),
  write('POST', 'organizations/:org/registry-modules', createModule),
  live('organizations/:org/registry-modules/private/:namespace/:name/:provider', readModule),
  write('DELETE', 'organizations/:org/registry-modules/private/:namespace/:name/:provider', deleteModule),
  write('DELETE', 'organizations/:org/registry-modules/private/:namespace/:name', deleteModule),
  // go-tfe's older paths, which it still calls: the delete actions (Delete, and DeleteProvider and
  // DeleteVersion's fallbacks), Read by id, and Read before registry names (go-tfe 0.x).
  write('POST', 'registry-modules/actions/delete/:org/:name', (ctx) => deleteModule(inOrganizationNamespace(ctx))),
  write('POST', 'registry-modules/actions/delete/:org/:name/:provider', (ctx) => deleteModule(inOrganizationNamespace(ctx))),
  write('POST', 'registry-modules/actions/delete/:org/:name/:provider/:version', (ctx) => deleteVersion(inOrganizationNamespace(ctx))),
  live('registry-modules/show/:org/:name/:provider', (ctx) => readModule(inOrganizationNamespace(ctx))),
  live('registry-modules/:id', readModuleById),
  write('POST', 'registry-modules/:org/:name/:provider/versions', createVersion),
  write('POST', 'organizations/:org/registry-modules/private/:namespace/:name/:provider/versions', createVersion),
  live('organizations/:org/registry-modules/private/:namespace/:name/:provider/version', readVersion),
  write('DELETE', 'organizations/:org/registry-modules/private/:namespace/:name/:provider/:version', deleteVersion),
  get('admin/organizations/:org/relationships/provider-consumers', ({ data, params, query }) => listConsumers(data, params[0]!, 'provider', query), true),
  write(
    'PATCH',
    'admin/organizations/:org/relationships/provider-consumers',
    ({ store, params, req }) => updateConsumers(store, params[0]!, 'provider', req),
    true,
  ),
];

/** What the route's `:params` capture, in order; undefined when it does not match. */
function match(route: Route, segments: string[]): string[] | undefined {
  const params = matchRoutePath(route.path, segments);
  return params && Object.values(params);
}

export interface ManagementApi {
  store: Store;
  /** When tokens were last used, registry requests' included; serve flushes it when it closes. */
  tokenUse: TokenUse;
  /**
   * `segments` are the decoded path segments after `/api/v2/`. Failures are
   * thrown as MirrorErrors; the server answers them (http/errors.ts).
   */
  handle(req: IncomingMessage, res: ServerResponse, segments: string[], query: URLSearchParams): Promise<void>;
}

export function createManagementApi(dataDir: string, hooks: ManagementHooks = {}): ManagementApi {
  const store = new Store(dataDir);
  const tokenUse = new TokenUse(store);
  const answers = answerCache(store);
  const handle = async (req: IncomingMessage, res: ServerResponse, segments: string[], query: URLSearchParams) => {
    if (segments.length === 1 && segments[0] === 'ping') {
      // go-tfe calls this first on every start and reads these headers.
      res.writeHead(204, { 'TFP-API-Version': '2.6', 'TFP-AppName': 'modmirror', 'X-TFE-Version': `modmirror-${VERSION}` });
      res.end();
      return;
    }
    if (segments.length === 3 && segments[0] === 'registry-module-versions' && segments[2] === 'upload') {
      // A version's upload link: go-tfe and curl send no token there; its signature is the permission.
      if (req.method !== 'PUT') throw new MirrorError('METHOD_NOT_ALLOWED', 'PUT the tar.gz to this URL.', { allow: ['PUT'] });
      const reply = await uploadVersion(store, segments[1]!, req, query, hooks.registry);
      return sendDocument(req, res, reply.status, reply.document);
    }
    const data = store.read();
    const token = tokenOf(data, req.headers.authorization);
    const principal = token && principalOf(data, token);
    if (!principal) throw unauthorized();
    tokenUse.used(token);
    const adminVisible = data.settings.edition === 'self-hosted' && principal.kind === 'user' && principal.user.isSiteAdmin;
    const candidates = ROUTES.filter((r) => (!r.admin || adminVisible) && match(r, segments) !== undefined);
    if (candidates.length === 0) throw notFound();
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const chosen = candidates.find((r) => r.method === method);
    if (!chosen) {
      throw new MirrorError('METHOD_NOT_ALLOWED', `Use ${candidates.map((r) => r.method).join(' or ')} on this path.`, { allow: allowedMethods(candidates) });
    }
    const params = match(chosen, segments)!;
    if (chosen.method !== 'GET') {
      const reply = await chosen.write({ store, principal, params, req, hooks, registry: hooks.registry });
      return sendDocument(req, res, reply.status, reply.document);
    }
    if (chosen.live) {
      const reply = chosen.read({ data, principal, params, query, registry: hooks.registry, usage: hooks.usage });
      return sendDocument(req, res, reply.status, reply.document);
    }
    // What the caller may see follows from who they are and the data. The query is keyed as
    // URLSearchParams writes it: `page[size]=1` and `page%5Bsize%5D=1` are one answer.
    const key = JSON.stringify([principalKey(principal), segments.join('/'), query.toString()]);
    const answer = answers(key, () => {
      const reply = chosen.read({ data, principal, params, query, registry: hooks.registry, usage: hooks.usage });
      return payload(JSON.stringify(reply.document), JSONAPI_TYPE);
    });
    sendPayload(req, res, answer);
  };
  return { store, tokenUse, handle };
}

/**
 * GET answers, serialized once per generation of the store: a write through
 * the store, or a data file another process replaced, moves the generation,
 * and the cache starts over. The answer is computed synchronously right after
 * `store.read()`, so it always belongs to the generation it is filed under.
 */
function answerCache(store: Store): (key: string, compute: () => Payload) => Payload {
  // A page holds at most 100 resources (under 100 KB): ample room for every caller's hot pages.
  const empty = () => new AnswerCache(1000, 8 * 1024 * 1024);
  let generation = store.generation;
  let answers = empty();
  return (key, compute) => {
    if (store.generation !== generation) {
      generation = store.generation;
      answers = empty();
    }
    const hit = answers.get(key);
    if (hit) return hit;
    const answer = compute();
    answers.set(key, answer);
    return answer;
  };
}

/** What an `Allow` header lists for a path: HEAD wherever GET is. */
function allowedMethods(routes: Route[]): string[] {
  return [...new Set(routes.flatMap((r) => (r.method === 'GET' ? ['GET', 'HEAD'] : [r.method])))];
}
