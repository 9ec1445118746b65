// The HTTP client tests use where they stand in for a real one. Every real
// client of a registry asks for gzip and silently undoes it: Go's net/http
// (Terraform, OpenTofu, go-getter, go-tfe), browsers, Node's fetch and
// `curl --compressed`. A test client that does not would miss a body sent
// with a `Content-Encoding` it should not carry (it once did: issue 12).

import { gunzipSync } from 'node:zlib';
import { request, type Dispatcher } from 'undici';

export interface ClientResponse {
  status: number;
  /** As the client's caller sees them: without `content-encoding`/`content-length` when the body was un-gzipped, as Go does. */
  headers: Record<string, string | string[] | undefined>;
  /** The Content-Encoding the server sent, which Go hides from its caller. */
  wireEncoding: string | undefined;
  body: Buffer;
  text: string;
  json: () => any;
}

export interface ClientOptions {
  method?: 'GET' | 'HEAD' | 'POST' | 'PATCH' | 'DELETE';
  headers?: Record<string, string>;
  body?: string;
  dispatcher?: Dispatcher;
}

/** One request as Go's http.Client sends it and reads it. */
export async function clientRequest(url: string | URL, options: ClientOptions = {}): Promise<ClientResponse> {
  const method = options.method ?? 'GET';
  // Go's Transport asks for gzip on every request but HEAD and ranges (transport.go, requestedGzip).
  const asksGzip = method !== 'HEAD' && !Object.keys(options.headers ?? {}).some((h) => /^(accept-encoding|range)$/i.test(h));
  const res = await request(url, {
    method,
    headers: { ...(asksGzip ? { 'accept-encoding': 'gzip' } : {}), ...options.headers },
    body: options.body,
    dispatcher: options.dispatcher,
  });
  const raw = Buffer.from(await res.body.arrayBuffer());
  const headers = { ...res.headers };
  const wireEncoding = typeof headers['content-encoding'] === 'string' ? headers['content-encoding'] : undefined;
  let body = raw;
  if (wireEncoding === 'gzip' && raw.length > 0) {
    body = gunzipSync(raw);
    delete headers['content-encoding'];
    delete headers['content-length'];
  }
  const text = body.toString('utf8');
  return { status: res.statusCode, headers, wireEncoding, body, text, json: () => JSON.parse(text) };
}
