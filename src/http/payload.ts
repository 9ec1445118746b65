// One way to send a body, shared by the registry routes and the management
// API: a payload made once (its ETag, its gzip form) and sent many times,
// honouring If-None-Match, Accept-Encoding and HEAD.

import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { JSON_TYPE } from '../protocol/headers.js';

/** A body ready to send many times: its ETag once, its gzip form the first time a client asks. */
export interface Payload {
  body: Buffer;
  etag: string;
  type: string;
  gzipped?: Buffer;
}

const GZIP_MIN_BYTES = 1024;

export function payload(body: Buffer | string, type = JSON_TYPE): Payload {
  const buf = typeof body === 'string' ? Buffer.from(body) : body;
  const etag = `"${createHash('sha1').update(buf).digest('base64url').slice(0, 27)}"`;
  return { body: buf, etag, type };
}

/** The gzip form of a JSON (or JSON:API) body worth compressing, made once. */
export function gzipped(p: Payload): Buffer | undefined {
  if (p.body.length < GZIP_MIN_BYTES || !/[/+]json$/.test(p.type)) return undefined;
  // An output chunk no larger than the body: zlib's default 16 KB per call is garbage that builds up between GCs.
  return (p.gzipped ??= exactCopy(gzipSync(p.body, { level: 6, chunkSize: Math.min(16 * 1024, p.body.length) })));
}

/** gzipSync answers with a view of its output chunk: cached as is, a 600-byte answer would keep the whole chunk. */
function exactCopy(view: Buffer): Buffer {
  const copy = Buffer.allocUnsafeSlow(view.length);
  view.copy(copy);
  return copy;
}

/**
 * Answers computed once and sent many times, by a key naming everything they
 * depend on. Bounded by entries and bytes (keys included), so a crawler
 * walking every page cannot grow the server without limit.
 */
export class AnswerCache {
  private readonly map = new Map<string, Payload>();
  private bytes = 0;

  constructor(
    private readonly maxEntries = 5000,
    private readonly maxBytes = 16 * 1024 * 1024,
  ) {}

  get(key: string): Payload | undefined {
    return this.map.get(key);
  }

  set(key: string, answer: Payload): void {
    const size = key.length + answer.body.length;
    if (this.map.size >= this.maxEntries || this.bytes + size > this.maxBytes) {
      this.map.clear();
      this.bytes = 0;
    }
    this.map.set(key, answer);
    this.bytes += size;
  }
}

export function jsonPayload(value: unknown): Payload {
  return payload(`${JSON.stringify(value)}\n`);
}

function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header === '*' || header.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}

/** Sends a payload honouring If-None-Match, Accept-Encoding and HEAD. */
export function sendPayload(req: IncomingMessage, res: ServerResponse, p: Payload, status = 200, headers: Record<string, string> = {}): void {
  res.setHeader('ETag', p.etag);
  res.setHeader('Vary', 'Accept-Encoding');
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  if (status === 200 && etagMatches(req.headers['if-none-match'], p.etag)) {
    res.writeHead(304);
    res.end();
    return;
  }
  const compressed = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? '')) ? gzipped(p) : undefined;
  const gzip = compressed !== undefined;
  const body = compressed ?? p.body;
  res.setHeader('Content-Type', p.type);
  res.setHeader('Content-Length', body.length);
  if (gzip) res.setHeader('Content-Encoding', 'gzip');
  res.writeHead(status);
  res.end(req.method === 'HEAD' ? undefined : body);
}
