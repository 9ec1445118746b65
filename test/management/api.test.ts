// The management API over real HTTP: ping, the authorization matrix, account,
// run task stages and results, and request errors.

import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Caller, type Harness } from './helpers.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.server.close());

const CALLERS: Caller[] = ['admin', 'user', 'team', 'organization', 'unknown', 'none'];

describe('ping', () => {
  it('answers without a token, with the headers go-tfe reads', async () => {
    const res = await h.call('none', 'GET', '/api/v2/ping');
    expect(res.status).toBe(204);
    expect(res.headers['tfp-api-version']).toBe('2.6');
    expect(res.headers['x-tfe-version']).toMatch(/^modmirror-/);
  });
});

describe('authorization matrix', () => {
  // Expected status for each caller. alice (user) owns acme and delta; bob is in acme's platform team.
  const matrix: [string, string, Record<Caller, number>][] = [
    ['GET', '/api/v2/account/details', { admin: 200, user: 200, team: 200, organization: 200, unknown: 401, none: 401 }],
    ['GET', '/api/v2/runs/run-samplePassed000001/task-stages', { admin: 200, user: 200, team: 200, organization: 200, unknown: 401, none: 401 }],
    ['GET', '/api/v2/runs/run-sampleRunning00001/task-stages', { admin: 200, user: 200, team: 404, organization: 404, unknown: 401, none: 401 }],
    ['GET', '/api/v2/task-stages/ts-samplePassed000001', { admin: 200, user: 200, team: 200, organization: 200, unknown: 401, none: 401 }],
    ['GET', '/api/v2/task-results/taskrs-samplePass00001', { admin: 200, user: 200, team: 200, organization: 200, unknown: 401, none: 401 }],
    ['GET', '/api/v2/task-stages/ts-sampleDisabled0001', { admin: 404, user: 404, team: 404, organization: 404, unknown: 401, none: 401 }],
    ['GET', '/api/v2/admin/organizations', { admin: 200, user: 404, team: 404, organization: 404, unknown: 401, none: 401 }],
    ['GET', '/api/v2/admin/organizations/acme', { admin: 200, user: 404, team: 404, organization: 404, unknown: 401, none: 401 }],
    [
      'GET',
      '/api/v2/admin/organizations/acme/relationships/module-consumers',
      { admin: 200, user: 404, team: 404, organization: 404, unknown: 401, none: 401 },
    ],
    [
      'GET',
      '/api/v2/admin/organizations/acme/relationships/provider-consumers',
      { admin: 200, user: 404, team: 404, organization: 404, unknown: 401, none: 401 },
    ],
    ['PATCH', '/api/v2/account/update', { admin: 200, user: 200, team: 401, organization: 401, unknown: 401, none: 401 }],
  ];
  for (const [method, path, expected] of matrix) {
    it(`${method} ${path}`, async () => {
      for (const caller of CALLERS) {
        const body = method === 'PATCH' ? { data: { type: 'users', attributes: {} } } : undefined;
        const res = await h.call(caller, method, path, body);
        expect(res.status, caller).toBe(expected[caller]);
        if (res.status >= 400) {
          expect(res.headers['content-type']).toBe('application/vnd.api+json');
          expect(res.json.errors[0]).toMatchObject({ status: String(res.status), title: expect.any(String), detail: expect.any(String) });
        }
      }
    });
  }

  it('answers 404 for unknown paths and never reveals admin endpoints to others', async () => {
    expect((await h.call('admin', 'GET', '/api/v2/nothing')).status).toBe(404);
    const asUser = await h.call('user', 'DELETE', '/api/v2/admin/organizations/acme');
    expect(asUser.status).toBe(404);
    expect(asUser.json.errors[0].detail).toBe((await h.call('user', 'GET', '/api/v2/nothing')).json.errors[0].detail);
  });
});

describe('account', () => {
  it('shows the caller, with the authenticated resource for each token kind', async () => {
    const user = (await h.call('user', 'GET', '/api/v2/account/details')).json.data;
    expect(user).toMatchObject({ id: 'user-sampleAlice0000001', type: 'users', links: { self: '/api/v2/users/user-sampleAlice0000001' } });
    expect(user.attributes).toMatchObject({ username: 'alice', email: 'alice@example.com', 'is-service-account': false, 'is-site-admin': false });
    expect(user.relationships['authenticated-resource'].data).toEqual({ id: 'user-sampleAlice0000001', type: 'users' });
    expect(user.relationships['authentication-tokens'].links.related).toBe('/api/v2/users/user-sampleAlice0000001/authentication-tokens');
    const team = (await h.call('team', 'GET', '/api/v2/account/details')).json.data;
    expect(team.attributes['is-service-account']).toBe(true);
    expect(team.id).toMatch(/^user-/);
    expect(team.relationships['authenticated-resource'].data).toEqual({ id: 'team-samplePlatform0001', type: 'teams' });
    const org = (await h.call('organization', 'GET', '/api/v2/account/details')).json.data;
    expect(org.relationships['authenticated-resource']).toEqual({
      data: { id: 'acme', type: 'organizations' },
      links: { related: '/api/v2/organizations/acme' },
    });
    expect((await h.call('admin', 'GET', '/api/v2/account/details')).json.data.attributes['is-site-admin']).toBe(true);
  });

  it('updates the username (unique) and puts a new e-mail in unconfirmed-email', async () => {
    const taken = await h.call('user', 'PATCH', '/api/v2/account/update', { data: { type: 'users', attributes: { username: 'admin' } } });
    expect(taken.status).toBe(422);
    expect(taken.json.errors[0].source.pointer).toBe('/data/attributes/username');
    const res = await h.call('user', 'PATCH', '/api/v2/account/update', {
      data: { type: 'users', attributes: { username: 'alice2', email: 'new@example.com' } },
    });
    expect(res.status).toBe(200);
    expect(res.json.data.attributes).toMatchObject({ username: 'alice2', email: 'alice@example.com', 'unconfirmed-email': 'new@example.com' });
    expect((await h.call('user', 'GET', '/api/v2/account/details')).json.data.attributes.username).toBe('alice2');
    await h.call('user', 'PATCH', '/api/v2/account/update', { data: { type: 'users', attributes: { username: 'alice' } } });
  });

  it('refuses malformed updates with a pointer to the attribute', async () => {
    const cases: [unknown, string][] = [
      [{ data: { type: 'organizations', attributes: {} } }, '/data/type'],
      [{ data: { type: 'users', attributes: { username: 5 } } }, '/data/attributes/username'],
      [{ data: { type: 'users', attributes: { email: 'not-an-address' } } }, '/data/attributes/email'],
      [{ data: { type: 'users', attributes: [] } }, '/data/attributes'],
      [{ nodata: true }, '/data'],
    ];
    for (const [body, pointer] of cases) {
      const res = await h.call('user', 'PATCH', '/api/v2/account/update', body);
      expect(res.status, pointer).toBe(422);
      expect(res.json.errors[0].source.pointer).toBe(pointer);
    }
  });

  it('changes the password only with the current one, 10+ characters and a matching confirmation', async () => {
    const attempt = (attributes: Record<string, unknown>, caller: Caller = 'user') =>
      h.call(caller, 'PATCH', '/api/v2/account/password', { data: { type: 'users', attributes } });
    const cases: [Record<string, unknown>, string][] = [
      [{ current_password: 'wrong-password', password: 'new-password-1', password_confirmation: 'new-password-1' }, 'current_password'],
      [{ current_password: 'alice-password-1', password: 'short', password_confirmation: 'short' }, 'password'],
      [{ current_password: 'alice-password-1', password: 'new-password-1', password_confirmation: 'new-password-2' }, 'password_confirmation'],
      [{ current_password: 'alice-password-1', password: 'new-password-1' }, 'password_confirmation'],
    ];
    for (const [attributes, attribute] of cases) {
      const res = await attempt(attributes);
      expect(res.status, attribute).toBe(422);
      expect(res.json.errors[0].source.pointer).toBe(`/data/attributes/${attribute}`);
    }
    const ok = await attempt({ current_password: 'alice-password-1', password: 'new-password-1', password_confirmation: 'new-password-1' });
    expect(ok.status).toBe(200);
    expect((await attempt({ current_password: 'alice-password-1', password: 'x'.repeat(12), password_confirmation: 'x'.repeat(12) })).status).toBe(422);
    expect((await attempt({ current_password: 'new-password-1', password: 'alice-password-1', password_confirmation: 'alice-password-1' })).status).toBe(200);
    expect((await attempt({ current_password: 'x', password: 'y'.repeat(10), password_confirmation: 'y'.repeat(10) }, 'team')).status).toBe(401);
  });
});

describe('task stages and results', () => {
  it("lists a run's stages with pagination meta and links", async () => {
    const res = await h.call('user', 'GET', '/api/v2/runs/run-sampleOverride0001/task-stages');
    expect(res.status).toBe(200);
    expect(res.json.data).toHaveLength(1);
    expect(res.json.meta.pagination).toMatchObject({ 'current-page': 1, 'prev-page': null, 'next-page': null, 'total-pages': 1, 'total-count': 1 });
    expect(res.json.links).toMatchObject({ prev: null, next: null, first: expect.stringContaining('/api/v2/runs/run-sampleOverride0001/task-stages?') });
    expect((await h.call('user', 'GET', '/api/v2/runs/run-nope/task-stages')).status).toBe(404);
  });

  it('shows a stage with its relationships and every include', async () => {
    const stage = (await h.call('user', 'GET', '/api/v2/task-stages/ts-sampleAwaiting00001')).json.data;
    expect(stage).toMatchObject({
      id: 'ts-sampleAwaiting00001',
      type: 'task-stages',
      attributes: { status: 'awaiting_override', stage: 'post_plan', 'status-timestamps': { 'awaiting-override-at': '2026-11-20T10:02:00+00:00' } },
      relationships: {
        run: { data: { id: 'run-sampleOverride0001', type: 'runs' } },
        'task-results': {
          data: [
            { id: 'taskrs-sampleCost00001', type: 'task-results' },
            { id: 'taskrs-sampleScan00001', type: 'task-results' },
          ],
        },
        'policy-evaluations': { data: [{ id: 'poleval-sample0000001', type: 'policy-evaluations' }] },
      },
      links: { self: '/api/v2/task-stages/ts-sampleAwaiting00001' },
    });
    expect(stage.attributes['created-at']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const types = async (include: string) =>
      (await h.call('user', 'GET', `/api/v2/task-stages/ts-sampleAwaiting00001?include=${include}`)).json.included.map((r: { type: string }) => r.type);
    expect(await types('run')).toEqual(['runs']);
    expect(await types('run.workspace')).toEqual(['runs', 'workspaces']);
    expect(await types('task-results')).toEqual(['task-results', 'task-results']);
    expect(await types('policy-evaluations')).toEqual(['policy-evaluations']);
    expect(await types('run,task-results')).toEqual(['runs', 'task-results', 'task-results']);
    expect((await h.call('user', 'GET', '/api/v2/task-stages/ts-sampleAwaiting00001?include=owners')).status).toBe(400);
  });

  it('shows a task result with every attribute of spec 2.3', async () => {
    const result = (await h.call('user', 'GET', '/api/v2/task-results/taskrs-sampleCost00001')).json.data;
    expect(result).toMatchObject({
      id: 'taskrs-sampleCost00001',
      type: 'task-results',
      attributes: {
        status: 'failed',
        message: expect.stringContaining('\n'),
        'task-name': 'cost-estimate',
        'task-id': expect.stringMatching(/^task-/),
        'workspace-task-id': expect.stringMatching(/^wstask-/),
        'workspace-task-enforcement-level': 'mandatory',
        stage: 'post_plan',
        'is-speculative': false,
        url: expect.any(String),
        'task-url': expect.any(String),
      },
      relationships: { 'task-stage': { data: { id: 'ts-sampleAwaiting00001', type: 'task-stages' } } },
      links: { self: '/api/v2/task-results/taskrs-sampleCost00001' },
    });
    expect((await h.call('user', 'GET', '/api/v2/task-results/taskrs-nope')).status).toBe(404);
  });

  it('overrides only an awaiting stage, only for callers allowed to', async () => {
    const path = '/api/v2/task-stages/ts-sampleAwaiting00001/actions/override';
    expect((await h.call('team', 'POST', path)).status).toBe(403);
    const res = await h.call('user', 'POST', path);
    expect(res.status).toBe(200);
    expect(res.json.data.attributes).toMatchObject({
      status: 'running',
      permissions: { 'can-override-policy': true, 'can-override-tasks': true, 'can-override': true },
      actions: { 'is-overridable': false },
    });
    expect(Object.keys(res.json.data.attributes['status-timestamps'])).toEqual(expect.arrayContaining(['awaiting-override-at', 'running-at']));
    const again = await h.call('user', 'POST', path);
    expect(again.status).toBe(409);
    expect(again.json.errors[0].detail).toMatch(/only a stage awaiting_override/);
    expect((await h.call('user', 'POST', '/api/v2/task-stages/ts-samplePassed000001/actions/override')).status).toBe(409);
    expect((await h.call('user', 'GET', '/api/v2/task-stages/ts-sampleAwaiting00001/actions/override')).status).toBe(405);
  });
});

describe('request errors', () => {
  it('answers 415 for a body that is not JSON, 400 for broken JSON, 413 for a huge body', async () => {
    const notJson = await h.call('user', 'PATCH', '/api/v2/account/update', 'username=x', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(notJson.status).toBe(415);
    const plainJson = await h.call(
      'user',
      'PATCH',
      '/api/v2/account/update',
      { data: { type: 'users', attributes: {} } },
      { 'content-type': 'application/json' },
    );
    expect(plainJson.status).toBe(200);
    expect((await h.call('user', 'PATCH', '/api/v2/account/update', '{"data":')).status).toBe(400);
    const huge = await h.call(
      'user',
      'PATCH',
      '/api/v2/account/update',
      JSON.stringify({ data: { type: 'users', attributes: { username: 'x'.repeat(2_000_000) } } }),
    );
    expect(huge.status).toBe(413);
    expect((await h.call('user', 'GET', '/api/v2/account/details')).status).toBe(200);
  });

  it('refuses a deeply nested body with a 400 before parsing it, and stays responsive meanwhile', async () => {
    // About 1 MiB of `[[[...]]]`, as the report sent to this endpoint.
    const deep = `${'['.repeat(500_000)}${']'.repeat(500_000)}`;
    // What parsing one such body costs on this machine now.
    const parseStarted = performance.now();
    JSON.parse(deep);
    const oneParse = performance.now() - parseStarted;
    const started = performance.now();
    const answers = await Promise.all(Array.from({ length: 8 }, () => h.call('user', 'PATCH', '/api/v2/account/update', deep)));
    const ping = await h.call('none', 'GET', '/api/v2/ping');
    for (const res of answers) {
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toBe('application/vnd.api+json');
      expect(res.json.errors[0].detail).toBe('The body nests arrays and objects deeper than 32 levels.');
    }
    expect(ping.status).toBe(204);
    // Eight bodies refused (and sent over HTTP) cost less than parsing two: none is parsed.
    expect(performance.now() - started).toBeLessThan(2 * oneParse);
    // Brackets inside strings are text, not nesting.
    const text = await h.call('user', 'PATCH', '/api/v2/account/update', { data: { type: 'users', attributes: { note: '[{'.repeat(100) } } });
    expect(text.status).toBe(200);
  });

  it('refuses a page number past the safe integers, as the registry refuses such an offset', async () => {
    const res = await h.call('admin', 'GET', '/api/v2/admin/organizations?page%5Bnumber%5D=999999999999999999999999');
    expect(res.status).toBe(400);
    expect(res.json.errors[0].detail).toBe('page[number] must be a positive integer, got "999999999999999999999999".');
    const last = await h.call('admin', 'GET', `/api/v2/admin/organizations?page%5Bnumber%5D=${Number.MAX_SAFE_INTEGER}`);
    expect(last.status).toBe(200);
    expect(last.json.meta.pagination['current-page']).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('answers 405 with Allow for a known path and the wrong method', async () => {
    const res = await h.call('user', 'DELETE', '/api/v2/account/details');
    expect(res.status).toBe(405);
    expect(res.headers['allow']).toBe('GET, HEAD');
  });
});

describe('malformed requests under /api/v2 get JSON:API errors (spec 7.1)', () => {
  const expectApiError = (res: { status: number; headers: Record<string, unknown>; json: any }, status: number, what: string) => {
    expect(res.status, what).toBe(status);
    expect(res.headers['content-type'], what).toBe('application/vnd.api+json');
    expect(res.json?.errors, what).toEqual([{ status: String(status), title: expect.any(String), detail: expect.any(String) }]);
  };

  it('bad percent-encoding, encoded "/" or NUL, and an over-long URL', async () => {
    expectApiError(await h.call('admin', 'GET', '/api/v2/admin/organizations/%zz'), 400, '%zz');
    expectApiError(
      await h.call('admin', 'PATCH', '/api/v2/admin/organizations/%E0%A4%A', { data: { type: 'organizations', attributes: {} } }),
      400,
      'truncated UTF-8',
    );
    expectApiError(await h.call('none', 'GET', '/api/v2/a%2Fb'), 400, 'encoded slash');
    expectApiError(await h.call('none', 'GET', '/api/v2/a%00b'), 400, 'NUL');
    expectApiError(await h.call('admin', 'GET', '/%61pi/v2/%zz'), 400, 'encoded api prefix');
    const long = await h.call('admin', 'GET', `/api/v2/admin/organizations?q=${'a'.repeat(5000)}`);
    expectApiError(long, 414, 'long URL');
    expect(long.json.errors[0].detail).toMatch(/4096 characters/);
    const head = await h.call('admin', 'HEAD', '/api/v2/admin/organizations/%zz');
    expect(head.status).toBe(400);
    expect(head.headers['content-type']).toBe('application/vnd.api+json');
    expect(head.text).toBe('');
  });

  it('a request line too large for the HTTP parser', async () => {
    const { port } = new URL(h.server.url);
    const raw = await new Promise<string>((resolve, reject) => {
      let answer = '';
      const socket = connect(Number(port), '127.0.0.1', () =>
        socket.write(`GET /api/v2/admin/organizations/${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`),
      );
      socket.on('data', (d) => (answer += d.toString('latin1')));
      socket.on('end', () => resolve(answer));
      socket.on('error', reject);
    });
    const [head, body] = raw.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 431 /);
    expect(head).toMatch(/\r\nContent-Type: application\/vnd\.api\+json\r\n/);
    expect(JSON.parse(body!).errors).toEqual([
      { status: '431', title: 'request header fields too large', detail: expect.stringMatching(/larger than \d+ bytes/) },
    ]);
    expect((await h.call('user', 'GET', '/api/v2/account/details')).status).toBe(200);
  });

  it('while the registry keeps its own format', async () => {
    const res = await h.call('none', 'GET', '/v1/modules/%zz');
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.json).toEqual({ errors: [expect.any(String)] });
  });
});
