// No update is lost under 200 parallel PATCHes, and a server killed in the
// middle of a stream of writes leaves every data file whole, holding the
// last acknowledged state. A malformed file stops the server, naming it, and
// one edited while the server runs is a 500 (the log names it), not "retry later".

import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { describe, expect, it, vi } from 'vitest';
import { runCli, spawnServe, writeFromAnotherProcess } from '../helpers.js';
import { startHarness, TOKENS } from './helpers.js';
import { organizationRecord } from './records.js';

const orgJson = (name: string) => organizationRecord(name, { email: `${name}@example.com`, createdAt: '2026-01-01T00:00:00.000Z' });

describe('concurrent writes', () => {
  it('loses none of 200 parallel PATCHes to different and to the same organizations', async () => {
    const h = await startHarness();
    try {
      const existing = JSON.parse(readFileSync(join(h.data, 'organizations.json'), 'utf8'));
      writeFileSync(join(h.data, 'organizations.json'), JSON.stringify([...existing, ...Array.from({ length: 100 }, (_, i) => orgJson(`org${i}`))]));
      // A request sent after another process replaced the file is answered from what it wrote.
      expect((await h.call('admin', 'GET', '/api/v2/admin/organizations/org99')).status).toBe(200);
      const patch = (org: string, attributes: Record<string, unknown>) =>
        h.call('admin', 'PATCH', `/api/v2/admin/organizations/${org}`, { data: { type: 'organizations', attributes } });
      // 100 different organizations each get their own limit; one organization gets 100 different ones.
      const responses = await Promise.all([
        ...Array.from({ length: 100 }, (_, i) => patch(`org${i}`, { 'workspace-limit': 1000 + i })),
        ...Array.from({ length: 100 }, (_, i) =>
          patch('beta', { 'workspace-limit': i, ...(i % 2 ? { 'access-beta-tools': true } : { 'plan-timeout': `${i}m` }) }),
        ),
      ]);
      expect(responses.map((r) => r.status).filter((s) => s !== 200)).toEqual([]);
      const onDisk = JSON.parse(readFileSync(join(h.data, 'organizations.json'), 'utf8')) as {
        name: string;
        workspaceLimit: number;
        accessBetaTools: boolean;
        planTimeout: string;
      }[];
      for (let i = 0; i < 100; i++) expect(onDisk.find((o) => o.name === `org${i}`)?.workspaceLimit).toBe(1000 + i);
      const beta = onDisk.find((o) => o.name === 'beta')!;
      // Every PATCH to beta landed: the odd ones set access-beta-tools, the even ones a plan timeout, none undone.
      expect(beta.accessBetaTools).toBe(true);
      expect(beta.planTimeout).toMatch(/^\d+m$/);
      expect(Number(beta.planTimeout.slice(0, -1)) % 2).toBe(0);
      const served = (await h.call('admin', 'GET', '/api/v2/admin/organizations/beta')).json.data.attributes;
      expect(served['workspace-limit']).toBe(beta.workspaceLimit);
      expect(readdirSync(h.data).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    } finally {
      await h.server.close();
    }
  });
});

describe('crashes', () => {
  it('keeps every file whole and the last acknowledged write when killed mid-stream, many times', async () => {
    const h = await startHarness();
    await h.server.close();
    const dist = join(h.dir, 'dist');
    const betaLimit = () =>
      (JSON.parse(readFileSync(join(h.data, 'organizations.json'), 'utf8')) as { name: string; workspaceLimit: number }[]).find((o) => o.name === 'beta')!
        .workspaceLimit;
    // A kill before the first acknowledged write leaves beta's sample value: count from it.
    const initial = betaLimit();
    let acknowledged = initial;
    for (let round = 0; round < 8; round++) {
      const { child, url, exited } = await spawnServe(['--mirror', dist, '--data', h.data, '--port', '0', '--quiet']);
      // A stream of writes; the kill lands at a different moment each round, counted from
      // the round's first acknowledged write so that a slow machine still kills mid-stream.
      let killScheduled = false;
      for (let i = acknowledged + 1; ; i++) {
        try {
          const res = await request(new URL('/api/v2/admin/organizations/beta', url), {
            method: 'PATCH',
            headers: { authorization: `Bearer ${TOKENS.admin}`, 'content-type': 'application/vnd.api+json' },
            body: JSON.stringify({ data: { type: 'organizations', attributes: { 'workspace-limit': i } } }),
          });
          await res.body.dump();
          if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`);
          acknowledged = i;
          if (!killScheduled) {
            killScheduled = true;
            setTimeout(() => child.kill('SIGKILL'), round * 37);
          }
        } catch {
          break;
        }
      }
      await exited;
      for (const file of readdirSync(h.data).filter((n) => n.endsWith('.json'))) {
        expect(() => JSON.parse(readFileSync(join(h.data, file), 'utf8')), file).not.toThrow();
      }
      // The write in flight at the kill may or may not have landed; nothing acknowledged is missing.
      const stored = betaLimit();
      expect([acknowledged, acknowledged + 1]).toContain(stored);
      acknowledged = stored;
    }
    // Every round acknowledged at least its first write before the kill.
    expect(acknowledged - initial).toBeGreaterThanOrEqual(8);
  });
});

describe('malformed data', () => {
  it('stops the server with the file and the problem', async () => {
    const h = await startHarness();
    await h.server.close();
    writeFileSync(join(h.data, 'users.json'), '[{"id": "user-1", "username": "x"');
    const torn = await runCli(['serve', '--mirror', 'dist', '--data', 'data', '--port', '0'], h.dir);
    expect(torn.code).toBe(1);
    expect(torn.stderr).toMatch(/The data file ".*users\.json" is not valid JSON/);
    writeFileSync(join(h.data, 'users.json'), '[{"id": "user-1"}]');
    expect((await runCli(['serve', '--mirror', 'dist', '--data', 'data', '--port', '0'], h.dir)).stderr).toMatch(
      /users\.json" is malformed: entry 0 lacks one of id, username, email, passwordHash/,
    );
    writeFileSync(join(h.data, 'users.json'), '[]');
    writeFileSync(join(h.data, 'settings.json'), '{"edition": "enterprise-plus"}');
    expect((await runCli(['serve', '--mirror', 'dist', '--data', 'data', '--port', '0'], h.dir)).stderr).toMatch(
      /"edition" must be one of self-hosted, free, standard, plus/,
    );
  });

  it('answers a 500, not a retryable 503, when a file is edited into invalid JSON while serving; the log names the file', async () => {
    const h = await startHarness();
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const users = readFileSync(join(h.data, 'users.json'));
      writeFromAnotherProcess(join(h.data, 'users.json'), '[{"id": "user-1", "username": "x"');
      // A request sent after another process replaced the file is answered from what it wrote.
      const torn = await h.call('user', 'GET', '/api/v2/account/details');
      expect(torn.status).toBe(500);
      expect(torn.headers['retry-after']).toBeUndefined();
      // The body says what kind of failure, never a server path: any caller can cause it.
      expect(torn.json.errors).toEqual([
        { status: '500', title: 'internal server error', detail: "Internal error (DATA_INVALID): the server's log says what failed." },
      ]);
      // The operator sees it too, even with --quiet.
      expect(errors.mock.calls.flat().join('\n')).toMatch(/users\.json" is not valid JSON/);
      writeFromAnotherProcess(join(h.data, 'users.json'), users.toString('utf8'));
      expect((await h.call('user', 'GET', '/api/v2/account/details')).status).toBe(200);
    } finally {
      errors.mockRestore();
      await h.server.close();
    }
  });
});
