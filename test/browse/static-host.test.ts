/// <reference lib="dom" />
// The browse page with no modmirror process: dist/ behind a real nginx with
// the block `modmirror hosting nginx` prints, driven in Debian's Chromium.

import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { launchChromium } from './chromium.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startNginx } from '../hosting/nginx-server.js';
import { freePort, ROOT, runCli, tempDir, writeFiles } from '../helpers.js';

let browser: Browser;
let nginx: { stop: () => void };
let url: string;

beforeAll(async () => {
  const dir = tempDir('mm-browse-nginx-');
  writeFiles(dir, { 'mirror.config.yaml': `sources:\n  - folder: ${JSON.stringify(join(ROOT, 'modules'))}\n` });
  expect((await runCli(['build', '--json'], dir)).code).toBe(0);
  const port = await freePort();
  const block = await runCli(['hosting', 'nginx', '--mirror', 'dist', '--listen', `127.0.0.1:${port}`], dir);
  expect(block.code, block.stderr).toBe(0);
  nginx = await startNginx(join(dir, 'nginx'), [block.stdout], [port]);
  url = `http://127.0.0.1:${port}/`;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  nginx?.stop();
});

it('loads, searches and opens a module from a plain nginx', async () => {
  const page = await browser.newPage();
  await page.goto(url);
  await expect.poll(() => page.textContent('#count')).toBe('4 modules');
  await page.fill('#search', 'storage');
  await expect.poll(() => page.locator('#results .title').allTextContents()).toEqual(['acme/storage/aws']);
  await page.click('#results .title');
  await page.waitForFunction(() => document.getElementById('module-title')?.textContent?.startsWith('acme/storage/aws'));
  expect(await page.locator('#panel-readme > .readme').count()).toBe(1);
  expect(await page.textContent('#usage')).toContain(`source  = "127.0.0.1:${new URL(url).port}/acme/storage/aws"`);
  await page.selectOption('#version', { index: 0 });
  expect(await page.locator('table').count()).toBeGreaterThan(3);
  await page.close();
});
