// A token's life through the CLI (create with a description and an expiry,
// list, revoke) and TFE's user tokens API, against a running private
// registry that must refuse a revoked or expired token at once.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileStamp } from '../../src/file-stamp.js';
import { runCli } from '../helpers.js';
import { startHarness, type Harness } from './helpers.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ access: 'private' });
});
afterAll(() => h?.server.close());

const ALICE = 'user-sampleAlice0000001';
const ADMIN = 'user-sampleAdmin0000001';
const cli = (args: string[]) => runCli([...args, '--data', h.data], h.dir);
const as = async (token: string, method: string, path: string, body?: unknown) => {
  const res = await request(new URL(path, h.server.url), {
    method: method as 'GET',
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/vnd.api+json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, json: text ? JSON.parse(text) : undefined };
};
/** A registry request: 200 for a token the server accepts, 401 for one it refuses. */
const registry = async (token: string) => (await as(token, 'GET', '/v1/modules')).status;
const account = async (token: string) => (await as(token, 'GET', '/api/v2/account/details')).status;
const listOf = async (args: string[]) => JSON.parse((await cli(['token', 'list', ...args, '--json'])).stdout).tokens as Record<string, unknown>[];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('token lifecycle through the CLI', () => {
  it('creates a described, expiring token, lists it without its secret, and revoke stops it on the next request', async () => {
    const made = await cli(['token', 'create', '--user', 'alice', '--description', 'laptop', '--expires-in', '30d', '--json']);
    expect(made.code).toBe(0);
    const { token, id, expires } = JSON.parse(made.stdout);
    expect(token).toMatch(/^mm\./);
    expect(Date.parse(expires) - Date.now()).toBeGreaterThan(29.9 * 86_400_000);
    expect(Date.parse(expires) - Date.now()).toBeLessThanOrEqual(30 * 86_400_000);
    expect(await registry(token)).toBe(200);

    const listed = await listOf(['--user', 'alice']);
    expect(listed.find((t) => t['id'] === id)).toMatchObject({ description: 'laptop', expires, expired: false });
    const table = await cli(['token', 'list', '--user', 'alice']);
    expect(table.stdout).toMatch(/^ID +DESCRIPTION +CREATED +LAST USED +EXPIRES\n/);
    expect(table.stdout).toContain(id);
    expect(table.stdout).not.toContain(token);
    expect(readFileSync(join(h.data, 'tokens.json'), 'utf8')).not.toContain(token);

    const revoked = await cli(['token', 'revoke', id]);
    expect(revoked.code).toBe(0);
    // The very next request: the server looks at the data folder's files before answering.
    expect(await registry(token)).toBe(401);
    expect(await account(token)).toBe(401);
    expect((await listOf(['--user', 'alice'])).some((t) => t['id'] === id)).toBe(false);
    const again = await cli(['token', 'revoke', id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/No token with the id/);
  });

  it('gives team and organization tokens the same life', async () => {
    for (const subject of [
      ['--team', 'platform', '--org', 'acme'],
      ['--org', 'acme'],
    ]) {
      const { token, id } = JSON.parse((await cli(['token', 'create', ...subject, '--description', 'ci', '--expires-in', '1w', '--json'])).stdout);
      expect(await registry(token)).toBe(200);
      expect((await listOf(subject)).find((t) => t['id'] === id)).toMatchObject({ description: 'ci', expired: false });
      expect((await cli(['token', 'revoke', id])).code).toBe(0);
      expect(await registry(token)).toBe(401);
    }
  });

  it('refuses a bad duration, a missing id and a subject that does not exist', async () => {
    for (const bad of ['30', '-1d', '1y', '0d', '']) {
      const res = await cli(['token', 'create', '--user', 'alice', `--expires-in=${bad}`]);
      expect(res.code).toBe(2);
      expect(res.stderr).toMatch(/is not a duration/);
    }
    expect((await cli(['token', 'revoke'])).stderr).toMatch(/Name the token/);
    expect((await cli(['token', 'list', '--user', 'nobody'])).stderr).toMatch(/No user named "nobody"/);
    expect((await cli(['token', 'list'])).code).toBe(2);
    expect((await cli(['token', 'create', 'at-x', '--user', 'alice'])).code).toBe(2);
  });

  it('records the last use once, not on every request', async () => {
    const { token, id } = JSON.parse((await cli(['token', 'create', '--user', 'bob', '--json'])).stdout);
    expect((await listOf(['--user', 'bob'])).find((t) => t['id'] === id)!['last-used']).toBeNull();
    const before = Date.now();
    expect(await registry(token)).toBe(200);
    await sleep(1_300);
    const used = (await listOf(['--user', 'bob'])).find((t) => t['id'] === id)!['last-used'] as string;
    expect(Date.parse(used)).toBeGreaterThanOrEqual(before - 1);
    // More uses within the minute write nothing.
    const stamp = fileStamp(join(h.data, 'tokens.json'));
    for (let i = 0; i < 20; i++) expect(await account(token)).toBe(200);
    await sleep(1_300);
    expect(fileStamp(join(h.data, 'tokens.json'))).toBe(stamp);
  });
});

describe('user tokens API', () => {
  const ALICE_TOKEN = 'mm.sample-user-token';

  it("lists, creates, shows and deletes the caller's own tokens, in TFE's shapes", async () => {
    const list = await as(ALICE_TOKEN, 'GET', `/api/v2/users/${ALICE}/authentication-tokens`);
    expect(list.status).toBe(200);
    expect(list.json.data.map((t: { id: string }) => t.id)).toContain('at-sampleAlice00000001');
    expect(list.json.data[0]).toMatchObject({ type: 'authentication-tokens', attributes: { token: null } });
    expect(list.json.meta.pagination).toMatchObject({ 'current-page': 1 });

    const expiredAt = new Date(Date.now() + 86_400_000).toISOString();
    const made = await as(ALICE_TOKEN, 'POST', `/api/v2/users/${ALICE}/authentication-tokens`, {
      data: { type: 'authentication-tokens', attributes: { description: 'api', 'expired-at': expiredAt } },
    });
    expect(made.status).toBe(201);
    expect(made.json.data).toMatchObject({
      type: 'authentication-tokens',
      attributes: { description: 'api', 'expired-at': expiredAt, 'last-used-at': null },
      relationships: { 'created-by': { data: { id: ALICE, type: 'users' } } },
    });
    const secret = made.json.data.attributes.token as string;
    expect(await registry(secret)).toBe(200);

    const shown = await as(ALICE_TOKEN, 'GET', `/api/v2/authentication-tokens/${made.json.data.id}`);
    expect(shown.status).toBe(200);
    expect(shown.json.data.attributes.token).toBeNull();
    expect((await as(secret, 'DELETE', `/api/v2/authentication-tokens/${made.json.data.id}`)).status).toBe(204);
    expect(await registry(secret)).toBe(401);
  });

  it("answers as TFE does for another user's tokens and for service tokens", async () => {
    const adminTokens = await as('mm.sample-admin-token', 'GET', `/api/v2/users/${ADMIN}/authentication-tokens`);
    const adminTokenId = adminTokens.json.data[0].id as string;
    // Someone else's list is empty; their tokens are not found.
    expect((await as(ALICE_TOKEN, 'GET', `/api/v2/users/${ADMIN}/authentication-tokens`)).json.data).toEqual([]);
    expect((await as(ALICE_TOKEN, 'GET', `/api/v2/authentication-tokens/${adminTokenId}`)).status).toBe(404);
    expect((await as(ALICE_TOKEN, 'DELETE', `/api/v2/authentication-tokens/${adminTokenId}`)).status).toBe(404);
    expect((await as(ALICE_TOKEN, 'POST', `/api/v2/users/${ADMIN}/authentication-tokens`, { data: { type: 'authentication-tokens' } })).status).toBe(404);
    expect((await as(ALICE_TOKEN, 'GET', '/api/v2/users/user-nobody/authentication-tokens')).status).toBe(404);
    // A team token acts as a service user, which has no user tokens.
    expect((await as('mm.sample-team-token', 'POST', `/api/v2/users/${ALICE}/authentication-tokens`, { data: { type: 'authentication-tokens' } })).status).toBe(
      404,
    );
    expect(await account('mm.sample-admin-token')).toBe(200);
  });

  it('refuses a malformed or past expiry with a 422 naming the attribute', async () => {
    for (const expiredAt of ['tomorrow', 12, new Date(Date.now() - 1000).toISOString()]) {
      const res = await as(ALICE_TOKEN, 'POST', `/api/v2/users/${ALICE}/authentication-tokens`, {
        data: { type: 'authentication-tokens', attributes: { 'expired-at': expiredAt } },
      });
      expect(res.status).toBe(422);
      expect(res.json.errors[0].source.pointer).toBe('/data/attributes/expired-at');
    }
    expect((await as(ALICE_TOKEN, 'POST', `/api/v2/users/${ALICE}/authentication-tokens`, { data: { type: 'users' } })).status).toBe(422);
  });

  it('refuses a token from the moment it expires', async () => {
    const made = await as(ALICE_TOKEN, 'POST', `/api/v2/users/${ALICE}/authentication-tokens`, {
      data: { type: 'authentication-tokens', attributes: { 'expired-at': new Date(Date.now() + 1_500).toISOString() } },
    });
    const secret = made.json.data.attributes.token as string;
    expect(await registry(secret)).toBe(200);
    expect(await account(secret)).toBe(200);
    await sleep(1_600);
    expect(await registry(secret)).toBe(401);
    expect(await account(secret)).toBe(401);
    const listed = await listOf(['--user', 'alice']);
    expect(listed.find((t) => t['id'] === made.json.data.id)).toMatchObject({ expired: true });
  });
});
