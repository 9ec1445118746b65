// Usage in private mode: every archive sent whole is recorded with the
// caller's organization (and team) or user, the module, version and day;
// `modmirror usage` and the admin API report it, `--deprecated` the
// deprecated versions still downloaded and by whom; and a serve killed with
// SIGKILL mid-traffic loses no day recorded before.

import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readUsage, USAGE_FLUSH_MS, UsageLog } from '../../src/usage/store.js';
import { runCli, spawnServe } from '../helpers.js';
import { get, startPrivateSite, type PrivateSite } from '../serve/private-site.js';

const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);
const today = () => daysAgo(0);

/** Terraform's way: the download answer with a token, then the signed location without one. */
async function signedDownload(base: string, token: string, path: string): Promise<number> {
  const answer = await request(new URL(`${path}/download`, base), { headers: { authorization: `Bearer ${token}` } });
  const { location } = (await answer.body.json()) as { location: string };
  const res = await request(new URL(location, new URL(`${path}/download`, base)));
  await res.body.dump();
  return res.statusCode;
}

/** A download is recorded once the server sees its response close, just after the client has the last byte: wait for `n` of today's. */
const recorded = (data: string, n: number, who: (r: ReturnType<typeof readUsage>[number]) => boolean = () => true) =>
  vi.waitFor(
    () =>
      expect(
        readUsage(data)
          .filter((r) => r.day === today() && who(r))
          .reduce((sum, r) => sum + r.count, 0),
      ).toBe(n),
    { timeout: 10_000, interval: 20 },
  );

describe('recorded by serve --access private', () => {
  let site: PrivateSite;
  beforeAll(async () => {
    site = await startPrivateSite();
    expect(await signedDownload(site.server.url, site.tokens.team!, 'v1/modules/acme/hello/null/1.0.0')).toBe(200);
    expect(await signedDownload(site.server.url, site.tokens.team!, 'v1/modules/acme/hello/null/1.0.0')).toBe(200);
    expect(await signedDownload(site.server.url, site.tokens.organization!, 'v1/modules/beta/hello/null/1.2.0')).toBe(200);
    expect((await get(site, 'user', 'v1/modules/gamma/hello/null/1.0.0/hello-null-1.0.0.tar.gz')).status).toBe(200);
    // A 404 sends no archive: not a download.
    expect((await get(site, 'user', 'v1/modules/omega/hello/null/1.0.0/hello-null-1.0.0.tar.gz')).status).toBe(404);
    await recorded(site.data, 4);
    const deprecated = await runCli(['deprecate', 'acme/hello/null', '1.0.0', '--reason', 'Use 1.2.0', '--mirror', 'dist'], site.dir);
    expect(deprecated.stderr).toBe('');
  });
  afterAll(() => site?.close());

  it('records who downloaded which version, on which day', () => {
    const rows = readUsage(site.data).sort((a, b) => (a.module < b.module ? -1 : 1));
    expect(rows).toEqual([
      { day: today(), module: 'acme/hello/null', version: '1.0.0', organization: 'acme', team: 'platform', count: 2 },
      { day: today(), module: 'beta/hello/null', version: '1.2.0', organization: 'acme', count: 1 },
      { day: today(), module: 'gamma/hello/null', version: '1.0.0', user: 'alice', count: 1 },
    ]);
  });

  it('modmirror usage reports it, as text and JSON, by day and module', async () => {
    const text = await runCli(['usage'], site.dir);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      /^acme\/hello\/null 1\.0\.0 {2}\(deprecated: Use 1\.2\.0\)\n {2}organization acme, team platform +2 downloads {2}\d{4}-\d\d-\d\d$/m,
    );
    expect(text.stdout).toMatch(/^ {2}user alice +1 download {2}/m);
    const json = await runCli(['usage', '--json', '--module', 'beta/hello/null'], site.dir);
    expect(JSON.parse(json.stdout).usage).toEqual([
      { module: 'beta/hello/null', version: '1.2.0', organization: 'acme', downloads: 1, firstDay: today(), lastDay: today() },
    ]);
    const later = await runCli(['usage', '--since', daysAgo(-1)], site.dir);
    expect(later.stdout.trim()).toBe(`No downloads recorded since ${daysAgo(-1)}.`);
  });

  it('--deprecated lists the deprecated versions still downloaded, and by whom', async () => {
    const result = await runCli(['usage', '--deprecated', '--json'], site.dir);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).usage).toEqual([
      expect.objectContaining({
        module: 'acme/hello/null',
        version: '1.0.0',
        organization: 'acme',
        team: 'platform',
        downloads: 2,
        deprecation: { reason: 'Use 1.2.0', link: null },
      }),
    ]);
  });

  it('refuses a bad filter with exit 2, and --deprecated without a mirror with exit 1', async () => {
    for (const args of [
      ['--since', 'yesterday'],
      ['--since', '2025-13-45'],
      ['--module', 'acme/hello'],
    ]) {
      const result = await runCli(['usage', ...args], site.dir);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(/^error: Invalid --(since|module) must be/m);
    }
    const noMirror = await runCli(['usage', '--deprecated', '--mirror', 'nothing'], site.dir);
    expect(noMirror.code).toBe(2);
    expect(noMirror.stderr).toMatch(/holds no built mirror/);
  });

  it('the admin API gives the same report to site administrators only, and 400 for a bad filter', async () => {
    const report = await site.api('GET', 'admin/usage?filter[deprecated]=true');
    expect(report.status).toBe(200);
    expect(report.json.data).toEqual([
      {
        type: 'module-version-usages',
        id: 'acme/hello/null@1.0.0@acme/platform',
        attributes: expect.objectContaining({
          module: 'acme/hello/null',
          version: '1.0.0',
          organization: 'acme',
          team: 'platform',
          downloads: 2,
          deprecation: { reason: 'Use 1.2.0', link: null },
        }),
      },
    ]);
    expect(report.json.meta.pagination['total-count']).toBe(1);
    const all = await site.api('GET', `admin/usage?filter[since]=${today()}&page[size]=2`);
    expect(all.json.data).toHaveLength(2);
    expect(all.json.meta.pagination['total-count']).toBe(3);
    for (const caller of ['user', 'owner', 'organization'] as const)
      expect((await site.api('GET', 'admin/usage', undefined, site.tokens[caller])).status).toBe(404);
    for (const query of ['filter[since]=soon', 'filter[module]=x', 'filter[deprecated]=maybe', 'page[size]=-1']) {
      const bad = await site.api('GET', `admin/usage?${query}`);
      expect(bad.status, query).toBe(400);
      expect(bad.json.errors[0].detail).toMatch(/must be/);
    }
  });
});

it('a serve killed with SIGKILL mid-traffic loses no recorded day, and records again after a restart', async () => {
  const site = await startPrivateSite();
  await site.close();
  const earlier = new UsageLog(site.data);
  for (let i = 0; i < 50; i++) earlier.record({ day: daysAgo(3), module: 'acme/hello/null', version: '1.0.0', organization: 'acme' });
  for (let i = 0; i < 70; i++) earlier.record({ day: daysAgo(2), module: 'acme/hello/null', version: '1.2.0', user: 'alice' });
  await earlier.close();

  // A small bound: segments fill and fold into counts.json all through the traffic.
  const args = ['--port', '0', '--mirror', site.dist, '--data', site.data, '--access', 'private', '--quiet', '--usage-max-mib', '0.02'];
  const first = await spawnServe(args, site.dir);
  let sent = 0;
  let stop = false;
  const traffic = Array.from({ length: 8 }, async () => {
    while (!stop) {
      const ok = await signedDownload(first.url, site.tokens.team!, 'v1/modules/acme/hello/null/1.0.0').catch(() => 0);
      if (ok === 200) sent++;
    }
  });
  while (sent < 200) await new Promise((r) => setTimeout(r, 10));
  // Downloads are written within USAGE_FLUSH_MS of being sent: each the client had a good while before the kill is on disk.
  const sentWellBefore = sent;
  await new Promise((r) => setTimeout(r, USAGE_FLUSH_MS + 500));
  first.child.kill('SIGKILL');
  stop = true;
  await Promise.all(traffic);
  await first.exited;

  const second = await spawnServe(args, site.dir);
  for (let i = 0; i < 5; i++) expect(await signedDownload(second.url, site.tokens.user!, 'v1/modules/acme/hello/null/1.2.0')).toBe(200);
  await recorded(site.data, 5, (r) => r.user === 'alice');
  second.child.kill('SIGTERM');
  await second.exited;

  const count = (filter: (r: ReturnType<typeof readUsage>[number]) => boolean) =>
    readUsage(site.data)
      .filter(filter)
      .reduce((n, r) => n + r.count, 0);
  expect(count((r) => r.day === daysAgo(3))).toBe(50);
  expect(count((r) => r.day === daysAgo(2))).toBe(70);
  const beforeKill = count((r) => r.day === today() && r.team === 'platform');
  expect(beforeKill).toBeGreaterThanOrEqual(sentWellBefore);
  expect(beforeKill).toBeLessThanOrEqual(sent);
  expect(count((r) => r.day === today() && r.user === 'alice')).toBe(5);
  const report = await runCli(['usage', '--json', '--data', site.data, '--mirror', site.dist], site.dir);
  expect(report.code).toBe(0);
});
