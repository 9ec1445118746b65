// `serve --access private` at its edges, on a small site of its own: a
// request shaped to forge an audit line, the browse page's recent list when
// another organization publishes a lot, signed archive URLs after their
// organization is disabled or their token revoked, a disabled
// organization's owner revoking its token, a request target in absolute
// form, and the last download-count flush after the data folder is gone.

import { rmSync, utimesSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { request } from 'undici';
import { beforeAll, describe, expect, it } from 'vitest';
import { createOrganization, createToken, createUser } from '../../src/management/bootstrap.js';
import { Store } from '../../src/management/store.js';
import type { RunningServer } from '../../src/serve/index.js';
import { runCli, tempDir, writeFiles } from '../helpers.js';
import { managementApi, startPrivateServer } from './private-site.js';

const dir = tempDir('mm-private-edges-');
let server: RunningServer;
const audit: string[] = [];
const tokens: Record<string, string> = {};
/** omega publishes more versions, and more recently, than the page's recent list holds. */
const OMEGA_VERSIONS = Array.from({ length: 21 }, (_, i) => `1.${i}.0`);

beforeAll(async () => {
  const files: Record<string, string> = {};
  const dated: [string, Date][] = [];
  for (const v of ['1.0.0', '1.1.0']) {
    files[`mods/acme/hello/null/${v}/main.tf`] = `variable "v" {}\n`;
    dated.push([`mods/acme/hello/null/${v}/main.tf`, new Date(`2020-01-0${v === '1.0.0' ? 1 : 2}T00:00:00Z`)]);
  }
  OMEGA_VERSIONS.forEach((v, i) => {
    files[`mods/omega/spam/null/${v}/main.tf`] = `variable "v" {}\n`;
    dated.push([`mods/omega/spam/null/${v}/main.tf`, new Date(Date.UTC(2024, 0, 1 + i))]);
  });
  writeFiles(dir, files);
  for (const [path, date] of dated) utimesSync(join(dir, path), date, date);
  const built = await runCli(['build', '--modules', 'mods', '--mirror', 'dist', '--json'], dir);
  expect(built.code, built.stderr).toBe(0);

  const store = new Store(join(dir, 'data'));
  for (const username of ['admin', 'olivia', 'dave']) await createUser(store, { username, email: `${username}@example.com`, siteAdmin: username === 'admin' });
  await createOrganization(store, { name: 'acme', email: 'acme@example.com', owner: 'olivia' });
  await createOrganization(store, { name: 'omega', email: 'omega@example.com' });
  await createOrganization(store, { name: 'delta', email: 'delta@example.com', owner: 'dave' });
  tokens['olivia'] = await createToken(store, { user: 'olivia' });
  tokens['admin'] = await createToken(store, { user: 'admin' });
  tokens['dave'] = await createToken(store, { user: 'dave' });
  tokens['acme'] = await createToken(store, { organization: 'acme' });
  tokens['omega'] = await createToken(store, { organization: 'omega' });
  await createToken(store, { organization: 'delta' });
  server = await startPrivateServer(dir, audit);
  expect((await api('PATCH', 'admin/organizations/delta', { data: { type: 'organizations', attributes: { 'is-disabled': true } } })).status).toBe(200);
}, 120_000);

async function get(path: string, token?: string): Promise<{ status: number; text: string }> {
  const res = await request(new URL(path, server.url), { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: res.statusCode, text: await res.body.text() };
}

function api(method: string, path: string, body?: unknown, token = tokens['admin']!): Promise<{ status: number }> {
  return managementApi(server, token, method, path, body);
}

/** The signed archive URL the download answer gives `token`. */
async function signedArchive(token: string): Promise<URL> {
  const download = new URL('v1/modules/acme/hello/null/1.1.0/download', server.url);
  const { location } = JSON.parse((await get(download.pathname, token)).text) as { location: string };
  return new URL(location, download);
}

describe('private mode at its edges', () => {
  it('writes a path that spells an audit line as one escaped line: nothing is forged', async () => {
    audit.length = 0;
    // The request of the report, byte for byte.
    const res = await get('/foo%22%0Arefused%20GET%20/v1/modules/omega/secret/aws/versions%20404%20who=user:bob%20why=%22x', tokens['olivia']);
    expect(res.status).toBe(404);
    expect(audit).toHaveLength(1);
    const [line] = audit;
    expect(line!.split(/[\r\n\u2028\u2029\u0085]/)).toHaveLength(1);
    expect(line).toMatch(
      /^refused GET \/foo%22%0Arefused%20GET%20\S+ 404 who=user:olivia why="foo\\"\\nrefused GET \/v1\/modules\/omega\/secret\/aws\/versions 404 who=user:bob why=\\"x is not readable by this caller"$/,
    );
  });

  it('lists the caller’s own most recent versions, however much others publish', async () => {
    const recent = async (token: string) =>
      (JSON.parse((await get('browse/index.json', token)).text) as { recent: string[][] }).recent.map((row) => `${row[0]}/${row[3]}`);
    expect(await recent(tokens['olivia']!)).toEqual(['acme/1.1.0', 'acme/1.0.0']);
    const omega = await recent(tokens['omega']!);
    expect(omega).toHaveLength(20);
    expect(omega[0]).toBe('omega/1.20.0');
    expect((await recent(tokens['admin']!)).slice(0, 2)).toEqual(['omega/1.20.0', 'omega/1.19.0']);
  });

  it('refuses a signed archive URL once its organization is disabled, and once its token is revoked', async () => {
    const members = await signedArchive(tokens['olivia']!);
    expect((await get(members.pathname + members.search)).status).toBe(200);
    expect((await api('PATCH', 'admin/organizations/acme', { data: { type: 'organizations', attributes: { 'is-disabled': true } } })).status).toBe(200);
    try {
      expect((await get(members.pathname + members.search)).status).toBe(404);
    } finally {
      await api('PATCH', 'admin/organizations/acme', { data: { type: 'organizations', attributes: { 'is-disabled': false } } });
    }
    expect((await get(members.pathname + members.search)).status).toBe(200);

    const organization = await signedArchive(tokens['acme']!);
    expect((await get(organization.pathname + organization.search)).status).toBe(200);
    expect((await api('DELETE', 'organizations/acme/authentication-token', undefined, tokens['olivia'])).status).toBe(204);
    const refused = await get(organization.pathname + organization.search);
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.text).errors[0]).toMatch(/the token it was issued to is revoked or expired, or its organization is disabled/);
  });

  it('lets no owner of a disabled organization revoke its token (a site administrator still may)', async () => {
    expect((await api('DELETE', 'organizations/delta/authentication-token', undefined, tokens['dave'])).status).toBe(404);
    expect((await api('DELETE', 'organizations/delta/authentication-token')).status).toBe(204);
  });

  it('takes a request target in absolute form as its path', async () => {
    const { port } = new URL(server.url);
    const head = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write(
          `GET http://127.0.0.1:${port}/v1/modules/acme/hello/null/versions HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${tokens['olivia']}\r\nConnection: close\r\n\r\n`,
        );
      });
      let text = '';
      socket.setEncoding('latin1').on('data', (c: string) => (text += c));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(head).toMatch(/^HTTP\/1\.1 200 /);
    expect(head).toMatch(/"source": ?"acme\/hello\/null"/);
  });

  it('stops without an uncaught error when its data folder is gone before the last count is written', async () => {
    const url = await signedArchive(tokens['olivia']!);
    expect((await get(url.pathname + url.search)).status).toBe(200);
    rmSync(join(dir, 'data'), { recursive: true, force: true });
    await expect(server.close()).resolves.toBeUndefined();
  });
});
