// HTTP for `sync`: undici with redirects, a bearer token sent only to the
// upstream's own origin, and retries of what the registry protocol says may
// be retried (spec 7.2: 429 and 5xx, plus dropped connections), with
// exponential backoff that gives way to the server's Retry-After.

import { closeSync, createReadStream, mkdtempSync, openSync, readFileSync, writeSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import tls from 'node:tls';
import { Agent, interceptors, request, type Dispatcher } from 'undici';
import { MirrorError, messageOf } from '../errors.js';
import { VERSION } from '../version.js';

export interface HttpOptions {
  /** Bearer token for `tokenOrigin` (the upstream registry); never sent elsewhere. */
  token?: string;
  tokenOrigin?: string;
  /** Progress and retry notes. */
  log: (line: string) => void;
  maxAttempts?: number;
  baseDelayMs?: number;
  /** How long to wait for an answer's headers (default 30 s). */
  headersTimeoutMs?: number;
  /** How long a body may send nothing before the request fails (default 60 s). */
  bodyTimeoutMs?: number;
  /** More CA certificates (PEM) to trust beside Node.js's own and NODE_EXTRA_CA_CERTS (serve --upstream-ca). */
  ca?: string[];
  /**
   * JSON documents (discovery, version lists, download documents) must come
   * from the origin they were asked at: a redirect to another host is
   * refused (serve --upstream, which answers clients with what it gets).
   * Archives may still be redirected, as release hosts do.
   */
  sameOriginDocuments?: boolean;
}

/** A server's Retry-After longer than this is not waited out: the run fails and can be repeated later. */
const MAX_WAIT_MS = 120_000;
const MAX_JSON_BYTES = 32 * 1024 * 1024;
const MAX_REDIRECTS = 5;
/**
 * Connection-level failures worth another try: the next attempt may well get
 * through. A refused connection is not one: nothing listens there.
 */
const TRANSIENT = /^(UND_ERR_(SOCKET|CLOSED|CONNECT_TIMEOUT|HEADERS_TIMEOUT|BODY_TIMEOUT|RES_CONTENT_LENGTH_MISMATCH)|ECONNRESET|ETIMEDOUT|EPIPE|EAI_AGAIN)$/;
/** What one response body may put on disk while it is taken in (spool below): more than any archive or document sync fetches. */
const MAX_SPOOL_BYTES = 1024 * 1024 * 1024;
/** A body up to this size is held in memory rather than on disk while it is taken in. */
const SPOOL_IN_MEMORY_BYTES = 4 * 1024 * 1024;

/** An answer that spec 7.2 allows retrying: 429 or 5xx. */
class RetryableStatus extends Error {
  constructor(
    readonly status: number,
    readonly retryAfterMs: number | undefined,
    message: string,
  ) {
    super(message);
  }
}

export class HttpClient {
  private readonly dispatcher: Dispatcher;
  /** Without the redirect interceptor: for documents whose redirects are checked here (sameOriginDocuments). */
  private readonly direct: Dispatcher | undefined;
  private readonly maxAttempts: number;
  private readonly baseDelayMs: number;

  constructor(private readonly options: HttpOptions) {
    // One context for every connection: given the CA list itself, each TLS connection would parse all of it again
    // (the system's roots too), some milliseconds a connection.
    const trust = options.ca && options.ca.length > 0 ? { secureContext: tls.createSecureContext({ ca: trustedCas(options.ca) }) } : {};
    const agent = new Agent({
      connect: { timeout: 15_000, ...trust },
      headersTimeout: options.headersTimeoutMs ?? 30_000,
      bodyTimeout: options.bodyTimeoutMs ?? 60_000,
    });
    this.dispatcher = agent.compose(interceptors.redirect({ maxRedirections: MAX_REDIRECTS }));
    if (options.sameOriginDocuments) this.direct = agent;
    this.maxAttempts = options.maxAttempts ?? 5;
    this.baseDelayMs = options.baseDelayMs ?? 500;
  }

  /** GET a JSON document; `undefined` for a 204. */
  async json(url: URL, what: string): Promise<{ value: unknown; headers: Record<string, string> }> {
    return this.get(
      url,
      what,
      async (body, headers, status) => {
        if (status === 204) return { value: undefined, headers };
        let size = 0;
        const chunks: Buffer[] = [];
        for await (const chunk of body as AsyncIterable<Buffer>) {
          size += chunk.length;
          if (size > MAX_JSON_BYTES) throw fatal(`${what}: ${url} sent more than ${MAX_JSON_BYTES} bytes of JSON`);
          chunks.push(chunk);
        }
        const text = Buffer.concat(chunks).toString('utf8');
        try {
          return { value: text === '' ? undefined : (JSON.parse(text) as unknown), headers };
        } catch {
          throw fatal(`${what}: ${url} did not answer JSON (${text.slice(0, 80).replace(/\s+/g, ' ')}...)`);
        }
      },
      true,
    );
  }

  /**
   * GET `url` and hand a 2xx body to `consume`; retried whole on 429, 5xx
   * and dropped connections, so `consume` must start afresh each time.
   */
  async get<T>(url: URL, what: string, consume: (body: Readable, headers: Record<string, string>, status: number) => Promise<T>, document = false): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.once(url, what, consume, document ? this.direct : undefined);
      } catch (error) {
        const wait = this.retryWait(error, attempt);
        if (wait === undefined || attempt >= this.maxAttempts) throw finalError(error, url, what, attempt);
        if (wait > MAX_WAIT_MS) {
          throw new MirrorError('UPSTREAM_FAILED', `${what}: ${url} asks to wait ${Math.round(wait / 1000)} s before trying again.`, {
            hint: 'Run sync again later: versions already copied are kept and not fetched again.',
          });
        }
        this.options.log(`${what}: ${describe(error)}; retrying in ${(wait / 1000).toFixed(1)} s (attempt ${attempt + 1} of ${this.maxAttempts})`);
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }

  /** One request; with `direct`, redirects are followed here, within the origin asked at only. */
  private async once<T>(
    url: URL,
    what: string,
    consume: (body: Readable, headers: Record<string, string>, status: number) => Promise<T>,
    direct?: Dispatcher,
    hops = 0,
  ): Promise<T> {
    const headers: Record<string, string> = { 'user-agent': `modmirror/${VERSION}`, accept: 'application/json, */*' };
    if (this.options.token && url.origin === this.options.tokenOrigin) headers['authorization'] = `Bearer ${this.options.token}`;
    const response = await request(url, { dispatcher: direct ?? this.dispatcher, headers });
    const flat = Object.fromEntries(Object.entries(response.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v ?? '')]));
    const status = response.statusCode;
    if (direct && [301, 302, 303, 307, 308].includes(status) && flat['location']) {
      await response.body.dump().catch(() => {});
      const target = new URL(flat['location'], url);
      if (target.origin !== url.origin)
        throw fatal(`${what}: ${url} redirects to ${target.origin}, not its own origin: refused, as a registry's documents come from the registry itself`);
      if (hops >= MAX_REDIRECTS) throw fatal(`${what}: ${url} redirects more than ${MAX_REDIRECTS} times`);
      return this.once(target, what, consume, direct, hops + 1);
    }
    if (status === 429 || status >= 500) {
      await response.body.dump().catch(() => {});
      throw new RetryableStatus(status, retryAfterMs(flat['retry-after']), `answered ${status}`);
    }
    if (status < 200 || status > 299) {
      const detail = errorDetail(await response.body.text().catch(() => ''));
      throw fatal(`${what}: GET ${url} answered ${status}${detail}`, status);
    }
    if (status === 204) {
      await response.body.dump().catch(() => {});
      return consume(Readable.from([]), flat, status);
    }
    const spooled = await spool(response.body, url);
    try {
      return await consume(spooled.body, flat, status);
    } finally {
      spooled.body.destroy();
      await spooled.remove();
    }
  }

  private retryWait(error: unknown, attempt: number): number | undefined {
    const backoff = Math.min(this.baseDelayMs * 2 ** (attempt - 1), 8000);
    if (error instanceof RetryableStatus) return error.retryAfterMs ?? backoff;
    const code = (error as { code?: string })?.code;
    return typeof code === 'string' && TRANSIENT.test(code) ? backoff : undefined;
  }
}

/**
 * A response body taken in whole as it arrives, in memory while it is small
 * (a document, most module archives), else into a temporary file, then read
 * from there. Read only as fast as its consumer (gunzip, tar, the disk)
 * takes it, undici 7 leaves its HTTP/1 parser paused, and when the server
 * then closes the connection it throws from the socket's 'end' handler,
 * where nothing can catch it (nodejs/undici#5360; fixed in undici 8, which
 * needs Node 22). Taking each chunk the moment it comes never pauses the
 * parser, and a connection closed mid-body is an error of this promise.
 */
async function spool(body: Readable, url: URL): Promise<{ body: Readable; remove: () => Promise<void> }> {
  const held: Buffer[] = [];
  let size = 0;
  let spilled: { folder: string; file: string; fd: number } | undefined;
  const remove = () => (spilled ? rm(spilled.folder, { recursive: true, force: true }) : Promise.resolve());
  try {
    await new Promise<void>((resolve, reject) => {
      body.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_SPOOL_BYTES) return body.destroy(fatal(`${url} sent more than ${MAX_SPOOL_BYTES / 1024 / 1024} MiB`));
        if (!spilled && size <= SPOOL_IN_MEMORY_BYTES) return void held.push(chunk);
        if (!spilled) {
          const folder = mkdtempSync(join(tmpdir(), 'modmirror-sync-body-'));
          const file = join(folder, 'body');
          spilled = { folder, file, fd: openSync(file, 'w', 0o600) };
          for (const h of held.splice(0)) writeSync(spilled.fd, h);
        }
        writeSync(spilled.fd, chunk);
      });
      body.once('end', resolve);
      body.once('error', reject);
    });
  } catch (error) {
    if (spilled) closeSync(spilled.fd);
    await remove();
    throw error;
  }
  if (!spilled) return { body: Readable.from(held, { objectMode: false }), remove };
  closeSync(spilled.fd);
  return { body: createReadStream(spilled.file), remove };
}

/**
 * A connection's `ca` replaces the CAs Node.js trusts rather than adding to
 * them: the bundled ones, the system's where this Node.js reads them, and
 * NODE_EXTRA_CA_CERTS are named again beside the extra ones.
 */
function trustedCas(extra: string[]): string[] {
  const system = (tls as { getCACertificates?: (kind: string) => string[] }).getCACertificates;
  const own = system ? [...system('default'), ...system('system')] : [...tls.rootCertificates];
  const fromEnv = process.env['NODE_EXTRA_CA_CERTS'];
  let env: string[] = [];
  if (fromEnv) {
    try {
      env = [readFileSync(fromEnv, 'utf8')];
    } catch {
      // Node.js warns about an unreadable NODE_EXTRA_CA_CERTS at start-up and goes on without it; so does this.
    }
  }
  return [...new Set([...own, ...env, ...extra])];
}

/** Retry-After as seconds or an HTTP date (RFC 9110 10.2.3); undefined when absent or unreadable. */
export function retryAfterMs(header: string | undefined, now = Date.now()): number | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(header)) return Number(header) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** A final (not retried) HTTP answer outside 2xx; the status lets a caller tell "no such module" from other failures. */
export class UpstreamStatusError extends MirrorError {
  constructor(
    message: string,
    readonly status: number,
    options: { hint?: string },
  ) {
    super('UPSTREAM_FAILED', message, options);
  }
}

function fatal(message: string, status?: number): MirrorError {
  const hint =
    status === 401 || status === 403
      ? 'The upstream wants credentials: put a token in MODMIRROR_SYNC_TOKEN (or TF_TOKEN_<host>, or the variable named by --token-env).'
      : status === 404
        ? 'Check the module address and version on the upstream.'
        : undefined;
  const options = hint === undefined ? {} : { hint };
  return status === undefined ? new MirrorError('UPSTREAM_FAILED', message, options) : new UpstreamStatusError(message, status, options);
}

/** TLS errors that say no CA Node.js trusts signed the upstream's certificate: most often a private CA. */
const UNTRUSTED_CERTIFICATE = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
]);

function finalError(error: unknown, url: URL, what: string, attempts: number): unknown {
  if (error instanceof MirrorError) return error;
  const tries = attempts > 1 ? ` after ${attempts} attempts` : '';
  const code = (error as { code?: string })?.code;
  const unreachable = code === 'ECONNREFUSED' || code === 'ENOTFOUND';
  return new MirrorError('UPSTREAM_FAILED', `${what}: GET ${url} failed${tries}: ${describe(error)}`, {
    hint: unreachable
      ? `Check the host and port in ${url.origin} and that the upstream is running.`
      : code !== undefined && UNTRUSTED_CERTIFICATE.has(code)
        ? `The certificate of ${url.host} is not trusted: if a private CA signed it, set NODE_EXTRA_CA_CERTS=/path/ca.pem (that CA's certificate, PEM) and run sync again.`
        : 'Run sync again later: versions already copied are kept and not fetched again.',
    cause: error,
  });
}

function describe(error: unknown): string {
  if (error instanceof RetryableStatus) return error.message;
  const code = (error as { code?: string })?.code;
  return code ? `${messageOf(error)} (${code})` : messageOf(error);
}

/** The registry's `{errors: [...]}` (spec 7.2), when the body has one. */
function errorDetail(text: string): string {
  try {
    const errors = (JSON.parse(text) as { errors?: unknown }).errors;
    return Array.isArray(errors) && errors.length > 0 ? `: ${errors.map(String).join('; ').slice(0, 500)}` : '';
  } catch {
    return '';
  }
}
