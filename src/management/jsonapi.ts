// JSON:API plumbing for the management shim (spec 2.1, 7.1, 8): the errors
// its routes throw, request bodies, includes, pagination.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { MirrorError } from '../errors.js';
import { JSON_TYPE, JSONAPI_TYPE } from '../protocol/headers.js';

const MAX_BODY_BYTES = 1024 * 1024;
/**
 * Deeper than any JSON:API document (a relationship's data is at depth 4):
 * past it a body is refused before JSON.parse, whose time on a megabyte of
 * `[[[...` would otherwise be spent on the server's only thread.
 */
const MAX_BODY_DEPTH = 32;

// Errors are MirrorErrors with a request's code; http/errors.ts renders them as spec 7.1 says.
/** What a management route answers: its status and, but for a 204, its JSON:API document. */
export type Reply = { status: number; document?: unknown };

export const notFound = () => new MirrorError('NOT_FOUND', 'The resource was not found, or you are not authorized to see it.');
export const unauthorized = () => new MirrorError('UNAUTHORIZED', 'A valid bearer token is required (Authorization: Bearer <token>).');
export const invalid = (detail: string, pointer: string) => new MirrorError('INVALID_ATTRIBUTE', detail, { pointer });
export const badRequest = (detail: string) => new MirrorError('BAD_REQUEST', detail);

export function sendDocument(req: IncomingMessage, res: ServerResponse, status: number, document: unknown): void {
  if (status === 204 || document === undefined) {
    res.writeHead(status);
    res.end();
    return;
  }
  const body = Buffer.from(JSON.stringify(document));
  res.writeHead(status, { 'Content-Type': JSONAPI_TYPE, 'Content-Length': body.length });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** The JSON body of a request: 415 unless JSON, 413 past 1 MiB, 400 past 32 levels of nesting or if it does not parse. */
export async function readBody(req: IncomingMessage): Promise<unknown> {
  const type = String(req.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  if (type !== JSONAPI_TYPE && type !== JSON_TYPE) {
    req.resume();
    throw new MirrorError('UNSUPPORTED_MEDIA_TYPE', `Send the body as ${JSONAPI_TYPE} (or application/json), not ${type || 'no content type'}.`);
  }
  if (Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) {
    req.resume();
    throw new MirrorError('PAYLOAD_TOO_LARGE', `The body is larger than ${MAX_BODY_BYTES} bytes.`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new MirrorError('PAYLOAD_TOO_LARGE', `The body is larger than ${MAX_BODY_BYTES} bytes.`);
    chunks.push(chunk);
  }
  const body = Buffer.concat(chunks);
  if (nestingOver(body, MAX_BODY_DEPTH)) throw badRequest(`The body nests arrays and objects deeper than ${MAX_BODY_DEPTH} levels.`);
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw badRequest(`The body is not valid JSON: ${(error as Error).message}`);
  }
}

/** Whether JSON text opens more than `limit` arrays and objects at once (brackets inside strings aside); one pass over the bytes. */
export function nestingOver(text: Buffer, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next byte (UTF-8 continuation bytes are never these)
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** `data` of a single-resource body: an object whose `type` is `type` (or empty, when `allowEmptyType`). */
export function resourceBody(body: unknown, type: string, options: { allowEmptyType?: boolean } = {}): Record<string, unknown> {
  const data = (body as { data?: unknown } | null)?.data;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw invalid('The body must have a "data" object.', '/data');
  const actual = (data as { type?: unknown }).type;
  const emptyOk = options.allowEmptyType && (actual === '' || actual === undefined);
  if (actual !== type && !emptyOk) throw invalid(`data.type must be "${type}", got ${JSON.stringify(actual)}.`, '/data/type');
  const attributes = (data as { attributes?: unknown }).attributes ?? {};
  if (typeof attributes !== 'object' || attributes === null || Array.isArray(attributes))
    throw invalid('data.attributes must be an object.', '/data/attributes');
  return attributes as Record<string, unknown>;
}

/**
 * `include` (spec 2.1): the names asked for, each in its canonical spelling
 * from `allowed` (the spec's hyphens), once, in the order asked. go-tfe v1
 * spells them with underscores (`task_results`, `policy_evaluations`), so
 * `_` and `-` are one character here; this is the one place that knows.
 * Several `include` parameters add up, as a comma list does. An unknown name
 * is a 400 whose detail says "include parameter": go-tfe turns exactly that
 * into its ErrInvalidIncludeValue.
 */
export function includesOf<T extends string>(query: URLSearchParams, allowed: readonly T[]): T[] {
  const canonical = (name: string) => name.replaceAll('_', '-');
  const wanted = query
    .getAll('include')
    .flatMap((raw) => raw.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
  const names: T[] = [];
  for (const value of wanted) {
    const name = allowed.find((a) => canonical(a) === canonical(value));
    if (name === undefined) {
      const spellings = allowed.map((a) => (a.includes('-') ? `${a} (or ${a.replaceAll('-', '_')})` : a)).join(', ');
      throw badRequest(`Invalid include parameter "${value}": use one of ${spellings}.`);
    }
    if (!names.includes(name)) names.push(name);
  }
  return names;
}

export interface Page<T> {
  items: T[];
  number: number;
  size: number;
  total: number;
}

const MAX_PAGE_SIZE = 100;

/** `page[number]` and `page[size]` (default 20, at most 100); bad values are 400s, not silently ignored. */
export function paginate<T>(items: T[], query: URLSearchParams, defaultSize = 20): Page<T> {
  const parse = (name: string, fallback: number) => {
    const raw = query.get(name);
    if (raw === null || raw === '') return fallback;
    // Safe integers only, as the registry's offset and limit: past 2^53 a number prints as 1e+24, and links built from it break.
    if (!/^\d+$/.test(raw) || Number(raw) < 1 || !Number.isSafeInteger(Number(raw))) throw badRequest(`${name} must be a positive integer, got "${raw}".`);
    return Number(raw);
  };
  const number = parse('page[number]', 1);
  const size = Math.min(parse('page[size]', defaultSize), MAX_PAGE_SIZE);
  return { items: items.slice((number - 1) * size, number * size), number, size, total: items.length };
}

/** Top-level `links` and `meta.pagination` of a list document (spec 2.5). */
export function pageLinksAndMeta(page: Page<unknown>, path: string, query: URLSearchParams) {
  const totalPages = Math.max(1, Math.ceil(page.total / page.size));
  const link = (n: number) => {
    const params = new URLSearchParams(query);
    params.set('page[number]', String(n));
    params.set('page[size]', String(page.size));
    return `${path}?${params}`;
  };
  const prev = page.number > 1 ? page.number - 1 : null;
  const next = page.number < totalPages ? page.number + 1 : null;
  return {
    links: { self: link(page.number), first: link(1), prev: prev && link(prev), next: next && link(next), last: link(totalPages) },
    meta: {
      pagination: {
        'current-page': page.number,
        'page-size': page.size,
        'prev-page': prev,
        'next-page': next,
        'total-pages': totalPages,
        'total-count': page.total,
      },
    },
  };
}
