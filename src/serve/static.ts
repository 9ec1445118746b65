// Files of the tree through sirv: only inside the tree (symlinks included),
// and archives exactly as stored.

import { realpathSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join, sep } from 'node:path';
import sirv from 'sirv';
import { ARCHIVE_TYPE } from '../protocol/headers.js';
import { notFound } from './registry.js';

type Sirv = ReturnType<typeof sirv>;

/** A function serving one file of the tree at `root`, with extra headers. */
export function staticFiles(root: string): (req: IncomingMessage, res: ServerResponse, rel: string, headers: Record<string, string>) => Promise<void> {
  // No `gzip`: the tree holds no precompressed copies, and with it sirv would answer
  // `x.tar` with `x.tar.gz` encoded. JSON documents are compressed by sendPayload.
  const files = sirv(root, { dev: true, etag: true, dotfiles: false });
  const inside = insideTree(root);
  return (req, res, rel, headers) => serveStatic(files, root, inside, req, res, rel, headers);
}

/**
 * Whether a real path is inside the tree. The tree's own real path changes
 * with every write (its link names a new generation), so it is looked up again
 * only when a path is not inside the one seen last.
 */
function insideTree(root: string): (real: string) => boolean {
  let realRoot = '';
  const within = (real: string) => real === realRoot || real.startsWith(realRoot + sep);
  return (real) => {
    if (realRoot !== '' && within(real)) return true;
    try {
      realRoot = realpathSync(root);
    } catch {
      return false;
    }
    return within(real);
  };
}

/** Serves one file of the tree through sirv, after checking it (symlinks included) stays inside the tree. */
function serveStatic(
  files: Sirv,
  root: string,
  inside: (real: string) => boolean,
  req: IncomingMessage,
  res: ServerResponse,
  rel: string,
  headers: Record<string, string>,
): Promise<void> {
  let real: string;
  try {
    real = realpathSync(join(root, rel));
  } catch {
    return Promise.reject(notFound());
  }
  if (!inside(real)) return Promise.reject(notFound());
  return new Promise((resolve, reject) => {
    const originalUrl = req.url;
    req.url = `/${rel.split('/').map(encodeSegment).join('/')}`;
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    if (rel.endsWith('.gz')) sendGzipAsStored(res, headers['Content-Type'] ?? ARCHIVE_TYPE);
    const done = () => {
      req.url = originalUrl;
      resolve();
    };
    res.on('finish', done);
    res.on('close', done);
    files(req, res, () => {
      req.url = originalUrl;
      for (const name of Object.keys(headers)) res.removeHeader(name);
      reject(notFound());
    });
  });
}

/**
 * sirv decodes the path with decodeURI, which leaves the reserved characters
 * (":" of a provider host name with a port, "@", "+", ...) escaped: they are
 * legal in a path, so they go as they are.
 */
function encodeSegment(segment: string): string {
  return encodeURIComponent(segment).replace(/%(3A|40|2B|24|2C|3B|3D|26)/g, (escaped) => decodeURIComponent(escaped));
}

/**
 * sirv labels every `.gz` file `Content-Encoding: gzip`, whatever its options
 * say, and types it by the name inside (`x.html.gz` as text/html). For an
 * archive or a stored README rendering that is wrong: the gzip is the file
 * itself, and Go's HTTP client (Terraform, OpenTofu, go-getter), browsers,
 * fetch and `curl --compressed` would all undo it and hand over the inside.
 * Sent as stored instead, typed as a gzip file (as nginx types it) unless the
 * route named a type.
 */
function sendGzipAsStored(res: ServerResponse, contentType: string): void {
  // eslint-disable-next-line @typescript-eslint/unbound-method -- applied with the response as `this` below
  const writeHead = res.writeHead;
  res.writeHead = function (this: ServerResponse, status: number, ...rest: unknown[]) {
    const headers = rest.find((arg): arg is Record<string, unknown> => typeof arg === 'object' && arg !== null && !Array.isArray(arg));
    if (headers) {
      delete headers['Content-Encoding'];
      headers['Content-Type'] = contentType;
    }
    this.removeHeader('Content-Encoding');
    this.setHeader('Content-Type', contentType);
    return writeHead.apply(this, [status, ...rest] as Parameters<typeof writeHead>);
  };
}
