// One record per request, filled in as the request is routed and answered,
// and the log line made of it: the text line serve has always written, or
// with `--log-format json` one JSON object per line. Neither carries a token
// (only who it stands for) nor a raw control character from the request: a
// client cannot start a line or forge a field of its own. Each request has
// an id, sent back as X-Request-Id: the one a proxy or client sent, when it
// looks like an id, so a request can be followed from the proxy's log to
// serve's; else one of serve's own.

import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Caller } from './access.js';

export type LogFormat = 'text' | 'json';
export const LOG_FORMATS: readonly LogFormat[] = ['text', 'json'];

export interface RequestRecord {
  /** The request's X-Request-Id when it is one (REQUEST_ID); else unique in this process's life, and across restarts: a random prefix and a sequence number. */
  id: string;
  method: string;
  /** The request target, with any archive URL signature masked. */
  target: string;
  /** The route class (routes/index.ts), or what answered before routing: management, upload, login, metrics, bad_request. */
  route: string;
  /** performance.now() when the request came in. */
  started: number;
  /** Body bytes handed to the connection so far (after compression). */
  bodyBytes: number;
  caller?: Caller;
  /** NAMESPACE/NAME/PROVIDER and version, where the path names them. */
  module?: string;
  version?: string;
}

const PREFIX = randomBytes(4).toString('hex');
let sequence = 0;

/**
 * An incoming X-Request-Id kept as the request's id: 1 to 128 letters, digits and `._~:/+=@-` (UUIDs, nginx's
 * `$request_id`, base64 and most trace ids). Anything else (longer, with a space, a quote, a control character,
 * or two headers joined by a comma) is replaced by serve's own id rather than cleaned: an id is either the
 * caller's, whole, or not theirs at all.
 */
export const REQUEST_ID = /^[A-Za-z0-9._~:/+=@-]{1,128}$/;

/** A request's record, and its X-Request-Id header set on the response; wraps the response's write and end to count the body bytes it sends. */
export function startRecord(req: IncomingMessage, res: ServerResponse, target: string): RequestRecord {
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : `${PREFIX}-${(++sequence).toString(36)}`;
  res.setHeader('X-Request-Id', id);
  const record: RequestRecord = {
    id,
    method: req.method ?? 'GET',
    target: target.replace(/([?&]signature=)[^&]*/, '$1...'),
    route: 'unrouted',
    started: performance.now(),
    bodyBytes: 0,
  };
  /* eslint-disable @typescript-eslint/unbound-method -- applied with the response as `this` below */
  const write = res.write;
  const end = res.end;
  /* eslint-enable @typescript-eslint/unbound-method */
  res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
    record.bodyBytes += byteLength(chunk, rest[0]);
    return write.apply(this, [chunk, ...rest] as Parameters<typeof write>);
  } as typeof write;
  res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
    if (typeof chunk !== 'function') record.bodyBytes += byteLength(chunk, rest[0]);
    return end.apply(this, [chunk, ...rest] as Parameters<typeof end>);
  } as typeof end;
  return record;
}

function byteLength(chunk: unknown, encoding: unknown): number {
  if (typeof chunk === 'string') return Buffer.byteLength(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
  return chunk instanceof Uint8Array ? chunk.byteLength : 0;
}

/** The module and version a route's parameters name, for the record. */
export function nameModule(record: RequestRecord, params: Record<string, string>): void {
  const { namespace, name, provider, version } = params;
  if (namespace !== undefined && name !== undefined && provider !== undefined) record.module = `${namespace}/${name}/${provider}`;
  if (version !== undefined && record.module !== undefined) record.version = version;
}

/** serve's text line: `METHOD TARGET STATUS 1.2ms`, anything outside printable ASCII percent-encoded. */
export function textLine(record: RequestRecord, status: number, ms: number): string {
  const target = record.target.replace(/[^!-~]/gu, (c) => encodeURIComponent(c));
  return `${record.method} ${target} ${status} ${ms.toFixed(1)}ms`;
}

/** One JSON object: its strings escaped to printable ASCII. */
export function jsonLine(record: RequestRecord, status: number, ms: number, now = new Date()): string {
  const caller = record.caller;
  const line = {
    time: now.toISOString(),
    id: record.id,
    method: record.method,
    route: record.route,
    target: record.target,
    status,
    bytes: record.bodyBytes,
    duration_ms: Math.round(ms * 10) / 10,
    ...(caller?.organization !== undefined ? { organization: caller.organization } : {}),
    ...(caller?.team !== undefined ? { team: caller.team } : {}),
    ...(caller?.user !== undefined ? { user: caller.user } : {}),
    ...(record.module !== undefined ? { module: record.module } : {}),
    ...(record.version !== undefined ? { version: record.version } : {}),
  };
  return JSON.stringify(line).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
