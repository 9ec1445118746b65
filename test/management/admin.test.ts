// Site-admin organizations (spec 4.3, 3.3): filters, pagination, updates,
// sharing rules, deletion, and the edition gate.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFromAnotherProcess } from '../helpers.js';
import { startHarness, type Harness } from './helpers.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.server.close());

const names = (res: { json: { data: { id: string }[] } }) => res.json.data.map((o) => o.id);
const admin = (method: string, path: string, body?: unknown) => h.call('admin', method, `/api/v2/admin/organizations${path}`, body);

describe('listing', () => {
  it('lists every organization with status counts, pagination and links', async () => {
    const res = await admin('GET', '');
    expect(names(res)).toEqual(['acme', 'beta', 'delta', 'gamma']);
    expect(res.json.meta['status-counts']).toEqual({ total: 4, active: 3, disabled: 1 });
    expect(res.json.meta.pagination).toMatchObject({ 'current-page': 1, 'prev-page': null, 'next-page': null, 'total-pages': 1, 'total-count': 4 });
    const acme = res.json.data[0];
    expect(acme).toMatchObject({
      type: 'organizations',
      attributes: {
        name: 'acme',
        'external-id': expect.stringMatching(/^org-/),
        'notification-email': 'acme-ops@example.com',
        'apply-timeout': '24h',
        'workspace-limit': null,
        'is-disabled': false,
      },
      relationships: {
        owners: { data: [{ id: 'user-sampleAlice0000001', type: 'users' }] },
        subscription: { data: null },
        'feature-set': { data: null },
        'module-consumers': { links: { related: '/api/v2/admin/organizations/acme/relationships/module-consumers' } },
      },
      links: { self: '/api/v2/admin/organizations/acme' },
    });
  });

  it('pages with page[number] and page[size], encoded or not', async () => {
    const second = await admin('GET', '?page[number]=2&page[size]=1');
    expect(names(second)).toEqual(['beta']);
    expect(second.json.meta.pagination).toMatchObject({ 'current-page': 2, 'prev-page': 1, 'next-page': 3, 'total-pages': 4, 'total-count': 4 });
    expect(second.json.links.next).toBe('/api/v2/admin/organizations?page%5Bnumber%5D=3&page%5Bsize%5D=1');
    expect(names(await admin('GET', '?page%5Bnumber%5D=2&page%5Bsize%5D=1'))).toEqual(['beta']);
    const last = await admin('GET', '?page[number]=4&page[size]=1');
    expect(last.json.meta.pagination['next-page']).toBeNull();
    expect(last.json.links.next).toBeNull();
    expect(names(await admin('GET', '?page[number]=9&page[size]=1'))).toEqual([]);
    expect((await admin('GET', '?page[size]=500')).json.meta.pagination['page-size']).toBe(100);
    for (const bad of ['page[number]=0', 'page[size]=-1', 'page[number]=x']) expect((await admin('GET', `?${bad}`)).status, bad).toBe(400);
  });

  it('filters with q (precedence), q[name], q[email] (both must match) and producer filters', async () => {
    expect(names(await admin('GET', '?q=acme'))).toEqual(['acme']);
    expect(names(await admin('GET', '?q=ops@example'))).toEqual(['acme', 'beta', 'delta', 'gamma']);
    expect(names(await admin('GET', '?q=beta&q[name]=acme'))).toEqual(['beta']);
    expect(names(await admin('GET', '?q[name]=a'))).toEqual(['acme', 'beta', 'delta', 'gamma']);
    expect(names(await admin('GET', '?q[name]=e&q[email]=delta'))).toEqual(['delta']);
    expect(names(await admin('GET', '?q[name]=acme&q[email]=delta'))).toEqual([]);
    expect(names(await admin('GET', '?filter[module_producer]=true'))).toEqual(['acme', 'beta']);
    expect(names(await admin('GET', '?filter[module_producer]=false'))).toEqual(['delta', 'gamma']);
    expect(names(await admin('GET', '?filter[provider_producer]=true'))).toEqual(['acme']);
    expect((await admin('GET', '?filter[module_producer]=yes')).status).toBe(400);
    expect((await admin('GET', '?q=zzz')).json.meta['status-counts']).toEqual({ total: 0, active: 0, disabled: 0 });
  });

  it('includes owners on request', async () => {
    const res = await admin('GET', '/acme?include=owners');
    expect(res.json.included).toEqual([
      expect.objectContaining({ id: 'user-sampleAlice0000001', type: 'users', attributes: expect.not.objectContaining({ email: expect.anything() }) }),
    ]);
    expect((await admin('GET', '?include=owners')).json.included.map((u: { id: string }) => u.id)).toEqual(['user-sampleAlice0000001']);
    expect((await admin('GET', '/nope')).status).toBe(404);
  });
});

describe('updates', () => {
  it("updates typed attributes, maps the deprecated timeouts and accepts go-tfe's empty type", async () => {
    const res = await admin('PATCH', '/delta', {
      data: {
        type: '',
        attributes: { 'access-beta-tools': true, 'workspace-limit': 12, 'terraform-build-worker-apply-timeout': '90m', 'plan-timeout': '1h30m' },
      },
    });
    expect(res.status).toBe(200);
    expect(res.json.data.attributes).toMatchObject({ 'access-beta-tools': true, 'workspace-limit': 12, 'apply-timeout': '90m', 'plan-timeout': '1h30m' });
    const both = await admin('PATCH', '/delta', {
      data: { type: 'organizations', attributes: { 'terraform-build-worker-plan-timeout': '5m', 'plan-timeout': '2h' } },
    });
    expect(both.json.data.attributes['plan-timeout']).toBe('2h');
    expect(
      (await admin('PATCH', '/delta', { data: { type: 'organizations', attributes: { 'workspace-limit': null, 'apply-timeout': null } } })).json.data
        .attributes,
    ).toMatchObject({ 'workspace-limit': null, 'apply-timeout': null });
    expect((await admin('GET', '/delta')).json.data.attributes['access-beta-tools']).toBe(true);
  });

  it('refuses wrong types and formats with a pointer, changing nothing', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ 'is-disabled': 'yes' }, 'is-disabled'],
      [{ 'workspace-limit': -1 }, 'workspace-limit'],
      [{ 'workspace-limit': 1.5 }, 'workspace-limit'],
      [{ 'apply-timeout': '24 hours' }, 'apply-timeout'],
      [{ 'plan-timeout': 7200 }, 'plan-timeout'],
      [{ 'access-beta-tools': false, 'global-module-sharing': 'true' }, 'global-module-sharing'],
    ];
    for (const [attributes, name] of cases) {
      const res = await admin('PATCH', '/delta', { data: { type: 'organizations', attributes } });
      expect(res.status, name).toBe(422);
      expect(res.json.errors[0].source.pointer).toBe(`/data/attributes/${name}`);
    }
    expect((await admin('GET', '/delta')).json.data.attributes['access-beta-tools']).toBe(true);
    const wrongType = await admin('PATCH', '/delta', { data: { type: 'users', attributes: {} } });
    expect(wrongType.status).toBe(422);
    expect(wrongType.json.errors[0].source.pointer).toBe('/data/type');
    expect((await admin('PATCH', '/nope', { data: { type: 'organizations', attributes: {} } })).status).toBe(404);
  });

  it('disabling an organization makes its runs and tokens unusable', async () => {
    expect((await h.call('organization', 'GET', '/api/v2/account/details')).status).toBe(200);
    await admin('PATCH', '/acme', { data: { type: 'organizations', attributes: { 'is-disabled': true } } });
    expect((await h.call('organization', 'GET', '/api/v2/account/details')).status).toBe(401);
    expect((await h.call('user', 'GET', '/api/v2/runs/run-samplePassed000001/task-stages')).status).toBe(404);
    await admin('PATCH', '/acme', { data: { type: 'organizations', attributes: { 'is-disabled': false } } });
    expect((await h.call('user', 'GET', '/api/v2/runs/run-samplePassed000001/task-stages')).status).toBe(200);
  });
});

describe('sharing (spec 3.3)', () => {
  const consumers = async (org: string) => names(await admin('GET', `/${org}/relationships/module-consumers`));

  it('lists consumers, and global sharing clears them', async () => {
    expect(await consumers('acme')).toEqual(['delta']);
    expect(names(await admin('GET', '/acme/relationships/provider-consumers'))).toEqual(['delta']);
    expect(await consumers('beta')).toEqual([]);
    await admin('PATCH', '/acme', { data: { type: 'organizations', attributes: { 'global-module-sharing': true } } });
    expect(await consumers('acme')).toEqual([]);
    expect(names(await admin('GET', '/acme/relationships/provider-consumers'))).toEqual(['delta']);
  });

  it('setting consumers turns global sharing off; unknown consumers are 422', async () => {
    const set = await admin('PATCH', '/beta/relationships/module-consumers', {
      data: [
        { type: 'organizations', id: 'acme' },
        { type: 'organizations', id: 'delta' },
      ],
    });
    expect(set.status).toBe(204);
    expect(set.text).toBe('');
    expect(await consumers('beta')).toEqual(['acme', 'delta']);
    expect((await admin('GET', '/beta')).json.data.attributes['global-module-sharing']).toBe(false);
    const unknown = await admin('PATCH', '/beta/relationships/module-consumers', {
      data: [
        { type: 'organizations', id: 'acme' },
        { type: 'organizations', id: 'nobody' },
      ],
    });
    expect(unknown.status).toBe(422);
    expect(unknown.json.errors[0]).toMatchObject({ detail: 'The organization "nobody" does not exist.', source: { pointer: '/data/1/id' } });
    // A name in another case is not that organization: refused, naming the one meant.
    const otherCase = await admin('PATCH', '/beta/relationships/module-consumers', { data: [{ type: 'organizations', id: 'ACME' }] });
    expect(otherCase.status).toBe(422);
    expect(otherCase.json.errors[0]).toMatchObject({
      detail: 'The organization "ACME" does not exist. "acme" does, differing only in case.',
      source: { pointer: '/data/0/id' },
    });
    expect(await consumers('beta')).toEqual(['acme', 'delta']);
    expect((await admin('PATCH', '/beta/relationships/module-consumers', { data: [{ type: 'users', id: 'acme' }] })).status).toBe(422);
    expect((await admin('PATCH', '/beta/relationships/module-consumers', { data: {} })).status).toBe(422);
    expect((await admin('PATCH', '/beta/relationships/module-consumers', { data: [] })).status).toBe(204);
    expect(await consumers('beta')).toEqual([]);
  });

  it('deleting an organization answers 204 and removes its consumer links everywhere', async () => {
    await admin('PATCH', '/beta/relationships/module-consumers', { data: [{ type: 'organizations', id: 'delta' }] });
    const res = await admin('DELETE', '/delta');
    expect(res.status).toBe(204);
    expect((await admin('GET', '/delta')).status).toBe(404);
    expect(await consumers('beta')).toEqual([]);
    expect(names(await admin('GET', '/acme/relationships/provider-consumers'))).toEqual([]);
    expect((await h.call('admin', 'GET', '/api/v2/runs/run-sampleRunning00001/task-stages')).status).toBe(404);
    expect((await admin('DELETE', '/delta')).status).toBe(404);
  });
});

describe('editions', () => {
  it('has no admin endpoints outside the self-hosted edition', async () => {
    // A request sent after another process replaced the file is answered from what it wrote.
    writeFromAnotherProcess(join(h.data, 'settings.json'), JSON.stringify({ edition: 'free' }));
    expect((await admin('GET', '')).status).toBe(404);
    writeFromAnotherProcess(join(h.data, 'settings.json'), JSON.stringify({ edition: 'self-hosted' }));
    expect((await admin('GET', '')).status).toBe(200);
  });
});
