// go-tfe itself against the management API: Debian's go-tfe 0.11.1
// (golang-github-hashicorp-go-tfe-dev), compiled offline into our probe,
// runs tfe.NewClient (GET /api/v2/ping and its headers), Users.ReadCurrent
// and Users.Update over real HTTP. go-tfe 0.11 predates the admin and task
// stage APIs; test/management/go-tfe.test.ts sends what go-tfe v1 sends there.

import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, TOKENS, type Harness } from '../management/helpers.js';
import { buildGoProgram } from './go-build.js';

let h: Harness;
let probe: string;
beforeAll(async () => {
  const [build, harness] = await Promise.all([buildGoProgram(join(import.meta.dirname, 'tfe-probe')), startHarness()]);
  probe = build.binary;
  h = harness;
  console.info(`tfe-probe: ${build.cached ? 'cached' : 'compiled'} in ${build.seconds} s`);
}, 300_000);
afterAll(() => h?.server.close());

interface UserView {
  id: string;
  username: string;
  email: string;
  unconfirmedEmail: string;
  isServiceAccount: boolean;
}
interface Report {
  remoteAPIVersion: string;
  current?: UserView;
  updated?: UserView;
  error?: string;
}

/** Runs the probe; it prints one JSON report and exits 1 when go-tfe returned an error. */
function runProbe(token: string, args: string[] = []): Promise<{ code: number; report: Report }> {
  return new Promise((resolve, reject) => {
    execFile(probe, ['-address', h.server.url.replace(/\/$/, ''), '-token', token, ...args], { timeout: 30_000 }, (error, stdout, stderr) => {
      const code = error ? ((error as { code?: number }).code ?? -1) : 0;
      try {
        resolve({ code, report: JSON.parse(stdout) as Report });
      } catch {
        reject(new Error(`tfe-probe exited ${code} without a report: ${stderr || stdout}`));
      }
    });
  });
}

describe('go-tfe 0.11 (Debian) against modmirror serve', () => {
  it('NewClient reads TFP-API-Version from ping; Users.ReadCurrent reads the account', async () => {
    const { code, report } = await runProbe(TOKENS.user);
    expect(report).toEqual({
      remoteAPIVersion: '2.6',
      current: { id: 'user-sampleAlice0000001', username: 'alice', email: 'alice@example.com', unconfirmedEmail: '', isServiceAccount: false },
    });
    expect(code).toBe(0);
  });

  it('Users.Update changes the username and holds a new e-mail address for confirmation', async () => {
    const { code, report } = await runProbe(TOKENS.user, ['-username', 'alice2', '-email', 'alice2@example.com']);
    expect(report.error).toBeUndefined();
    expect(code).toBe(0);
    expect(report.updated).toEqual({
      id: 'user-sampleAlice0000001',
      username: 'alice2',
      email: 'alice@example.com',
      unconfirmedEmail: 'alice2@example.com',
      isServiceAccount: false,
    });
    expect((await h.call('user', 'GET', '/api/v2/account/details')).json.data.attributes).toMatchObject({
      username: 'alice2',
      'unconfirmed-email': 'alice2@example.com',
    });
  });

  it('a team token reads its service user and may not update it; go-tfe reports 401 as "unauthorized"', async () => {
    const { code, report } = await runProbe(TOKENS.team, ['-username', 'renamed']);
    expect(report.current).toMatchObject({ isServiceAccount: true, email: '' });
    expect(report.error).toBe('Users.Update: unauthorized');
    expect(code).toBe(1);
  });

  it('an unknown token passes ping (no token needed) and fails on the first call', async () => {
    const { report } = await runProbe(TOKENS.unknown);
    expect(report).toEqual({ remoteAPIVersion: '2.6', error: 'Users.ReadCurrent: unauthorized' });
  });
});
