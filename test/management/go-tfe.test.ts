// Requests exactly as go-tfe v1.109.0 (the last v1 release) sends them, byte
// for byte: its query encoder sorts the keys, escapes `[`, `]` and `,`, and
// joins a list option with commas; its include constants use underscores
// (TaskStageTaskResults = "task_results", PolicyEvaluationsTaskResults =
// "policy_evaluations", AdminOrgOwners = "owners"); its JSON:API bodies come
// from jsonapi.MarshalPayloadWithoutIncluded (trailing newline, `"type": ""`
// for an options struct without a primary field) and its plain JSON bodies
// from json.Marshal. go-tfe 0.11 itself runs in test/clients/tfe-probe.test.ts.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers.js';
import { startHarness, type Caller, type Harness } from './helpers.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.server.close());

/** The headers go-tfe v1 sets on every call (NewRequestWithAdditionalQueryParams). */
const GO_TFE = { accept: 'application/vnd.api+json', 'user-agent': 'go-tfe' };
const goTfe = (caller: Caller, method: string, path: string, body?: string) =>
  h.call(caller, method, path, body, body === undefined ? GO_TFE : { ...GO_TFE, 'content-type': 'application/vnd.api+json' });

const STAGE = '/api/v2/task-stages/ts-sampleAwaiting00001';

describe('TaskStages (go-tfe v1.109.0 task_stages.go)', () => {
  it('Read with Include: TaskStageTaskResults sends include=task_results, answered as include=task-results', async () => {
    const underscore = await goTfe('user', 'GET', `${STAGE}?include=task_results`);
    expect(underscore.status).toBe(200);
    expect(underscore.json.included.map((r: { id: string }) => r.id)).toEqual(['taskrs-sampleCost00001', 'taskrs-sampleScan00001']);
    expect(underscore.json).toEqual((await goTfe('user', 'GET', `${STAGE}?include=task-results`)).json);
  });

  it('Read with Include: PolicyEvaluationsTaskResults sends include=policy_evaluations', async () => {
    const underscore = await goTfe('user', 'GET', `${STAGE}?include=policy_evaluations`);
    expect(underscore.status).toBe(200);
    expect(underscore.json.included).toEqual([{ id: 'poleval-sample0000001', type: 'policy-evaluations', attributes: {} }]);
    expect(underscore.json).toEqual((await goTfe('user', 'GET', `${STAGE}?include=policy-evaluations`)).json);
  });

  it('Read with both constants sends them comma-joined and escaped; mixed spellings and repeats give one answer', async () => {
    const spec = (await goTfe('user', 'GET', `${STAGE}?include=task-results,policy-evaluations`)).json;
    expect(spec.included.map((r: { type: string }) => r.type)).toEqual(['task-results', 'task-results', 'policy-evaluations']);
    for (const query of [
      'include=task_results%2Cpolicy_evaluations',
      'include=task_results,policy-evaluations',
      'include=task_results,task-results,policy_evaluations',
      'include=task_results&include=policy_evaluations',
    ]) {
      const res = await goTfe('user', 'GET', `${STAGE}?${query}`);
      expect(res.status, query).toBe(200);
      expect(res.json, query).toEqual(spec);
    }
    const run = (await goTfe('user', 'GET', `${STAGE}?include=run.workspace`)).json.included;
    expect(run.map((r: { type: string }) => r.type)).toEqual(['runs', 'workspaces']);
  });

  it('an unknown include is a 400 whose detail go-tfe maps to ErrInvalidIncludeValue', async () => {
    const res = await goTfe('user', 'GET', `${STAGE}?include=owners`);
    expect(res.status).toBe(400);
    // checkResponseCode: a 400 whose errors contain "include parameter" is ErrInvalidIncludeValue.
    expect(res.json.errors[0].detail).toContain('include parameter');
    expect(res.json.errors[0].detail).toMatch(/task-results \(or task_results\)/);
  });

  it('List with ListOptions sends page%5Bnumber%5D and page%5Bsize%5D and reads meta.pagination', async () => {
    const res = await goTfe('user', 'GET', '/api/v2/runs/run-sampleOverride0001/task-stages?page%5Bnumber%5D=1&page%5Bsize%5D=1');
    expect(res.status).toBe(200);
    expect(res.json.meta.pagination).toEqual({ 'current-page': 1, 'page-size': 1, 'prev-page': null, 'next-page': null, 'total-pages': 1, 'total-count': 1 });
    const spelled = await goTfe('user', 'GET', '/api/v2/runs/run-sampleOverride0001/task-stages?include=task_results&page%5Bsize%5D=1');
    expect(spelled.json.included).toEqual(
      (await goTfe('user', 'GET', '/api/v2/runs/run-sampleOverride0001/task-stages?include=task-results&page%5Bsize%5D=1')).json.included,
    );
  });

  it('Override sends {} or {"comment": ...} (json.Marshal of TaskStageOverrideOptions)', async () => {
    const record = await runCli(
      [
        'run-task',
        'record',
        '--run',
        'run-gotfe00001',
        '--org',
        'acme',
        '--workspace',
        'app',
        '--task',
        'lint',
        '--status',
        'failed',
        '--stage-status',
        'awaiting_override',
        '--data',
        h.data,
      ],
      h.dir,
    );
    expect(record.code, record.stderr).toBe(0);
    const second = JSON.parse(record.stdout).stage as string;
    const withComment = await goTfe('user', 'POST', `${STAGE}/actions/override`, '{"comment":"accepted by the security team"}');
    expect(withComment.status).toBe(200);
    expect(withComment.json.data).toMatchObject({ id: 'ts-sampleAwaiting00001', type: 'task-stages', attributes: { status: 'running' } });
    const empty = await goTfe('user', 'POST', `/api/v2/task-stages/${second}/actions/override`, '{}');
    expect(empty.status).toBe(200);
    expect(empty.json.data.attributes.status).toBe('running');
    // The connection go-tfe reuses still works after a body the handler did not need.
    expect((await goTfe('user', 'GET', `/api/v2/task-stages/${second}`)).json.data.attributes.status).toBe('running');
  });
});

describe('AdminOrganizations (go-tfe v1.109.0 admin_organization.go)', () => {
  const ADMIN = '/api/v2/admin/organizations';

  it('List with Include: AdminOrgOwners, Query and ListOptions sends sorted, escaped keys', async () => {
    const res = await goTfe('admin', 'GET', `${ADMIN}?include=owners&page%5Bnumber%5D=1&page%5Bsize%5D=2&q=a`);
    expect(res.status).toBe(200);
    expect(res.json.data.map((o: { id: string }) => o.id)).toEqual(['acme', 'beta']);
    expect(res.json.meta.pagination).toMatchObject({ 'current-page': 1, 'next-page': 2, 'total-pages': 2, 'total-count': 4 });
    expect(res.json.included.map((u: { type: string }) => u.type)).toEqual(['users']);
    expect((await goTfe('admin', 'GET', `${ADMIN}?include=team`)).json.errors[0].detail).toContain('include parameter');
  });

  it('Update sends "type": "" (no primary field in AdminOrganizationUpdateOptions)', async () => {
    const body = '{"data":{"type":"","attributes":{"access-beta-tools":true,"apply-timeout":"90m","workspace-limit":5}}}\n';
    const res = await goTfe('admin', 'PATCH', `${ADMIN}/delta`, body);
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({
      id: 'delta',
      type: 'organizations',
      attributes: { 'access-beta-tools': true, 'apply-timeout': '90m', 'workspace-limit': 5 },
    });
  });

  it('UpdateModuleConsumers sends a list of {"type":"organizations","id":NAME}, or {"data":[]} for none', async () => {
    const consumers = async () => (await goTfe('admin', 'GET', `${ADMIN}/beta/relationships/module-consumers`)).json.data.map((o: { id: string }) => o.id);
    const set = await goTfe(
      'admin',
      'PATCH',
      `${ADMIN}/beta/relationships/module-consumers`,
      '{"data":[{"type":"organizations","id":"acme"},{"type":"organizations","id":"delta"}]}\n',
    );
    expect(set.status).toBe(204);
    expect(await consumers()).toEqual(['acme', 'delta']);
    expect((await goTfe('admin', 'PATCH', `${ADMIN}/beta/relationships/module-consumers`, '{"data":[]}\n')).status).toBe(204);
    expect(await consumers()).toEqual([]);
  });
});

describe('Users (go-tfe v1.109.0 user.go)', () => {
  it('ReadCurrent and Update (UserUpdateOptions: primary field "users" left empty, so no id)', async () => {
    expect((await goTfe('user', 'GET', '/api/v2/account/details')).json.data).toMatchObject({ id: 'user-sampleAlice0000001', type: 'users' });
    const res = await goTfe('user', 'PATCH', '/api/v2/account/update', '{"data":{"type":"users","attributes":{"email":"alice.new@example.com"}}}\n');
    expect(res.status).toBe(200);
    expect(res.json.data.attributes).toMatchObject({ email: 'alice@example.com', 'unconfirmed-email': 'alice.new@example.com' });
  });
});
