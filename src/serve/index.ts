// `modmirror serve`: sirv over dist/ plus a small router in front for what
// static files cannot answer. One error path decides every failure status.

import { readFileSync, realpathSync } from 'node:fs';
import { createServer as createHttpServer, maxHeaderSize, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join, sep } from 'node:path';
import sirv from 'sirv';
import { MirrorError } from '../errors.js';
import { DISCOVERY_FILE, MODULES_BASE, modulesServiceUrl } from '../protocol/paths.js';
import { CACHE_SHORT } from '../protocol/headers.js';
import { createManagementApi } from '../management/index.js';
import { ApiError, apiErrorBody, JSONAPI_TYPE, sendApiError } from '../management/jsonapi.js';
import { DownloadCounter } from './downloads.js';
import { AnswerCache, HttpError, JSON_TYPE, jsonPayload, registryErrorBody, sendPayload, sendRegistryError } from './http.js';
import { Mirror } from './mirror.js';
import { handleDownloadsSummary, handleModules, type RegistryContext } from './registry.js';

export interface ServeOptions {
  dir: string;
  host: string;
  port: number;
  dataDir: string;
  tls?: { cert: string; key: string };
  /** Absolute URL clients reach the server at; changes what discovery answers. */
  baseUrl?: string;
  log?: (line: string) => void;
}

export interface RunningServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

const MAX_URL_LENGTH = 4096;

export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const root = realpathOrFail(options.dir);
  const mirror = new Mirror(root);
  const downloads = new DownloadCounter(options.dataDir);
  const management = createManagementApi(options.dataDir);
  // No `gzip`: the tree holds no precompressed copies, and with it sirv would answer
  // `x.tar` with `x.tar.gz` encoded. JSON documents are compressed by sendPayload.
  const files = sirv(root, { dev: true, etag: true, dotfiles: false });
  const ctx: RegistryContext = {
    mirror,
    downloads,
    basePath: `/${MODULES_BASE}`,
    patchedDetails: new Map(),
    answers: new AnswerCache(),
    serveFile: (req, res, rel, headers) => serveStatic(files, root, req, res, rel, headers),
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '/';
    const { segments, query } = parseTarget(url);
    if (isManagementTarget(url)) return management.handle(req, res, segments.slice(2), query);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      throw new HttpError(405, `Method ${req.method} not allowed`, { Allow: 'GET, HEAD' });
    }
    const path = segments.join('/');
    if (path === DISCOVERY_FILE) {
      const doc = options.baseUrl ? jsonPayload({ 'modules.v1': modulesServiceUrl(options.baseUrl) }) : await mirror.document(DISCOVERY_FILE);
      return sendPayload(req, res, doc, 200, { 'Cache-Control': CACHE_SHORT });
    }
    if (segments[0] === 'v1' && segments[1] === 'modules') return handleModules(ctx, req, res, segments.slice(2), query);
    if (segments[0] === 'v2' && segments[1] === 'modules') return handleDownloadsSummary(ctx, req, res, segments.slice(2));
    if (segments.some((s) => s.startsWith('.'))) throw new HttpError(404, 'Not found');
    return ctx.serveFile(req, res, path, { 'Cache-Control': CACHE_SHORT });
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    const started = performance.now();
    const url = req.url;
    res.on('finish', () => options.log?.(`${req.method} ${url} ${res.statusCode} ${(performance.now() - started).toFixed(1)}ms`));
    handle(req, res).catch((error: unknown) => {
      const httpError = error instanceof HttpError ? error : new HttpError(500, 'Internal error');
      // A 500 is a bug in modmirror: always say so, even with --quiet.
      if (!(error instanceof HttpError)) console.error(`error: ${req.method} ${req.url}: ${(error as Error).stack ?? String(error)}`);
      if (res.headersSent) res.destroy();
      else sendError(req, res, httpError);
    });
  };

  const server = options.tls
    ? createHttpsServer({ cert: readTls(options.tls.cert, '--tls-cert'), key: readTls(options.tls.key, '--tls-key') }, onRequest)
    : createHttpServer(onRequest);
  server.on('clientError', (error: ClientError, socket) => {
    // Malformed or oversized requests never reach a handler: answer them here, then close.
    if (socket.writable) socket.end(clientErrorResponse(error));
    else socket.destroy();
  });
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(new MirrorError('USAGE', `Cannot listen on ${options.host}:${options.port}: ${error.message}`, { hint: 'Choose another --port or --host.', cause: error })),
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

/** Spec 7: JSON:API error objects under /api/v2 (7.1), the registry's `{"errors": [...]}` everywhere else (7.2). */
function sendError(req: IncomingMessage, res: ServerResponse, error: HttpError): void {
  if (!isManagementTarget(req.url ?? '/')) return sendRegistryError(req, res, error);
  sendApiError(req, res, new ApiError(error.status, (STATUS_CODES[error.status] ?? 'error').toLowerCase(), error.message), error.headers);
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
  const [status, text] = overflow ? [431, 'Request Header Fields Too Large'] : [400, 'Bad Request'];
  const target = /^[A-Z]+ (\S+)/.exec(error.rawPacket?.toString('latin1', 0, 1024) ?? '')?.[1];
  const detail = overflow ? `The request line and headers are larger than ${maxHeaderSize} bytes.` : 'The request is not valid HTTP/1.1.';
  const [type, body] = target !== undefined && isManagementTarget(target) ? [JSONAPI_TYPE, apiErrorBody(new ApiError(status, text.toLowerCase(), detail))] : [JSON_TYPE, registryErrorBody(text)];
  return Buffer.concat([Buffer.from(`HTTP/1.1 ${status} ${text}\r\nContent-Type: ${type}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`), body]);
}

/**
 * Whether a request is for the management API: its first two path segments are
 * `api` and `v2`. They are decoded as parseTarget does, but what it refuses is
 * kept as is, so that a malformed management URL still gets that API's errors.
 */
function isManagementTarget(url: string): boolean {
  const path = url.split('?', 1)[0]!;
  const [first, second] = path.split('/').filter((s) => s !== '').slice(0, 2).map(decodeLeniently);
  return first === 'api' && second === 'v2';
}

function decodeLeniently(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Decoded path segments; anything that could step outside the tree is refused. */
function parseTarget(url: string): { segments: string[]; query: URLSearchParams } {
  if (url.length > MAX_URL_LENGTH) throw new HttpError(414, `URL too long: the limit is ${MAX_URL_LENGTH} characters`);
  const q = url.indexOf('?');
  const rawPath = q === -1 ? url : url.slice(0, q);
  if (!rawPath.startsWith('/')) throw new HttpError(400, 'Invalid path');
  const segments: string[] = [];
  for (const raw of rawPath.split('/')) {
    if (raw === '') continue;
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      throw new HttpError(400, 'Invalid percent-encoding in path');
    }
    if (segment === '.' || segment === '..' || /[/\\\0]/.test(segment)) throw new HttpError(400, 'Invalid path');
    segments.push(segment);
  }
  return { segments, query: new URLSearchParams(q === -1 ? '' : url.slice(q + 1)) };
}

type Sirv = ReturnType<typeof sirv>;

/** Serves one file of the tree through sirv, after checking it (symlinks included) stays inside the tree. */
function serveStatic(files: Sirv, root: string, req: IncomingMessage, res: ServerResponse, rel: string, headers: Record<string, string>): Promise<void> {
  let real: string;
  try {
    real = realpathSync(join(root, rel));
  } catch {
    return Promise.reject(new HttpError(404, 'Not found'));
  }
  if (real !== root && !real.startsWith(root + sep)) return Promise.reject(new HttpError(404, 'Not found'));
  return new Promise((resolve, reject) => {
    const originalUrl = req.url;
    req.url = `/${rel.split('/').map(encodeURIComponent).join('/')}`;
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    if (rel.endsWith('.gz')) sendWithoutContentEncoding(res);
    const done = () => {
      req.url = originalUrl;
      resolve();
    };
    res.on('finish', done);
    res.on('close', done);
    files(req, res, () => {
      req.url = originalUrl;
      for (const name of Object.keys(headers)) res.removeHeader(name);
      reject(new HttpError(404, 'Not found'));
    });
  });
}

/**
 * sirv labels every `.gz` file `Content-Encoding: gzip`, whatever its options
 * say. For an archive that is wrong: the gzip is the file itself, and Go's
 * HTTP client (Terraform, OpenTofu, go-getter), browsers, fetch and
 * `curl --compressed` would all undo it and hand over a bare tar.
 */
function sendWithoutContentEncoding(res: ServerResponse): void {
  const writeHead = res.writeHead;
  res.writeHead = function (this: ServerResponse, status: number, ...rest: unknown[]) {
    const headers = rest.find((arg): arg is Record<string, unknown> => typeof arg === 'object' && arg !== null && !Array.isArray(arg));
    if (headers) delete headers['Content-Encoding'];
    this.removeHeader('Content-Encoding');
    return writeHead.apply(this, [status, ...rest] as Parameters<typeof writeHead>);
  } as typeof res.writeHead;
}

function realpathOrFail(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    throw new MirrorError('OUTPUT_FAILED', `The directory "${dir}" does not exist.`, { hint: 'Did you build the mirror? Run modmirror build first, or pass --dir.' });
  }
}

function readTls(file: string, flag: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new MirrorError('USAGE', `Cannot read ${flag} "${file}": ${(error as Error).message}`, { cause: error });
  }
}

