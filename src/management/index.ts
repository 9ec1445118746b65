// The management API shim under /api/v2 (spec 4.1-4.3, 5, 7.1): a route
// table over the data folder. Every request but ping needs a bearer token;
// admin endpoints exist only for site administrators of a self-hosted
// edition and answer 404 to everyone else, as unknown paths do.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { MirrorError } from '../errors.js';
import { VERSION } from '../version.js';
import { authenticate, type Principal } from './auth.js';
import { ApiError, notFound, sendApiError, sendDocument, unauthorized } from './jsonapi.js';
import { accountDetails, changePassword, updateAccount } from './routes/account.js';
import { deleteOrganization, listConsumers, listOrganizations, showOrganization, updateModuleConsumers, updateOrganization } from './routes/admin-organizations.js';
import { listStages, overrideStage, showResult, showStage } from './routes/task-stages.js';
import { Store } from './store.js';

type Reply = { status: number; document?: unknown };

interface Route {
  method: 'GET' | 'PATCH' | 'POST' | 'DELETE';
  /** Literal segments, `:param` captures one. */
  path: string[];
  admin?: boolean;
  run: (ctx: { store: Store; principal: Principal; params: string[]; query: URLSearchParams; req: IncomingMessage }) => Reply | Promise<Reply>;
}

const route = (method: Route['method'], path: string, run: Route['run'], admin = false): Route => ({ method, path: path.split('/'), run, admin });

const ROUTES: Route[] = [
  route('GET', 'account/details', ({ principal }) => accountDetails(principal)),
  route('PATCH', 'account/update', ({ store, principal, req }) => updateAccount(store, principal, req)),
  route('PATCH', 'account/password', ({ store, principal, req }) => changePassword(store, principal, req)),
  route('GET', 'runs/:run/task-stages', ({ store, principal, params, query }) => listStages(store.read(), principal, params[0]!, query)),
  route('GET', 'task-stages/:stage', ({ store, principal, params, query }) => showStage(store.read(), principal, params[0]!, query)),
  route('POST', 'task-stages/:stage/actions/override', ({ store, principal, params }) => overrideStage(store, principal, params[0]!)),
  route('GET', 'task-results/:result', ({ store, principal, params }) => showResult(store.read(), principal, params[0]!)),
  route('GET', 'admin/organizations', ({ store, query }) => listOrganizations(store.read(), query), true),
  route('GET', 'admin/organizations/:org', ({ store, params, query }) => showOrganization(store.read(), params[0]!, query), true),
  route('PATCH', 'admin/organizations/:org', ({ store, params, req }) => updateOrganization(store, params[0]!, req), true),
  route('DELETE', 'admin/organizations/:org', ({ store, params }) => deleteOrganization(store, params[0]!), true),
  route('GET', 'admin/organizations/:org/relationships/module-consumers', ({ store, params, query }) => listConsumers(store.read(), params[0]!, 'module', query), true),
  route('PATCH', 'admin/organizations/:org/relationships/module-consumers', ({ store, params, req }) => updateModuleConsumers(store, params[0]!, req), true),
  route('GET', 'admin/organizations/:org/relationships/provider-consumers', ({ store, params, query }) => listConsumers(store.read(), params[0]!, 'provider', query), true),
];

function match(route: Route, segments: string[]): string[] | undefined {
  if (route.path.length !== segments.length) return undefined;
  const params: string[] = [];
  for (let i = 0; i < segments.length; i++) {
    const want = route.path[i]!;
    if (want.startsWith(':')) params.push(segments[i]!);
    else if (want !== segments[i]) return undefined;
  }
  return params;
}

export interface ManagementApi {
  store: Store;
  /** `segments` are the decoded path segments after `/api/v2/`. */
  handle(req: IncomingMessage, res: ServerResponse, segments: string[], query: URLSearchParams): Promise<void>;
}

export function createManagementApi(dataDir: string): ManagementApi {
  const store = new Store(dataDir);
  const handle = async (req: IncomingMessage, res: ServerResponse, segments: string[], query: URLSearchParams) => {
    if (segments.length === 1 && segments[0] === 'ping') {
      // go-tfe calls this first on every start and reads these headers.
      res.writeHead(204, { 'TFP-API-Version': '2.6', 'TFP-AppName': 'modmirror', 'X-TFE-Version': `modmirror-${VERSION}` });
      res.end();
      return;
    }
    const data = store.read();
    const principal = authenticate(data, req.headers.authorization);
    if (!principal) throw unauthorized();
    const adminVisible = data.settings.edition === 'self-hosted' && principal.kind === 'user' && principal.user.isSiteAdmin;
    const candidates = ROUTES.filter((r) => (!r.admin || adminVisible) && match(r, segments) !== undefined);
    if (candidates.length === 0) throw notFound();
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const chosen = candidates.find((r) => r.method === method);
    if (!chosen) throw new ApiError(405, 'method not allowed', `Use ${candidates.map((r) => r.method).join(' or ')} on this path.`);
    const reply = await chosen.run({ store, principal, params: match(chosen, segments)!, query, req });
    sendDocument(req, res, reply.status, reply.document);
  };
  return {
    store,
    handle: async (req, res, segments, query) => {
      try {
        await handle(req, res, segments, query);
      } catch (error) {
        if (res.headersSent) {
          res.destroy();
          return;
        }
        if (error instanceof ApiError) {
          const allow: Record<string, string> = error.status === 405 ? { Allow: allowedMethods(segments) } : {};
          sendApiError(req, res, error, allow);
        } else if (error instanceof MirrorError) {
          // The data folder is busy (another writer holds its lock): a retryable condition.
          sendApiError(req, res, new ApiError(503, 'service unavailable', error.message), { 'Retry-After': '1' });
        } else throw error;
      }
    },
  };
}

function allowedMethods(segments: string[]): string {
  const methods = ROUTES.filter((r) => match(r, segments) !== undefined).map((r) => r.method);
  return [...new Set(methods.flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m])))].join(', ');
}
