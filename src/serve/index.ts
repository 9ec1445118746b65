// `modmirror serve`: sirv over dist/ plus a small router in front for what
// static files cannot answer. One error path decides every failure status.

import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { homeOf, putBackSetAside } from '../mirror/home.js';
import { createServer as createHttpServer, maxHeaderSize, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { MirrorError } from '../errors.js';
import { errorAnswer, sendError, statusOf } from '../http/errors.js';
import { AnswerCache, sendPayload } from '../http/payload.js';
import { createManagementApi } from '../management/index.js';
import { CACHE_PRIVATE, CACHE_SHORT } from '../protocol/headers.js';
import { auditLine, PrivateAccess } from './access.js';
import { DownloadCounter } from './downloads.js';
import { Mirror } from './mirror.js';
import type { Registry } from './registry.js';
import { findRoute } from './routes/index.js';
import { ArchiveSigner } from './signing.js';
import { staticFiles } from './static.js';
import { isManagementTarget, originForm, parseTarget } from './target.js';
import { mirrorWriters } from './uploads.js';
import type { ModuleAddress, ModuleMeta } from '../types.js';

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
  log?: (line: string) => void;
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
  };
}

const DEFAULT_ARCHIVE_URL_TTL_SECONDS = 900;
const DEFAULT_MAX_UPLOAD_BYTES = 64 * 1024 * 1024;
const DEFAULT_UPLOAD_URL_TTL_SECONDS = 600;
const noMeta = (): ModuleMeta => ({ owner: '', description: '', source: '', verified: false });

export interface RunningServer {
  url: string;
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
    baseUrl: options.baseUrl,
    tls: options.tls !== undefined,
  });
  const management = createManagementApi(options.dataDir, { deprecate: writers.deprecate, registry: writers });
  const access =
    options.access === 'private' ? new PrivateAccess(management.store, signer!, options.archiveUrlTtlSeconds ?? DEFAULT_ARCHIVE_URL_TTL_SECONDS) : undefined;
  const audit = options.audit ?? ((line: string) => console.error(line));
  const registry: Registry = {
    mirror,
    downloads,
    baseUrl: options.baseUrl,
    patchedDetails: new Map(),
    answers: new AnswerCache(),
    serveFile: staticFiles(root),
    access,
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '/';
    const { segments, query } = parseTarget(url);
    if (isManagementTarget(url)) return management.handle(req, res, segments.slice(2), query);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      throw new MirrorError('METHOD_NOT_ALLOWED', `Method ${req.method} not allowed`, { allow: ['GET', 'HEAD'] });
    }
    const { handler, params, ownAccess } = findRoute(segments);
    let index = mirror.current();
    let caller;
    if (access && !ownAccess) {
      caller = access.caller(req);
      index = access.view(index, caller);
    }
    const answer = await handler({ registry, index, caller, req, res, params, query });
    if (answer) sendPayload(req, res, answer.payload, answer.status, { 'Cache-Control': access ? CACHE_PRIVATE : CACHE_SHORT, ...answer.headers });
  };

  // One error path for every route, the management API's included (http/errors.ts maps and renders).
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    const started = performance.now();
    // A proxy may send the absolute form (`GET http://host/p`); HTTP/1.1 servers must take it as `/p`.
    const url = (req.url = originForm(req.url ?? '/'));
    res.on('finish', () => {
      options.log?.(`${req.method} ${url.replace(/([?&]signature=)[^&]*/, '$1...')} ${res.statusCode} ${(performance.now() - started).toFixed(1)}ms`);
      const refusal = access?.refusalOf(req);
      // The path only: an archive URL's query is its signature.
      if (refusal) audit(auditLine(req.method ?? 'GET', url.split('?', 1)[0]!, res.statusCode, refusal.who, refusal.why));
    });
    handle(req, res).catch((error: unknown) => {
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
  return {
    url: `${options.tls ? 'https' : 'http'}://${host}:${port}/`,
    server,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await downloads.flush();
    },
  };
}

type ClientError = NodeJS.ErrnoException & { rawPacket?: Buffer };

/**
 * The raw response to a request the HTTP parser refused, in the error format of
 * the API it was for when the bytes the parser failed on start with the request
 * line (they hold only the last chunk read: a request line sent in an earlier
 * chunk gets the registry's format).
 */
function clientErrorResponse(error: ClientError): Buffer {
  const overflow = error.code === 'HPE_HEADER_OVERFLOW';
  const target = /^[A-Z]+ (\S+)/.exec(error.rawPacket?.toString('latin1', 0, 1024) ?? '')?.[1];
  const format = target !== undefined && isManagementTarget(target) ? 'jsonapi' : 'registry';
  const [code, reason, detail] = overflow
    ? (['HEADERS_TOO_LARGE', 'Request Header Fields Too Large', `The request line and headers are larger than ${maxHeaderSize} bytes.`] as const)
    : (['BAD_REQUEST', 'Bad Request', 'The request is not valid HTTP/1.1.'] as const);
  // The registry's body has always given just the reason phrase here; JSON:API's has the detail.
  const { status, headers, body } = errorAnswer(new MirrorError(code, format === 'jsonapi' ? detail : reason), format);
  const head = [`HTTP/1.1 ${status} ${STATUS_CODES[status]}`, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`), 'Connection: close'];
  return Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`), body]);
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

function readTls(file: string, what: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new MirrorError('SERVE_FAILED', `Cannot read the TLS ${what} "${file}": ${(error as Error).message}`, {
      hint: 'Check the path given to --tls-cert / --tls-key.',
      cause: error,
    });
  }
}

/** An HTTPS server, or an error that says which file is wrong rather than OpenSSL's routine names. */
function httpsServer(tls: { cert: string; key: string }, onRequest: Parameters<typeof createHttpServer>[1]): ReturnType<typeof createHttpsServer> {
  const cert = readTls(tls.cert, 'certificate');
  const key = readTls(tls.key, 'key');
  try {
    return createHttpsServer({ cert, key }, onRequest);
  } catch (error) {
    const swapped = /PRIVATE KEY-----/.test(cert.toString('latin1')) && /CERTIFICATE-----/.test(key.toString('latin1'));
    const problem = swapped
      ? `"${tls.cert}" holds a private key and "${tls.key}" a certificate: the two are swapped`
      : `the certificate "${tls.cert}" and key "${tls.key}" cannot be used together (${(error as Error).message})`;
    throw new MirrorError('SERVE_FAILED', `Cannot serve HTTPS: ${problem}.`, {
      hint: "--tls-cert takes the PEM certificate (BEGIN CERTIFICATE), --tls-key its PEM private key (BEGIN ... PRIVATE KEY), and the key must be the certificate's.",
      cause: error,
    });
  }
}
