// `modmirror serve`: sirv over dist/ plus a small router in front for what
// static files cannot answer. One error path decides every failure status.

import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { homeOf, putBackSetAside } from '../mirror/home.js';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MirrorError } from '../errors.js';
import { sendError, statusOf } from '../http/errors.js';
import { AnswerCache, sendPayload } from '../http/payload.js';
import { createLogin } from '../login/index.js';
import type { SsoOptions } from '../login/sso.js';
import { createManagementApi } from '../management/index.js';
import { CACHE_PRIVATE, CACHE_SHORT } from '../protocol/headers.js';
import { auditLine, PrivateAccess, type Caller } from './access.js';
import { DownloadCounter } from './downloads.js';
import { clientErrorResponse, httpsServer, type ClientError } from './listen.js';
import { Mirror } from './mirror.js';
import { ServeMetrics } from './metrics.js';
import { listenForMetrics, METRICS_PATH, sendMetrics } from './metrics-endpoint.js';
import type { PrivateSigningKey } from '../openpgp/keys.js';
import type { Registry } from './registry.js';
import { jsonLine, nameModule, startRecord, textLine, type LogFormat, type RequestRecord } from './request-log.js';
import { findRoute } from './routes/index.js';
import { ArchiveSigner } from './signing.js';
import { staticFiles } from './static.js';
import { isManagementTarget, originForm, parseTarget } from './target.js';
import { mirrorWriters, type MirrorWriters } from './uploads.js';
import { CACHE_HEADER } from './upstream.js';
import type { ModuleAddress, ModuleMeta, SizeLimits } from '../types.js';
import { DEFAULT_UPSTREAM_TTL_SECONDS } from '../config/upstream.js';
import { UpstreamCache } from '../upstream/index.js';
import { LastUse, UPSTREAM_RECORD_FILE } from '../upstream/record.js';
import { moduleStateFile, readManifestAt, readModuleStateFile } from '../mirror/manifest.js';
import { addressKey } from '../protocol/paths.js';
import type { ProviderAddress } from '../protocol/providers.js';
import { usageReport } from '../usage/report.js';
import { readUsage, UsageLog } from '../usage/store.js';

export interface ServeOptions {
  dir: string;
  host: string;
  port: number;
  dataDir: string;
  tls?: { cert: string; key: string };
  /** Absolute URL clients reach the server at; changes what discovery answers. */
  baseUrl?: string;
  /** public (default): anyone reads the registry; private: token holders, each what its organizations may read. */
  access?: 'public' | 'private';
  /** Private mode: how long a signed archive URL stays valid (default 15 minutes). */
  archiveUrlTtlSeconds?: number;
  /** Private: how long a token from terraform login works (default: 30 days). */
  loginTokenSeconds?: number;
  /** Private: single sign-on on terraform login's sign-in page. */
  sso?: SsoOptions | undefined;
  log?: (line: string) => void;
  /** text (default): `GET /path 200 1.2ms`; json: one object per request (logging.md). */
  logFormat?: LogFormat;
  metrics?: {
    /** Serve /metrics here only (HOST and PORT), not on the registry's port. */
    listen?: { host: string; port: number };
    /** Module and version pairs counted by name before the rest count as "other" (default 1000). */
    downloadSeries?: number;
  };
  /** Private mode: the bound of the usage store in the data folder (default 64 MiB). */
  usageMaxBytes?: number;
  /**
   * Answers a request before the registry's routes when it returns true:
   * `modmirror dev`'s event stream and its page. Its route class is `dev`.
   */
  intercept?: (req: IncomingMessage, res: ServerResponse) => boolean;
  /** One line per refused request in private mode (who, what, why; never a token). Default: stderr. */
  audit?: (line: string) => void;
  /** Publishing through the management API's registry-modules endpoints. */
  publishing?: {
    /** Default: `cache` in the data folder. */
    cacheDir?: string;
    imageHosts?: string[];
    moduleMeta?: (address: ModuleAddress) => ModuleMeta;
    /** Largest upload (the tar.gz), default 64 MiB; it may unpack to 8 times that. */
    maxUploadBytes?: number;
    /** Refuse every write through the API, as for a mirror on a read-only file system. */
    readOnly?: boolean;
    /** How long an upload link stays valid, default 10 minutes. */
    uploadUrlTtlSeconds?: number;
    /** Signs the truth each write changes (a signed mirror's writes must): the config's provenance: key. */
    signer?: PrivateSigningKey;
  };
  /** Fill the mirror from this registry when asked for a module version it lacks (serve --upstream). */
  upstream?: {
    url: URL;
    /** How long a version list is used before the upstream is asked again (default 600). */
    ttlSeconds?: number;
    /** CA certificates (PEM) trusted for the upstream beside Node.js's own. */
    ca?: string[];
    token?: string;
    /** The config's `limits` for the versions filled. */
    limits?: SizeLimits;
    /** Each version filled, each failure and each refusal; default: stdout, even with --quiet. */
    log?: (line: string) => void;
    /** Fill the modules a filled version calls, before a client asks (default true). */
    followCalls?: boolean;
    /** Fill the provider network mirror too (providersPath: where it is in the tree). */
    providers?: { into: string; platforms: string[]; path: string; commit: (address: ProviderAddress, version: string) => Promise<void> };
    /** Retry and timeout tuning (tests). */
    maxAttempts?: number;
    baseDelayMs?: number;
    timeoutMs?: number;
    patienceMs?: number;
  };
}

const DEFAULT_ARCHIVE_URL_TTL_SECONDS = 900;
/** In the data folder: the provider packages fetched from the upstream, as `terraform providers mirror` lays them out. */
export const UPSTREAM_PROVIDERS_DIR = 'upstream-providers';
const DEFAULT_MAX_UPLOAD_BYTES = 64 * 1024 * 1024;
const DEFAULT_UPLOAD_URL_TTL_SECONDS = 600;
const noMeta = (): ModuleMeta => ({ owner: '', description: '', source: '', verified: false });

export interface RunningServer {
  url: string;
  /** With `metrics.listen`: the URL of /metrics there. */
  metricsUrl?: string;
  server: Server;
  close(): Promise<void>;
}

export async function startServer(options: ServeOptions): Promise<RunningServer> {
  await putBackSetAside(homeOf(options.dir));
  const root = mirrorPathOrFail(options.dir);
  const mirror = new Mirror(root);
  const downloads = new DownloadCounter(options.dataDir);
  // Made on first use in public mode: a server nobody publishes to makes no key.
  let signer: ArchiveSigner | undefined = options.access === 'private' ? new ArchiveSigner(options.dataDir) : undefined;
  const p = options.publishing ?? {};
  const maxUploadBytes = p.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES;
  // The API's writes (deprecation, upload, removal) write the mirror this server serves, then look at it again at once.
  const writers = mirrorWriters(mirror, () => (signer ??= new ArchiveSigner(options.dataDir)), {
    cacheDir: p.cacheDir ?? join(options.dataDir, 'cache'),
    imageHosts: p.imageHosts ?? [],
    moduleMeta: p.moduleMeta ?? noMeta,
    limits: { maxBytes: maxUploadBytes, maxUnpackedBytes: 8 * maxUploadBytes },
    readOnly: p.readOnly === true,
    uploadUrlTtlSeconds: p.uploadUrlTtlSeconds ?? DEFAULT_UPLOAD_URL_TTL_SECONDS,
    ...(p.signer ? { signer: p.signer } : {}),
    baseUrl: options.baseUrl,
    tls: options.tls !== undefined,
    ...(options.upstream?.limits ? { versionLimits: options.upstream.limits } : {}),
  });
  // Private mode: who downloads what. A public registry's callers are nobody in particular.
  const usage = options.access === 'private' ? new UsageLog(options.dataDir, options.usageMaxBytes) : undefined;
  const management = createManagementApi(options.dataDir, {
    deprecate: writers.deprecate,
    registry: writers,
    usage: (filter) => usageReport(readUsage(options.dataDir), filter, root),
  });
  const access =
    options.access === 'private'
      ? new PrivateAccess(
          management.store,
          signer!,
          options.archiveUrlTtlSeconds ?? DEFAULT_ARCHIVE_URL_TTL_SECONDS,
          management.tokenUse,
          options.upstream !== undefined,
        )
      : undefined;
  // Private mode: an organization's namespace is never asked of the upstream, not even for a call a filled version makes.
  const upstream =
    options.upstream && startUpstream(options.upstream, options.dataDir, root, writers, (address) => access?.isPrivateNamespace(address.namespace) !== true);
  // A cache says when each archive it holds was last used (modmirror cache list).
  const lastUse = upstream && new LastUse(options.dataDir);
  // terraform login hands out tokens, which only a private registry asks for.
  const login = access
    ? createLogin({
        store: management.store,
        secure: options.tls !== undefined || options.baseUrl?.startsWith('https:') === true,
        tokenSeconds: options.loginTokenSeconds,
        sso: options.sso,
        baseUrl: options.baseUrl,
        audit: (req, who, why) => access.refuse(req, who, why),
      })
    : undefined;
  const audit = options.audit ?? ((line: string) => console.error(line));
  const registry: Registry = {
    mirror,
    downloads,
    baseUrl: options.baseUrl,
    patchedDetails: new Map(),
    answers: new AnswerCache(),
    serveFile: staticFiles(root),
    access,
    ...(upstream ? { upstream } : {}),
    ...(lastUse ? { archiveUsed: (archive: string) => lastUse.used(archive) } : {}),
  };

  const metrics = new ServeMetrics(mirror, options.metrics?.downloadSeries);
  const metricsHere = options.metrics?.listen === undefined;
  registry.archiveSent = (moduleKey, version, caller) => {
    metrics.archiveSent(moduleKey, version);
    usage?.record({ day: new Date().toISOString().slice(0, 10), module: moduleKey, version, ...whoIs(caller) });
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, record: RequestRecord) => {
    const url = req.url ?? '/';
    if (options.intercept?.(req, res)) {
      record.route = 'dev';
      return;
    }
    const forApi = isManagementTarget(url);
    if (forApi) record.route = 'management';
    const { segments, query } = parseTarget(url);
    if (forApi) {
      // A version's upload link (management/index.ts): the publish API's one write of a module.
      if (segments.length === 5 && segments[2] === 'registry-module-versions' && segments[4] === 'upload') record.route = 'upload';
      return management.handle(req, res, segments.slice(2), query);
    }
    if (login?.owns(segments)) {
      record.route = 'login';
      return login.handle(req, res, segments, query);
    }
    if (metricsHere && url.split('?', 1)[0] === METRICS_PATH) {
      record.route = 'metrics';
      return sendMetrics(req, res, metrics, access);
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      throw new MirrorError('METHOD_NOT_ALLOWED', `Method ${req.method} not allowed`, { allow: ['GET', 'HEAD'] });
    }
    const { name, handler, params, ownAccess } = findRoute(segments);
    record.route = name;
    nameModule(record, params);
    let index = mirror.current();
    let caller;
    if (access && !ownAccess) {
      caller = record.caller = access.caller(req);
      index = access.view(index, caller);
    }
    const answer = await handler({ registry, index, caller, req, res, params, query, record });
    const cacheState = answer?.headers?.[CACHE_HEADER];
    if (cacheState !== undefined) metrics.cacheAnswer(cacheState);
    if (answer) sendPayload(req, res, answer.payload, answer.status, { 'Cache-Control': access ? CACHE_PRIVATE : CACHE_SHORT, ...answer.headers });
  };

  const log = options.log;
  const format = options.logFormat ?? 'text';
  /** The log line, metrics and audit line of a request once it is over (answered, or its connection gone). */
  const finished = (req: IncomingMessage, res: ServerResponse, record: RequestRecord) => {
    const ms = performance.now() - record.started;
    const status = res.statusCode;
    metrics.request(record.route, record.method, status, ms / 1000, record.bodyBytes);
    if (record.route === 'upload') metrics.published(status);
    log?.(format === 'json' ? jsonLine(record, status, ms) : textLine(record, status, ms));
    const refusal = access?.refusalOf(req);
    if (!refusal) return;
    metrics.refused(status);
    // The path only: an archive URL's query is its signature.
    audit(auditLine(record.method, (req.url ?? '/').split('?', 1)[0]!, status, refusal.who, refusal.why));
  };

  // One error path for every route, the management API's included (http/errors.ts maps and renders).
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    // A proxy may send the absolute form (`GET http://host/p`); HTTP/1.1 servers must take it as `/p`.
    const url = (req.url = originForm(req.url ?? '/'));
    const record = startRecord(req, res, url);
    // 'close' always comes, 'finish' only for a response sent whole: a download cut short is logged too.
    res.once('close', () => finished(req, res, record));
    handle(req, res, record).catch((error: unknown) => {
      if (record.route === 'unrouted') record.route = 'bad_request';
      // A 500 is a bug in modmirror or a fault in its data: always say so, even with --quiet.
      if (statusOf(error) === 500) console.error(`error: ${req.method} ${req.url}: ${(error as Error).stack ?? String(error)}`);
      if (res.headersSent) res.destroy();
      else sendError(req, res, error, isManagementTarget(req.url ?? '/') ? 'jsonapi' : 'registry');
    });
  };

  const server = options.tls ? httpsServer(options.tls, onRequest) : createHttpServer(onRequest);
  server.on('clientError', (error: ClientError, socket) => {
    // Malformed or oversized requests never reach a handler: answer them here, then close.
    if (socket.writable) socket.end(clientErrorResponse(error));
    else socket.destroy();
  });
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new MirrorError('SERVE_FAILED', `Cannot listen on ${options.host}:${options.port}: ${error.message}`, {
          hint: 'Choose another --port or --host, or stop what is listening there.',
          cause: error,
        }),
      ),
    );
    server.listen(options.port, options.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  const closeServer = (s: Server) =>
    new Promise<void>((resolve) => {
      s.close(() => resolve());
      s.closeIdleConnections();
    });
  const listen = options.metrics?.listen;
  const elsewhere = listen
    ? await listenForMetrics(listen.host, listen.port, metrics).catch(async (error: unknown) => {
        await closeServer(server);
        throw error;
      })
    : undefined;
  return {
    url: `${options.tls ? 'https' : 'http'}://${host}:${port}/`,
    ...(elsewhere ? { metricsUrl: elsewhere.url } : {}),
    server,
    close: async () => {
      await Promise.all([closeServer(server), elsewhere && closeServer(elsewhere.server)]);
      await Promise.all([downloads.flush(), usage?.close(), management.tokenUse.flush(), upstream?.close(), lastUse?.flush()]);
    },
  };
}

/** The upstream cache: its record of what it fetched is in the data folder, its writes are the server's. */
function startUpstream(
  options: NonNullable<ServeOptions['upstream']>,
  dataDir: string,
  root: string,
  writers: MirrorWriters,
  asks: (address: ModuleAddress) => boolean,
): UpstreamCache {
  const { ttlSeconds, log, providers, limits: _limits, ...rest } = options;
  mkdirSync(dataDir, { recursive: true });
  return new UpstreamCache({
    ...rest,
    asks,
    ttlSeconds: ttlSeconds ?? DEFAULT_UPSTREAM_TTL_SECONDS,
    log: log ?? ((line) => console.log(line)),
    commit: writers.cache,
    ...(providers
      ? {
          providers: {
            ...providers,
            commit: (address, version) => writers.exclusive(() => providers.commit(address, version)),
            held: (key, version) => heldPackages(root, key, version),
          },
        }
      : {}),
    heldSha256: (address, version) =>
      readModuleStateFile(join(root, moduleStateFile(addressKey(address))), addressKey(address))?.versions.find((v) => v.version === version)?.sha256,
    recordFile: join(dataDir, UPSTREAM_RECORD_FILE),
  });
}

/** The sha256 of each package of a provider version the mirror holds, by platform (the root manifest keeps the providers). */
function heldPackages(root: string, key: string, version: string): Map<string, string> {
  const manifest = readManifestAt(
    (rel) => join(root, rel),
    () => [],
  );
  const held = manifest?.providers?.[key]?.versions.find((v) => v.version === version);
  return new Map((held?.archives ?? []).map((a) => [a.platform, a.sha256]));
}

/**
 * The mirror's path as its writers name it: not its real path, which is the
 * generation live now (mirror/home.ts) and gone after the next write.
 */
function mirrorPathOrFail(dir: string): string {
  try {
    realpathSync(dir);
    return homeOf(dir);
  } catch {
    throw new MirrorError('OUTPUT_FAILED', `The directory "${dir}" does not exist.`, {
      hint: 'Did you build the mirror? Run modmirror build first, or pass --dir.',
    });
  }
}

/** The caller's organization, team or user, as usage records them. */
function whoIs(caller: Caller | undefined): { organization?: string; team?: string; user?: string } {
  if (!caller) return {};
  return {
    ...(caller.organization !== undefined ? { organization: caller.organization } : {}),
    ...(caller.team !== undefined ? { team: caller.team } : {}),
    ...(caller.user !== undefined ? { user: caller.user } : {}),
  };
}
