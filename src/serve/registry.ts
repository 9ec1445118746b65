// What every registry route (./routes/) works from: the served mirror, the
// download counts and the caches of computed answers, and the lookups the
// routes share. Routes answer with an `Answer` or throw a MirrorError.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { MirrorError } from '../errors.js';
import type { AnswerCache, Payload } from '../http/payload.js';
import { addressKey, isValidName, modulesServiceUrl } from '../protocol/paths.js';
import type { ModuleAddress } from '../types.js';
import { validVersion } from '../version-order.js';
import type { Caller, PrivateAccess } from './access.js';
import type { DownloadCounter } from './downloads.js';
import type { IndexedModule, Mirror, MirrorIndex } from './mirror.js';
import type { RequestRecord } from './request-log.js';
import type { UpstreamCache } from '../upstream/index.js';

/**
 * `/v1/modules/`: the server answers at the root of its host, so its paths
 * are the protocol's own; a base URL's path is a proxy's business.
 */
export const MODULES_PATH = modulesServiceUrl('');

export interface Registry {
  mirror: Mirror;
  downloads: DownloadCounter;
  /** Absolute URL clients reach the server at, when given: discovery answers with it. */
  baseUrl: string | undefined;
  /** Serves a file of the tree with sirv (archives, the browse page). */
  serveFile: (req: IncomingMessage, res: ServerResponse, rel: string, headers: Record<string, string>) => Promise<void>;
  /** Detail documents with a non-zero download count patched in, by generation and path. */
  patchedDetails: Map<string, { count: number; payload: Payload }>;
  /** Listing and search answers by generation, download epoch and URL. */
  answers: AnswerCache;
  /** Set in private mode (`serve --access private`): who may read what, and the archive URL signer. */
  access?: PrivateAccess;
  /** serve --upstream: the registry a version the mirror lacks is filled from. */
  upstream?: UpstreamCache;
  /** Told of each archive sent whole, after the download count (metrics, and usage in private mode). */
  archiveSent?: (moduleKey: string, version: string, caller: Caller | undefined) => void;
  /** serve --upstream: told of each archive (module or provider package, by its path in the mirror) sent whole. */
  archiveUsed?: (archive: string) => void;
}

/** One request as a route sees it; `params` are the pattern's `:name` segments, decoded. */
export interface RouteRequest {
  registry: Registry;
  /**
   * The mirror's index when the request came in: one request never sees two
   * generations. In private mode, only the part the caller may read.
   */
  index: MirrorIndex;
  /** In private mode, who is calling (routes that check access themselves resolve it, and set it in `record` too). */
  caller?: Caller;
  /** What the request's log line and metrics say of it. */
  record: RequestRecord;
  req: IncomingMessage;
  res: ServerResponse;
  params: Record<string, string>;
  query: URLSearchParams;
}

/**
 * A route's answer: a payload, its status (200 unless said) and headers
 * beyond the short cache lifetime every registry answer gets. `undefined`
 * when the route has sent a file itself.
 */
export interface Answer {
  payload: Payload;
  status?: number;
  headers?: Record<string, string>;
}

export const notFound = (message = 'Not found') => new MirrorError('NOT_FOUND', message);

/** The module address the path names (`:namespace/:name/:provider`). */
export function addressOf({ params }: RouteRequest): ModuleAddress {
  return { namespace: params['namespace'] ?? '', name: params['name'] ?? '', provider: params['provider'] ?? '' };
}

/** The module the path names; 404 unless the mirror holds it. */
export function moduleOf(r: RouteRequest): IndexedModule {
  const address = addressOf(r);
  const valid = isValidName(address.namespace) && isValidName(address.name) && isValidName(address.provider);
  const module = valid ? r.index.byKey.get(addressKey(address)) : undefined;
  if (!module) {
    // The same answer whether the module is missing or not the caller's to see; only the audit line tells them apart.
    if (valid && r.caller && r.registry.mirror.current().byKey.has(addressKey(address))) {
      r.registry.access?.refuse(r.req, r.caller.label, `${addressKey(address)} is not readable by this caller`);
    }
    throw notFound(`Module ${addressKey(address)} not found`);
  }
  return module;
}

/** The path's `:version` of `module`; 404 unless the mirror holds it. */
export function versionOf({ params }: RouteRequest, module: IndexedModule): string {
  const version = params['version'] ?? '';
  if (validVersion(version) === null || !module.versions.includes(version)) {
    throw notFound(`Version ${version} of ${module.key} not found`);
  }
  return version;
}

/** Listings and search are pure functions of the index, the counts and the URL: compute each once. */
export function cachedAnswer({ registry, index, req }: RouteRequest, compute: () => Payload): Payload {
  const key = `${index.generation}|${registry.downloads.epoch}|${req.url}`;
  const hit = registry.answers.get(key);
  if (hit) return hit;
  const answer = compute();
  registry.answers.set(key, answer);
  return answer;
}
