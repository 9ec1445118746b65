// Bootstrap commands and run-task record, against a running server.

import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers.js';
import { startHarness, type Harness } from './helpers.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.server.close());

const cli = (args: string[]) => runCli([...args, '--data', h.data], h.dir);
const get = async (token: string, path: string) => {
  const res = await request(new URL(path, h.server.url), { headers: { authorization: `Bearer ${token}` } });
  return { status: res.statusCode, json: (await res.body.json()) as any };
};

describe('bootstrap', () => {
  it('creates a user, an organization, a team and tokens that work against the running server', async () => {
    writeFileSync(join(h.dir, 'carol.pw'), 'carol-password-1\n');
    const user = await cli(['user', 'create', '--username', 'carol', '--email', 'carol@example.com', '--password-file', join(h.dir, 'carol.pw')]);
    expect(user.code).toBe(0);
    expect(JSON.parse(user.stdout).id).toMatch(/^user-/);
    expect((await cli(['org', 'create', '--name', 'omega', '--email', 'omega@example.com', '--owner', 'carol'])).code).toBe(0);
    expect((await cli(['team', 'create', '--org', 'omega', '--name', 'ops', '--members', 'carol'])).code).toBe(0);

    const userToken = await cli(['token', 'create', '--user', 'carol']);
    expect(userToken.code).toBe(0);
    expect(userToken.stdout).toMatch(/^mm\.[A-Za-z0-9_-]{43}\n$/);
    const token = userToken.stdout.trim();
    expect(readFileSync(join(h.data, 'tokens.json'), 'utf8')).not.toContain(token);
    expect(readFileSync(join(h.data, 'users.json'), 'utf8')).not.toContain('carol-password-1');
    expect((await get(token, '/api/v2/account/details')).json.data.attributes.username).toBe('carol');

    const teamToken = (await cli(['token', 'create', '--team', 'ops', '--org', 'omega'])).stdout.trim();
    const orgToken = (await cli(['token', 'create', '--org', 'omega'])).stdout.trim();
    expect((await get(teamToken, '/api/v2/account/details')).json.data.relationships['authenticated-resource'].data.type).toBe('teams');
    expect((await get(orgToken, '/api/v2/account/details')).json.data.relationships['authenticated-resource'].data).toEqual({
      id: 'omega',
      type: 'organizations',
    });
  });

  it('refuses duplicates, unknown references and bad arguments with a message and exit code', async () => {
    const dup = await cli(['user', 'create', '--username', 'carol', '--email', 'x@example.com']);
    expect(dup.code).toBe(1);
    expect(dup.stderr).toMatch(/A user named "carol" already exists/);
    expect((await cli(['org', 'create', '--name', 'x1', '--email', 'e@example.com', '--owner', 'nobody'])).stderr).toMatch(/No user named "nobody"/);
    expect((await cli(['token', 'create', '--team', 'nope', '--org', 'omega'])).stderr).toMatch(/No team "nope" in organization "omega"/);
    expect((await cli(['token', 'create', '--user', 'a', '--org', 'b'])).code).toBe(2);
    expect((await cli(['user', 'create', '--email', 'x@example.com'])).stderr).toMatch(/Missing --username/);
    expect(
      (await runCli(['user', 'create', '--username', 'dave', '--email', 'd@example.com', '--password-env', 'PW', '--data', h.data], h.dir, { PW: 'short' }))
        .stderr,
    ).toMatch(/at least 10 characters/);
    // Never on the command line: the old flag is refused, pointing at the ones that replace it.
    const onArgv = await cli(['user', 'create', '--username', 'erin', '--email', 'e@example.com', '--password', 'erin-password-1']);
    expect(onArgv.code).toBe(2);
    expect(onArgv.stderr).toMatch(/Unknown option --password\. Did you mean --password-(file|env)\?/);
    expect((await cli(['user', 'delete'])).code).toBe(2);
  });

  it('leaves no data folder behind when a command on one that does not exist is refused, and makes it when one succeeds', async () => {
    const data = join(h.dir, 'fresh-data');
    const ghost = await runCli(['token', 'create', '--user', 'ghost', '--data', data], h.dir);
    expect(ghost.code).toBe(1);
    expect(ghost.stderr).toMatch(/^error: No user named "ghost"\./);
    expect(existsSync(data)).toBe(false);
    expect((await runCli(['team', 'create', '--org', 'nope', '--name', 'ops', '--data', data], h.dir)).code).toBe(1);
    expect(existsSync(data)).toBe(false);

    expect((await runCli(['user', 'create', '--username', 'first', '--email', 'first@example.com', '--data', data], h.dir)).code).toBe(0);
    expect(readdirSync(data)).toEqual(['users.json']);
  });

  it('refuses an organization whose name differs from an existing one only in case, naming that one', async () => {
    const twin = await cli(['org', 'create', '--name', 'Acme', '--email', 'ops@example.com']);
    expect(twin.code).toBe(1);
    expect(twin.stderr).toBe(
      'error: An organization named "acme" already exists, and "Acme" differs from it only in case.\n' +
        'hint: Organization names are unique regardless of case (provider namespaces are lower case): use "acme", or another name.\n',
    );
    expect(JSON.parse(readFileSync(join(h.data, 'organizations.json'), 'utf8')).map((o: { name: string }) => o.name)).not.toContain('Acme');
  });
});

describe('org share', () => {
  const ADMIN = 'mm.sample-admin-token';
  const consumers = async (kind: string) =>
    (await get(ADMIN, `/api/v2/admin/organizations/beta/relationships/${kind}-consumers`)).json.data.map((o: { id: string }) => o.id);
  const attributes = async () => (await get(ADMIN, '/api/v2/admin/organizations/beta')).json.data.attributes;

  it('sets module and provider consumers, or global sharing, with spec 3.3’s rule, as the running server then shows', async () => {
    const set = await cli(['org', 'share', '--name', 'beta', '--module-consumers', 'acme', '--provider-consumers', 'acme,delta']);
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toEqual({
      name: 'beta',
      'global-module-sharing': false,
      'module-consumers': ['acme'],
      'global-provider-sharing': false,
      'provider-consumers': ['acme', 'delta'],
    });
    expect(await consumers('module')).toEqual(['acme']);
    expect(await consumers('provider')).toEqual(['acme', 'delta']);

    // Sharing providers with everyone clears their consumers and leaves the module consumers alone.
    expect((await cli(['org', 'share', '--name', 'beta', '--global-provider-sharing', 'true'])).code).toBe(0);
    expect(await consumers('provider')).toEqual([]);
    expect(await consumers('module')).toEqual(['acme']);
    expect((await attributes())['global-provider-sharing']).toBe(true);
    // Consumers again turn global sharing off; an empty list shares with nobody.
    expect((await cli(['org', 'share', '--name', 'beta', '--provider-consumers', ''])).code).toBe(0);
    expect((await attributes())['global-provider-sharing']).toBe(false);
  });

  it('refuses contradictions, unknown organizations and bad values with a message and exit code', async () => {
    const both = await cli(['org', 'share', '--name', 'beta', '--module-consumers', 'acme', '--global-module-sharing', 'true']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/contradict each other/);
    expect((await cli(['org', 'share', '--name', 'beta'])).code).toBe(2);
    expect((await cli(['org', 'share', '--name', 'beta', '--global-module-sharing', 'yes'])).code).toBe(2);
    expect((await cli(['org', 'share', '--name', 'nope', '--module-consumers', 'acme'])).stderr).toMatch(/No organization named "nope"/);
    const unknown = await cli(['org', 'share', '--name', 'beta', '--provider-consumers', 'acme,nope']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/The organization "nope" does not exist/);
    expect(unknown.stderr).toContain('hint: Create it first: modmirror org create --name nope');
    expect(await consumers('provider')).toEqual([]);
  });
});

describe('run-task record', () => {
  it('creates the run, stage and result, updates them, and prints the ids', async () => {
    const first = await cli(['run-task', 'record', '--run', 'run-pipeline01', '--org', 'acme', '--workspace', 'app', '--task', 'lint', '--status', 'running']);
    expect(first.code).toBe(0);
    const ids = JSON.parse(first.stdout);
    expect(ids).toEqual({ run: 'run-pipeline01', stage: expect.stringMatching(/^ts-/), result: expect.stringMatching(/^taskrs-/) });
    const second = JSON.parse(
      (
        await cli([
          'run-task',
          'record',
          '--run',
          'run-pipeline01',
          '--task',
          'lint',
          '--status',
          'failed',
          '--message',
          'two errors\nsee the log',
          '--stage-status',
          'awaiting_override',
        ])
      ).stdout,
    );
    expect(second).toEqual(ids);
    const stage = await get('mm.sample-user-token', `/api/v2/task-stages/${ids.stage}?include=task-results`);
    expect(stage.json.data.attributes.status).toBe('awaiting_override');
    expect(stage.json.included[0].attributes).toMatchObject({
      status: 'failed',
      message: 'two errors\nsee the log',
      'task-name': 'lint',
      'workspace-task-enforcement-level': 'mandatory',
    });
    expect(Object.keys(stage.json.included[0].attributes['status-timestamps'])).toEqual(['running-at', 'failed-at']);
    const overridden = await request(new URL(`/api/v2/task-stages/${ids.stage}/actions/override`, h.server.url), {
      method: 'POST',
      headers: { authorization: 'Bearer mm.sample-user-token' },
    });
    expect(overridden.statusCode).toBe(200);
    await overridden.body.dump();
  });

  it('derives the stage status from its results', async () => {
    const rec = async (task: string, status: string, enforcement = 'mandatory') =>
      JSON.parse(
        (
          await cli([
            'run-task',
            'record',
            '--run',
            'run-pipeline02',
            '--org',
            'acme',
            '--workspace',
            'app',
            '--task',
            task,
            '--status',
            status,
            '--enforcement',
            enforcement,
          ])
        ).stdout,
      );
    const { stage } = await rec('a', 'passed');
    await rec('b', 'failed', 'advisory');
    expect((await get('mm.sample-user-token', `/api/v2/task-stages/${stage}`)).json.data.attributes.status).toBe('passed');
    await rec('c', 'failed');
    expect((await get('mm.sample-user-token', `/api/v2/task-stages/${stage}`)).json.data.attributes.status).toBe('failed');
  });

  it('refuses unknown statuses and a run it cannot create', async () => {
    expect((await cli(['run-task', 'record', '--run', 'run-x', '--task', 't', '--status', 'exploded'])).stderr).toMatch(
      /Unknown task result status "exploded"/,
    );
    expect((await cli(['run-task', 'record', '--run', 'run-new', '--task', 't', '--status', 'passed'])).stderr).toMatch(/give --org and --workspace/);
  });

  it('enforces the free edition: one run task integration on at most ten workspaces', async () => {
    expect((await cli(['edition', 'set', 'free'])).code).toBe(0);
    const rec = (run: string, workspace: string, task: string) =>
      cli(['run-task', 'record', '--run', run, '--org', 'delta', '--workspace', workspace, '--task', task, '--status', 'passed']);
    // delta already has security-scan in the sample data.
    const second = await rec('run-free-1', 'ws1', 'cost');
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(/The free edition allows 1 run task integration per organization; delta would have 2/);
    for (let i = 1; i <= 9; i++) expect((await rec(`run-free-${i}`, `ws${i}`, 'security-scan')).code, `workspace ${i}`).toBe(0);
    const eleventh = await rec('run-free-10', 'ws10', 'security-scan');
    expect(eleventh.code).toBe(1);
    expect(eleventh.stderr).toMatch(/allows run tasks on 10 workspaces; delta would have 11/);
    expect((await cli(['edition', 'set', 'self-hosted'])).code).toBe(0);
    expect((await cli(['edition', 'set', 'gold'])).code).toBe(2);
  });
});
