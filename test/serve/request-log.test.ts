// `serve --log-format json`: one JSON object per request, with the caller's
// organization and team (never a token), the route class, module and
// version; and no log line, JSON or text or audit, carrying a raw control
// character a request sent.

import { connect } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/serve/index.js';
import { jsonLine, startRecord, textLine, type RequestRecord } from '../../src/serve/request-log.js';
import { spawnServe } from '../helpers.js';
import { startPrivateServer, startPrivateSite, type PrivateSite } from './private-site.js';

let site: PrivateSite;
let server: RunningServer;
const lines: string[] = [];
const audit: string[] = [];

beforeAll(async () => {
  site = await startPrivateSite();
  server = await startPrivateServer(site.dir, audit, { log: (line) => lines.push(line), logFormat: 'json' });
});
afterAll(async () => {
  await server?.close();
  await site?.close();
});

const send = async (path: string, token?: string) => {
  const res = await request(new URL(path, server.url), { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const body = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, length: body.length };
};
/** The line logged for a request, once its connection has closed. */
const lineFor = async (target: string) => {
  for (let i = 0; i < 50; i++) {
    const found = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l['target'] === target);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no line for ${target}: ${lines.join('\n')}`);
};

describe('--log-format json', () => {
  it("logs a download with its route class, bytes, duration, the caller's organization and team, the module and version", async () => {
    const path = '/v1/modules/acme/hello/null/1.0.0/hello-null-1.0.0.tar.gz';
    const res = await send(path, site.tokens.team);
    expect(res.status).toBe(200);
    const line = await lineFor(path);
    expect(line).toMatchObject({
      method: 'GET',
      route: 'archive',
      status: 200,
      organization: 'acme',
      team: 'platform',
      module: 'acme/hello/null',
      version: '1.0.0',
    });
    expect(line['bytes']).toBe(res.length);
    expect(res.length).toBeGreaterThan(0);
    expect(typeof line['duration_ms']).toBe('number');
    expect(line['id']).toMatch(/^[0-9a-f]{8}-[0-9a-z]+$/);
    expect(Date.parse(line['time'] as string)).not.toBeNaN();

    await send('/v1/modules/acme/hello/null/versions', site.tokens.user);
    expect(await lineFor('/v1/modules/acme/hello/null/versions')).toMatchObject({ route: 'versions', user: 'alice', module: 'acme/hello/null' });
    await send('/v1/modules', site.tokens.organization);
    const listing = await lineFor('/v1/modules');
    expect(listing).toMatchObject({ route: 'modules_list', organization: 'acme' });
    expect(listing).not.toHaveProperty('team');
    expect(listing).not.toHaveProperty('module');
  });

  it('gives every request its own id, and never writes a token', async () => {
    await send('/.well-known/terraform.json', site.tokens.admin);
    await send('/v1/modules/acme/hello/null/1.0.0/download', site.tokens.organization);
    await send('/v1/modules', 'mm.not-a-known-token');
    const all = lines.map((l) => JSON.parse(l) as { id: string });
    expect(new Set(all.map((l) => l.id)).size).toBe(all.length);
    for (const token of Object.values(site.tokens)) if (token) expect(lines.join('\n')).not.toContain(token);
    // The download answer's signed location is not logged; its own request is, signature masked.
    expect(lines.join('\n')).not.toMatch(/signature=[^.&"]/);
  });

  it('writes no raw control character from a request path or header, in any line', async () => {
    const path = '/v1/modules/a%1bb/x%0Ay/null/1.0.0/download';
    expect((await send(path, site.tokens.user)).status).toBe(404);
    const line = await lineFor(path);
    expect(line['module']).toBe('a\u001bb/x\ny/null');
    // A raw ESC in a header (or the path) never reaches a handler: Node's parser refuses it, serve answers 400 and logs nothing of it.
    const raw = await new Promise<string>((resolve) => {
      const socket = connect(Number(new URL(server.url).port), '127.0.0.1', () =>
        socket.end(`GET /v1/modules HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${site.tokens.user}\r\nX-Evil: a\x1b[31mred\r\n\r\n`),
      );
      let answer = '';
      socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
      socket.on('close', () => resolve(answer));
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400/);
    for (const text of [...lines, ...audit]) expect(text).not.toMatch(/[\x00-\x1f\x7f]/);
  });
});

describe('X-Request-Id', () => {
  const sendWithId = async (path: string, id: string | string[] | undefined, token = site.tokens.user) => {
    const headers: Record<string, string | string[]> = { authorization: `Bearer ${token}` };
    if (id !== undefined) headers['x-request-id'] = id;
    const res = await request(new URL(path, server.url), { headers });
    await res.body.dump();
    return { status: res.statusCode, id: res.headers['x-request-id'] };
  };

  it("answers every request with its id, serve's own when none came, and logs the same id", async () => {
    const path = '/v1/modules/acme/hello/null/versions?own-id';
    const res = await sendWithId(path, undefined);
    expect(res.status).toBe(200);
    expect(res.id).toMatch(/^[0-9a-f]{8}-[0-9a-z]+$/);
    expect((await lineFor(path))['id']).toBe(res.id);
    // Errors too, whoever answers them: a 404 of the registry, a 401, the management API.
    for (const [target, token] of [
      ['/v1/modules/acme/nothing/null/versions?id', site.tokens.user],
      ['/v1/modules?id', 'mm.not-a-known-token'],
      ['/api/v2/account/details?id', site.tokens.user],
    ] as const) {
      const answer = await sendWithId(target, undefined, token);
      expect(answer.id, target).toMatch(/^[0-9a-f]{8}-[0-9a-z]+$/);
      expect((await lineFor(target))['id'], target).toBe(answer.id);
    }
  });

  it('keeps an id a proxy or client sent, sends it back and logs it', async () => {
    for (const [n, given] of ['3f2b9c1e-7a4d-4c1b-9e2f-0a1b2c3d4e5f', 'a3c1f0e9b8d7c6a5f4e3d2c1b0a99887', 'Zm9v+YmFy/=', 'x'.repeat(128)].entries()) {
      const path = `/v1/modules/acme/hello/null/versions?given=${n}`;
      const res = await sendWithId(path, given);
      expect(res.id).toBe(given);
      expect((await lineFor(path))['id']).toBe(given);
    }
  });

  it("replaces an id that is too long, holds a character outside the set, or came twice, with serve's own", async () => {
    for (const [n, given] of ['x'.repeat(129), 'has space', 'quote"d', 'semi;colon', 'caf\u00e9', ['one', 'two']].entries()) {
      const path = `/v1/modules/acme/hello/null/versions?refused=${n}`;
      const res = await sendWithId(path, given);
      expect(res.status).toBe(200);
      expect(res.id, String(given)).toMatch(/^[0-9a-f]{8}-[0-9a-z]+$/);
      expect((await lineFor(path))['id']).toBe(res.id);
    }
  });
});

describe('the line formats', () => {
  const record = (target: string): RequestRecord => ({ id: 'x-1', method: 'GET', target, route: 'download', started: 0, bodyBytes: 12 });
  it('escapes everything outside printable ASCII, in JSON and in text', () => {
    const r = { ...record('/a\u001b[31m\n\u2028é'), module: 'a\u001bb/\nc/d', version: '1.0.0\r' };
    const json = jsonLine(r, 404, 1.25, new Date(0));
    expect(json).toMatch(/^[\x20-\x7e]+$/);
    expect(JSON.parse(json)).toMatchObject({ target: '/a\u001b[31m\n\u2028é', module: 'a\u001bb/\nc/d', version: '1.0.0\r', duration_ms: 1.3, bytes: 12 });
    const text = textLine(r, 404, 1.25);
    expect(text).toBe('GET /a%1B[31m%0A%E2%80%A8%C3%A9 404 1.3ms');
  });

  it('masks a signature in the target', () => {
    const res = { write: () => true, end: () => undefined, setHeader: () => undefined } as never;
    const r = startRecord({ method: 'GET', headers: {} } as never, res, '/v1/x.tar.gz?expires=1&token=t&signature=abc');
    expect(r.target).toBe('/v1/x.tar.gz?expires=1&token=t&signature=...');
  });
});

it('leaves the default text line as it was, from the process', async () => {
  const { child, url, stdout, exited } = await spawnServe(['--port', '0', '--mirror', site.dist, '--data', site.data, '--access', 'private'], site.dir);
  await (await request(new URL('.well-known/terraform.json', url), { headers: { authorization: `Bearer ${site.tokens.user}` } })).body.dump();
  child.kill('SIGTERM');
  await exited;
  expect(stdout()).toMatch(/^GET \/\.well-known\/terraform\.json 200 \d+\.\dms$/m);
});
