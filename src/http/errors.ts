// The one place that turns an error into an HTTP answer, for every route of
// `modmirror serve`: the status of each error code, and the two bodies spec 7
// defines, JSON:API error objects under /api/v2 (7.1) and the registry's
// `{"errors": ["..."]}` everywhere else (7.2). Routes only throw MirrorError.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { MirrorError, type ErrorCode } from '../errors.js';
import { JSON_TYPE, JSONAPI_TYPE } from '../protocol/headers.js';

interface Status {
  status: number;
  /** The JSON:API error object's `title`: the reason phrase in lower case, or what was wrong (422). */
  title: string;
}

/**
 * The codes a request can meet on purpose. Every other code, and any error
 * without one, is the server's own fault: a 500, never "retry later", so a
 * hand-edited, invalid data file is reported as what it is.
 */
const STATUS_OF: Partial<Record<ErrorCode, Status>> = {
  BAD_REQUEST: { status: 400, title: 'bad request' },
  UNAUTHORIZED: { status: 401, title: 'unauthorized' },
  FORBIDDEN: { status: 403, title: 'forbidden' },
  NOT_FOUND: { status: 404, title: 'not found' },
  METHOD_NOT_ALLOWED: { status: 405, title: 'method not allowed' },
  CONFLICT: { status: 409, title: 'conflict' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'payload too large' },
  URI_TOO_LONG: { status: 414, title: 'uri too long' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'unsupported media type' },
  INVALID_ATTRIBUTE: { status: 422, title: 'invalid attribute' },
  UNPROCESSABLE: { status: 422, title: 'unprocessable entity' },
  HEADERS_TOO_LARGE: { status: 431, title: 'request header fields too large' },
  // The mirror is signed and the server has no key to sign a change to it: its setup's to fix, not worth retrying as it is.
  SIGNING_KEY_REQUIRED: { status: 409, title: 'conflict' },
  // Another writer holds the data folder's lock: the one condition worth retrying.
  LOCK_BUSY: { status: 503, title: 'service unavailable' },
  // serve --upstream, holding nothing to answer with: the upstream's failure, never the server's own.
  BAD_GATEWAY: { status: 502, title: 'bad gateway' },
  GATEWAY_TIMEOUT: { status: 504, title: 'gateway timeout' },
};
const INTERNAL: Status = { status: 500, title: 'internal server error' };

/** A writer holds the lock for milliseconds; a second is a polite wait. */
const RETRY_AFTER_SECONDS = '1';

/** Spec 7.1 under /api/v2, spec 7.2 everywhere else. */
export type ErrorFormat = 'registry' | 'jsonapi';

export interface ErrorAnswer {
  status: number;
  /** Content-Type and Content-Length, then what the error adds (Allow, Retry-After). */
  headers: Record<string, string | number>;
  body: Buffer;
}

/** The HTTP status for an error. */
export function statusOf(error: unknown): number {
  return statusEntry(error).status;
}

function statusEntry(error: unknown): Status {
  return (error instanceof MirrorError && STATUS_OF[error.code]) || INTERNAL;
}

/** The whole answer to an error, in the format of the API the request was for. */
export function errorAnswer(error: unknown, format: ErrorFormat): ErrorAnswer {
  const { status, title } = statusEntry(error);
  // A 500's message speaks of the server's insides (file paths, a bug), not of the request, and
  // anyone may cause one: the body names only the code, and the server's log says the rest.
  const message =
    status !== 500
      ? (error as MirrorError).message
      : error instanceof MirrorError
        ? `Internal error (${error.code}): the server's log says what failed.`
        : 'Internal error';
  const pointer = error instanceof MirrorError ? error.pointer : undefined;
  const body = format === 'jsonapi' ? jsonApiErrorBody(status, title, message, pointer) : registryErrorBody(message);
  const headers: Record<string, string | number> = { 'Content-Type': format === 'jsonapi' ? JSONAPI_TYPE : JSON_TYPE, 'Content-Length': body.length };
  if (error instanceof MirrorError && error.allow) headers['Allow'] = error.allow.join(', ');
  if (error instanceof MirrorError && error.code === 'LOCK_BUSY') headers['Retry-After'] = RETRY_AFTER_SECONDS;
  return { status, headers, body };
}

export function sendError(req: IncomingMessage, res: ServerResponse, error: unknown, format: ErrorFormat): void {
  const answer = errorAnswer(error, format);
  res.writeHead(answer.status, answer.headers);
  res.end(req.method === 'HEAD' ? undefined : answer.body);
}

/** Spec 7.2: `{"errors": ["..."]}`. */
function registryErrorBody(message: string): Buffer {
  return Buffer.from(`${JSON.stringify({ errors: [message] })}\n`);
}

/** Spec 7.1: one JSON:API error object. */
function jsonApiErrorBody(status: number, title: string, detail: string, pointer: string | undefined): Buffer {
  return Buffer.from(JSON.stringify({ errors: [{ status: String(status), title, detail, ...(pointer ? { source: { pointer } } : {}) }] }));
}
