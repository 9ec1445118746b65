/// <reference lib="dom" />
// `modmirror dev` as a user runs it: a process of its own over a folder of
// modules, a real Chromium on its browse page. A save shows on the open page
// with no reload; a syntax error is printed as file:line:column and shown on
// the module's page (and the home page) while the last good build stays
// served, until it is fixed; a burst of writes is one rebuild.

import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../browse/chromium.js';
import { git as gitIn, makeRepo, ROOT, runCli, spawnListening, tempDir, writeFiles, type ServeProcess } from '../helpers.js';

const VERSION = 'modules/acme/app/aws/1.0.0';
const SHOTS = join(ROOT, 'test-results', 'browse');
let dir: string;
let dev: ServeProcess;
let browser: Browser;
let page: Page;

const rebuilds = () => (dev.stdout().match(/^rebuilt /gm) ?? []).length;

beforeAll(async () => {
  dir = tempDir('mm-dev-');
  writeFiles(dir, {
    [`${VERSION}/main.tf`]: 'variable "region" {\n  type = string\n}\n',
    [`${VERSION}/README.md`]: '# app\n\nThe application.\n',
    'modules/acme/db/aws/1.0.0/main.tf': 'variable "size" {\n  default = 10\n}\n',
  });
  dev = await spawnListening(['dev', '--modules', 'modules', '--port', '0'], dir);
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
});

afterAll(async () => {
  await browser?.close();
  dev?.child.kill('SIGTERM');
  await dev?.exited;
});

/** Waits until dev has printed `n` rebuilds in all. */
async function rebuilt(n: number): Promise<void> {
  await expect.poll(rebuilds, { timeout: 10_000 }).toBeGreaterThanOrEqual(n);
}

describe('modmirror dev', () => {
  it('shows a save on the open page with no reload', async () => {
    await page.goto(`${dev.url}#/acme/app/aws`);
    await page.waitForSelector('#module-title');
    // A marker the page keeps only if it is never loaded again.
    await page.evaluate(() => ((window as unknown as { kept: boolean }).kept = true));
    writeFileSync(join(dir, VERSION, 'main.tf'), 'variable "region" {\n  type = string\n}\n\nvariable "zone_added" {\n  default = "a"\n}\n');
    await expect.poll(() => page.locator('code', { hasText: 'zone_added' }).count(), { timeout: 10_000 }).toBeGreaterThan(0);
    expect(await page.evaluate(() => (window as unknown as { kept?: boolean }).kept)).toBe(true);
  });

  it('shows a syntax error on the page and in its output until it is fixed, serving the last good build meanwhile', async () => {
    const before = rebuilds();
    writeFileSync(join(dir, VERSION, 'main.tf'), 'variable "region" {\n  default = \n}\n');
    await expect.poll(() => page.textContent('#dev-errors').catch(() => null), { timeout: 10_000 }).toContain('main.tf:2:13');
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: join(SHOTS, 'dev-error.png') });
    await rebuilt(before + 1);
    await expect.poll(() => dev.stdout()).toContain(`${join('modules/acme/app/aws/1.0.0', 'main.tf')}:2:13: Expected an expression`);
    // The last good build is still what the registry answers.
    const detail = await request(new URL('v1/modules/acme/app/aws/1.0.0', dev.url));
    expect(JSON.stringify(await detail.body.json())).toContain('zone_added');
    // The home page names the failing module in its banner.
    await page.goto(`${dev.url}#/`);
    await expect.poll(() => page.locator('#dev-errors a').allTextContents()).toEqual(['acme/app/aws 1.0.0']);
    await page.goto(`${dev.url}#/acme/app/aws`);
    await page.waitForSelector('#dev-errors');

    writeFileSync(join(dir, VERSION, 'main.tf'), 'variable "region" {\n  default = "eu"\n}\n');
    await expect.poll(() => page.locator('#dev-errors').count(), { timeout: 10_000 }).toBe(0);
    await expect.poll(() => page.locator('code', { hasText: 'zone_added' }).count()).toBe(0);
    await expect.poll(() => dev.stdout()).toContain('fixed: every version builds again');
  });

  it('rebuilds once for a burst of writes and a rename', async () => {
    // Quiet first: no rebuild is pending from the test before.
    await new Promise((r) => setTimeout(r, 500));
    const before = rebuilds();
    for (let i = 0; i < 20; i++) writeFileSync(join(dir, VERSION, `file${i}.tf`), `variable "v${i}" {}\n`);
    // An editor's save: a temporary file renamed over the real one.
    writeFileSync(join(dir, VERSION, '.main.tf.swp'), 'variable "region" {\n  default = "us"\n}\n');
    renameSync(join(dir, VERSION, '.main.tf.swp'), join(dir, VERSION, 'main.tf'));
    await rebuilt(before + 1);
    // Longer than the quiet time dev waits for and a rebuild: a second rebuild would have started by now.
    await new Promise((r) => setTimeout(r, 1500));
    expect(rebuilds()).toBe(before + 1);
    await expect.poll(() => page.locator('code', { hasText: 'v19' }).count(), { timeout: 10_000 }).toBeGreaterThan(0);
  });

  it('adds a version folder made while it runs, and removes one deleted', async () => {
    const versions = async () => {
      const res = await request(new URL('v1/modules/acme/db/aws/versions', dev.url));
      const body = (await res.body.json()) as { modules: { versions: { version: string }[] }[] };
      return body.modules[0]!.versions.map((v) => v.version).sort();
    };
    writeFiles(dir, { 'modules/acme/db/aws/1.1.0/main.tf': 'variable "size" {\n  default = 20\n}\n' });
    await expect.poll(versions, { timeout: 10_000 }).toEqual(['1.0.0', '1.1.0']);
    rmSync(join(dir, 'modules/acme/db/aws/1.0.0'), { recursive: true });
    await expect.poll(versions, { timeout: 10_000 }).toEqual(['1.1.0']);
  });
});

describe('modmirror dev with a config and a git source', () => {
  it('rebuilds when a tag is added or the config changes (a broken config keeps the last build), and never writes into the mirror the config builds', async () => {
    const root = tempDir('mm-dev-git-');
    const repo = makeRepo(join(root, 'terraform-aws-vpc'), [{ files: { 'main.tf': 'variable "cidr" {}\n' }, tags: ['v1.0.0'], date: '2024-01-01T00:00:00Z' }]);
    writeFiles(root, { 'mirror.config.yaml': `out: dist\nsources:\n  - git: ${JSON.stringify(repo)}\n    namespace: acme\n` });
    const refused = await runCli(['dev', '--mirror', 'dist'], root);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('is the mirror the config builds');

    const git = await spawnListening(['dev', '--port', '0'], root);
    try {
      const versions = async () => {
        const res = await request(new URL('v1/modules/acme/vpc/aws/versions', git.url));
        const body = (await res.body.json()) as { modules: { versions: { version: string }[] }[] };
        return body.modules[0]!.versions.map((v) => v.version).sort();
      };
      expect(await versions()).toEqual(['1.0.0']);
      makeRepoCommit(repo, 'v1.1.0');
      await expect.poll(versions, { timeout: 10_000 }).toEqual(['1.0.0', '1.1.0']);
      expect(existsSync(join(root, 'dist'))).toBe(false);

      // The config itself: a broken one is reported and the last good build stays; a fixed one is read again.
      writeFileSync(join(root, 'mirror.config.yaml'), 'out: dist\nsources: [\n');
      await expect.poll(() => git.stdout(), { timeout: 10_000 }).toMatch(/error: [^]*mirror\.config\.yaml:3:1: /);
      expect(await versions()).toEqual(['1.0.0', '1.1.0']);
      writeFiles(root, { 'more/acme/extra/aws/0.1.0/main.tf': 'variable "x" {}\n' });
      writeFileSync(join(root, 'mirror.config.yaml'), `out: dist\nsources:\n  - git: ${JSON.stringify(repo)}\n    namespace: acme\n  - folder: more\n`);
      await expect.poll(async () => (await request(new URL('v1/modules/acme/extra/aws/versions', git.url))).statusCode, { timeout: 10_000 }).toBe(200);
      // Printed once the build that serves it has returned.
      await expect.poll(() => git.stdout()).toContain('fixed: every version builds again');
    } finally {
      git.child.kill('SIGTERM');
      await git.exited;
    }
  });
});

/** A new commit in `repo`, tagged. */
function makeRepoCommit(repo: string, tag: string): void {
  writeFileSync(join(repo, 'outputs.tf'), 'output "id" {\n  value = 1\n}\n');
  gitIn(repo, ['add', '-A']);
  gitIn(repo, ['commit', '-q', '-m', tag]);
  gitIn(repo, ['tag', tag]);
}
