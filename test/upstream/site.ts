// An upstream and a cache for the serve --upstream tests: the upstream a
// modmirror serve of built module folders; the cache a serve of an empty
// mirror told to fill itself from it. A counting proxy can sit between them
// to count, hold, fail or drop what the cache asks.

import { mkdirSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { expect } from 'vitest';
import { startServer, type RunningServer, type ServeOptions } from '../../src/serve/index.js';
import { runCli, writeFiles } from '../helpers.js';

/** `files` (module folders under mods/) built in `dir` and served; `tls` for HTTPS. */
export async function startUpstream(dir: string, files: Record<string, string>, tls?: ServeOptions['tls']): Promise<RunningServer> {
  writeFiles(dir, { 'mirror.config.yaml': 'sources:\n  - folder: mods\n', ...files });
  const built = await runCli(['build'], dir);
  expect(built.code, built.stderr).toBe(0);
  return startServer({ dir: join(dir, 'dist'), host: '127.0.0.1', port: 0, dataDir: join(dir, 'data'), log: () => {}, ...(tls ? { tls } : {}) });
}

/** An empty mirror in `dir`/cache, as a cache starts. */
export async function emptyMirror(dir: string): Promise<string> {
  mkdirSync(join(dir, 'empty'), { recursive: true });
  const built = await runCli(['build', '--modules', 'empty', '--mirror', 'cache'], dir);
  expect(built.code, built.stderr).toBe(0);
  return join(dir, 'cache');
}

/** serve of `dir`/cache with `upstream`; its upstream lines go to `log`. */
export async function startCache(
  dir: string,
  upstream: NonNullable<ServeOptions['upstream']>,
  log: string[],
  tls?: ServeOptions['tls'],
): Promise<RunningServer> {
  return startServer({
    dir: join(dir, 'cache'),
    host: '127.0.0.1',
    port: 0,
    dataDir: join(dir, 'data'),
    log: () => {},
    upstream: { log: (line) => log.push(line), ...upstream },
    ...(tls ? { tls } : {}),
  });
}

export interface CountingProxy {
  url: string;
  /** Paths asked for, in order. */
  paths: string[];
  /** Each request's Authorization header (empty when none), in the same order. */
  authorizations: string[];
  count(pathEnd: string): number;
  /** ok: forward; fail: answer 503; the target can be switched. */
  mode: 'ok' | 'fail';
  target: string;
  /** Requests whose path ends so wait until `release()`. */
  hold(pathEnd: string): void;
  release(): void;
  /** Resolves when a held request has arrived. */
  held(): Promise<void>;
  close(): Promise<void>;
}

/** A plain HTTP proxy in front of `target` that counts each path asked for. */
export async function countingProxy(target: string): Promise<CountingProxy> {
  let holding: string | undefined;
  let waiting: (() => void)[] = [];
  let arrived: () => void = () => {};
  let arrival = new Promise<void>((resolve) => (arrived = resolve));
  const forward = (req: IncomingMessage, res: ServerResponse) => {
    if (proxy.mode === 'fail') {
      res.writeHead(503, { 'Content-Type': 'application/json' }).end('{"errors":["down for maintenance"]}');
      return;
    }
    const out = request(
      new URL(req.url ?? '/', proxy.target),
      { method: req.method, headers: { ...req.headers, host: new URL(proxy.target).host } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.writeHead(502).end());
    out.end();
  };
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0]!;
    proxy.paths.push(path);
    proxy.authorizations.push(req.headers.authorization ?? '');
    if (holding !== undefined && path.endsWith(holding)) {
      waiting.push(() => forward(req, res));
      arrived();
      return;
    }
    forward(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxy: CountingProxy = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    paths: [],
    authorizations: [],
    count: (pathEnd) => proxy.paths.filter((p) => p.endsWith(pathEnd)).length,
    mode: 'ok',
    target,
    hold(pathEnd) {
      holding = pathEnd;
      arrival = new Promise<void>((resolve) => (arrived = resolve));
    },
    release() {
      holding = undefined;
      for (const go of waiting) go();
      waiting = [];
    },
    held: () => arrival,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  return proxy;
}
