// Where `/metrics` is answered: on serve's own port (in private mode to a
// site administrator's token only, as the metrics name every module that is
// downloaded), or with `--metrics-listen` on a listener of its own that
// answers nothing else, for a scraper on a network the registry's clients do
// not reach.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MirrorError } from '../errors.js';
import { sendError } from '../http/errors.js';
import { payload, sendPayload } from '../http/payload.js';
import { CACHE_NO_STORE } from '../protocol/headers.js';
import type { PrivateAccess } from './access.js';
import type { ServeMetrics } from './metrics.js';
import { notFound } from './registry.js';

export const METRICS_PATH = '/metrics';

/** The exposition for a request to serve's own port; in private mode 401 without a token, and the 404 of a path that is not there to anyone but a site administrator. */
export async function sendMetrics(req: IncomingMessage, res: ServerResponse, metrics: ServeMetrics, access: PrivateAccess | undefined): Promise<void> {
  if (access) {
    const caller = access.caller(req);
    if (!caller.siteAdmin) {
      access.refuse(req, caller.label, '/metrics needs a site administrator token');
      throw notFound();
    }
  }
  if (req.method !== 'GET' && req.method !== 'HEAD')
    throw new MirrorError('METHOD_NOT_ALLOWED', `Method ${req.method} not allowed`, { allow: ['GET', 'HEAD'] });
  sendPayload(req, res, payload(await metrics.text(), metrics.contentType), 200, { 'Cache-Control': CACHE_NO_STORE });
}

/** A listener that answers GET /metrics and nothing else; its URL. */
export async function listenForMetrics(host: string, port: number, metrics: ServeMetrics): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    const answer = path === METRICS_PATH ? sendMetrics(req, res, metrics, undefined) : Promise.reject(notFound());
    answer.catch((error: unknown) => {
      if (res.headersSent) res.destroy();
      else sendError(req, res, error, 'registry');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new MirrorError('SERVE_FAILED', `Cannot listen on ${host}:${port} for --metrics-listen: ${error.message}`, {
          hint: 'Choose another --metrics-listen address, or stop what is listening there.',
          cause: error,
        }),
      ),
    );
    server.listen(port, host, resolve);
  });
  const bound = (server.address() as AddressInfo).port;
  return { server, url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}${METRICS_PATH}` };
}
