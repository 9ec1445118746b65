// GET answers are cached (issue 7), so every test here first asks twice, to
// be sure the answer is cached, then writes, and expects the very next GET to
// show the write: through the API in this process, and through the CLI from
// another process once the store's 200 ms check interval has passed.

import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers.js';
import { startHarness, type Caller, type Harness } from './helpers.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.server.close());

/** GETs twice and checks the second answer is the first one's bytes (so it can come from the cache). */
async function warm(caller: Caller, path: string) {
  const first = await h.call(caller, 'GET', path);
  const second = await h.call(caller, 'GET', path);
  expect(second.status, path).toBe(first.status);
  expect(second.text, path).toBe(first.text);
  return second;
}
const names = (res: { json: { data: { id: string }[] } }) => res.json.data.map((o) => o.id);
const orgs = '/api/v2/admin/organizations';
const cli = (args: string[]) => runCli([...args, '--data', h.data], h.dir);
/** Longer than one look at the files stands (1 ms): any GET after it looks again. */
const lookAgain = () => new Promise((r) => setTimeout(r, 10));

describe('writes through the API are visible on the next GET', () => {
  it('PATCH of an organization: list, show and filters', async () => {
    expect((await warm('admin', orgs)).json.data.find((o: { id: string }) => o.id === 'beta').attributes['workspace-limit']).toBe(25);
    await warm('admin', `${orgs}/beta`);
    expect(names(await warm('admin', `${orgs}?filter[provider_producer]=true`))).not.toContain('beta');
    const patched = await h.call('admin', 'PATCH', `${orgs}/beta`, {
      data: { type: 'organizations', attributes: { 'workspace-limit': 7, 'global-provider-sharing': true } },
    });
    expect(patched.status).toBe(200);
    expect((await h.call('admin', 'GET', orgs)).json.data.find((o: { id: string }) => o.id === 'beta').attributes['workspace-limit']).toBe(7);
    expect((await h.call('admin', 'GET', `${orgs}/beta`)).json.data.attributes).toMatchObject({ 'workspace-limit': 7, 'global-provider-sharing': true });
    expect(names(await h.call('admin', 'GET', `${orgs}?filter[provider_producer]=true`))).toContain('beta');
  });

  it('PATCH of module consumers and DELETE of an organization', async () => {
    expect(names(await warm('admin', `${orgs}/delta/relationships/module-consumers`))).toEqual([]);
    expect((await h.call('admin', 'PATCH', `${orgs}/delta/relationships/module-consumers`, { data: [{ type: 'organizations', id: 'gamma' }] })).status).toBe(
      204,
    );
    expect(names(await h.call('admin', 'GET', `${orgs}/delta/relationships/module-consumers`))).toEqual(['gamma']);

    expect(names(await warm('admin', orgs))).toContain('gamma');
    await warm('admin', `${orgs}/gamma`);
    expect((await h.call('admin', 'DELETE', `${orgs}/gamma`)).status).toBe(204);
    expect(names(await h.call('admin', 'GET', orgs))).not.toContain('gamma');
    expect((await h.call('admin', 'GET', `${orgs}/gamma`)).status).toBe(404);
    expect(names(await h.call('admin', 'GET', `${orgs}/delta/relationships/module-consumers`))).toEqual([]);
  });

  it('PATCH of the account', async () => {
    const before = (await warm('user', '/api/v2/account/details')).json.data.attributes;
    const updated = await h.call('user', 'PATCH', '/api/v2/account/update', {
      data: { type: 'users', attributes: { username: 'alice2', email: 'alice2@example.com' } },
    });
    expect(updated.status).toBe(200);
    const after = (await h.call('user', 'GET', '/api/v2/account/details')).json.data.attributes;
    expect(after).toMatchObject({ username: 'alice2', email: before.email, 'unconfirmed-email': 'alice2@example.com' });
  });

  it('override of a task stage', async () => {
    const path = '/api/v2/task-stages/ts-sampleAwaiting00001?include=task-results';
    expect((await warm('user', path)).json.data.attributes.status).toBe('awaiting_override');
    await warm('user', '/api/v2/runs/run-sampleOverride0001/task-stages');
    expect((await h.call('user', 'POST', '/api/v2/task-stages/ts-sampleAwaiting00001/actions/override')).status).toBe(200);
    expect((await h.call('user', 'GET', path)).json.data.attributes.status).toBe('running');
    expect((await h.call('user', 'GET', '/api/v2/runs/run-sampleOverride0001/task-stages')).json.data[0].attributes.status).toBe('running');
  });

  it('a client revalidating with If-None-Match gets 304 until the data changes, then the new answer', async () => {
    const first = await warm('admin', `${orgs}/acme`);
    const etag = String(first.headers.etag);
    expect((await h.call('admin', 'GET', `${orgs}/acme`, undefined, { 'if-none-match': etag })).status).toBe(304);
    await h.call('admin', 'PATCH', `${orgs}/acme`, { data: { type: 'organizations', attributes: { 'plan-timeout': '45m' } } });
    const after = await h.call('admin', 'GET', `${orgs}/acme`, undefined, { 'if-none-match': etag });
    expect(after.status).toBe(200);
    expect(after.json.data.attributes['plan-timeout']).toBe('45m');
  });
});

describe('writes by another process are visible on the next request after they return', () => {
  it('modmirror org create', async () => {
    expect(names(await warm('admin', orgs))).not.toContain('newco');
    await warm('admin', `${orgs}?q=newco`);
    expect((await cli(['org', 'create', '--name', 'newco', '--email', 'ops@newco.example'])).code).toBe(0);
    expect(names(await h.call('admin', 'GET', orgs))).toContain('newco');
    expect(names(await h.call('admin', 'GET', `${orgs}?q=newco`))).toEqual(['newco']);
    expect((await h.call('admin', 'GET', orgs)).json.meta['status-counts'].total).toBe(names(await h.call('admin', 'GET', `${orgs}?page[size]=100`)).length);
  });

  it('modmirror run-task record on a stage already cached', async () => {
    const recorded = await cli(['run-task', 'record', '--run', 'run-cache01', '--org', 'acme', '--workspace', 'app', '--task', 'lint', '--status', 'running']);
    expect(recorded.code).toBe(0);
    const { stage } = JSON.parse(recorded.stdout);
    expect((await warm('user', `/api/v2/task-stages/${stage}`)).json.data.attributes.status).toBe('running');
    expect((await cli(['run-task', 'record', '--run', 'run-cache01', '--task', 'lint', '--status', 'passed'])).code).toBe(0);
    expect((await h.call('user', 'GET', `/api/v2/task-stages/${stage}`)).json.data.attributes.status).toBe('passed');
  });

  it('a data file replaced by another program', async () => {
    expect((await warm('admin', `${orgs}/delta`)).json.data.attributes['sso-enabled']).toBe(false);
    const file = join(h.data, 'organizations.json');
    const list = JSON.parse(readFileSync(file, 'utf8')) as { name: string; ssoEnabled: boolean }[];
    list.find((o) => o.name === 'delta')!.ssoEnabled = true;
    writeFileSync(`${file}.new`, JSON.stringify(list));
    renameSync(`${file}.new`, file);
    await lookAgain();
    expect((await h.call('admin', 'GET', `${orgs}/delta`)).json.data.attributes['sso-enabled']).toBe(true);
  });
});

describe('answers are per caller', () => {
  it('each token sees its own account and only what it may see', async () => {
    const usernames = await Promise.all(
      (['admin', 'user', 'team', 'organization'] as const).map(async (c) => (await warm(c, '/api/v2/account/details')).json.data.attributes.username),
    );
    expect(new Set(usernames).size).toBe(4);
    // alice sees the running sample run; the team token of acme's platform team does not.
    expect((await warm('user', '/api/v2/runs/run-sampleRunning00001/task-stages')).status).toBe(200);
    expect((await h.call('team', 'GET', '/api/v2/runs/run-sampleRunning00001/task-stages')).status).toBe(404);
    expect((await warm('admin', orgs)).status).toBe(200);
    expect((await h.call('user', 'GET', orgs)).status).toBe(404);
  });

  it('one answer for the same query however it is encoded, with links in the order asked', async () => {
    const plain = await warm('admin', `${orgs}?page[number]=2&page[size]=1`);
    const encoded = await h.call('admin', 'GET', `${orgs}?page%5Bnumber%5D=2&page%5Bsize%5D=1`);
    expect(encoded.text).toBe(plain.text);
    expect(encoded.headers.etag).toBe(plain.headers.etag);
    const reordered = await h.call('admin', 'GET', `${orgs}?page[size]=1&page[number]=2`);
    expect(names(reordered)).toEqual(names(plain));
    expect(reordered.json.links.self).toBe('/api/v2/admin/organizations?page%5Bsize%5D=1&page%5Bnumber%5D=2');
  });

  it('answers HEAD from the same answer, without a body', async () => {
    const get = await warm('admin', orgs);
    const head = await h.call('admin', 'HEAD', orgs);
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers['content-length']).toBe(String(Buffer.byteLength(get.text)));
    expect(head.headers['content-type']).toBe('application/vnd.api+json');
  });

  it('gzips a large answer for a client that asks', async () => {
    const plain = await warm('admin', `${orgs}?page[size]=100`);
    const res = await request(new URL(`${orgs}?page[size]=100`, h.server.url), {
      headers: { authorization: 'Bearer mm.sample-admin-token', 'accept-encoding': 'gzip' },
    });
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.headers['content-type']).toBe('application/vnd.api+json');
    expect(gunzipSync(Buffer.from(await res.body.arrayBuffer())).toString('utf8')).toBe(plain.text);
  });
});
