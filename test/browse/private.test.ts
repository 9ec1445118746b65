/// <reference lib="dom" />
// The browse page of a private registry in Debian's Chromium (playwright-core):
// it asks for a token, keeps it in the tab's session storage, sends it as a
// header (never in a URL), shows what that caller may read, and marks a
// version deprecated through the management API with its reason.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers.js';
import { startPrivateSite, type PrivateSite } from '../serve/private-site.js';

const SHOTS = join(ROOT, 'test-results', 'browse');

let site: PrivateSite;
let browser: Browser;
let page: Page;
const requests: { url: string; authorization?: string }[] = [];

beforeAll(async () => {
  site = await startPrivateSite();
  const deprecated = await site.api(
    'PATCH',
    'organizations/acme/registry-modules/private/acme/hello/null/1.0.0',
    {
      data: {
        type: 'module-versions',
        attributes: { deprecation: { 'deprecated-status': 'Deprecated', reason: 'Use 1.2 <b>now</b>', link: 'https://example.com/upgrade' } },
      },
    },
    site.tokens.owner,
  );
  expect(deprecated.status).toBe(200);
  browser = await launchChromium();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  page.on('request', (r) => requests.push({ url: r.url(), authorization: r.headers()['authorization'] }));
  mkdirSync(SHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await site?.close();
});

async function signIn(token: string): Promise<void> {
  await page.waitForSelector('#sign-in');
  await page.fill('#token', token);
  await page.click('#sign-in button');
}

const titles = () => page.locator('#results .title').allTextContents();

describe('browse page, private registry', () => {
  it('asks for a token, then shows only what that caller may read', async () => {
    await page.goto(site.server.url);
    await page.waitForSelector('#sign-in');
    await page.screenshot({ path: join(SHOTS, 'private-sign-in.png') });
    await signIn('mm.wrong');
    await expect.poll(() => page.textContent('#main')).toContain('That token was not accepted');
    await signIn(site.tokens.other!);
    await expect.poll(titles).toEqual(['gamma/hello/null', 'omega/hello/null']);
    expect(await page.textContent('#count')).toContain('2 modules');
    await page.click('#sign-out');
    await signIn(site.tokens.user!);
    await expect.poll(titles).toEqual(['acme/hello/null', 'beta/hello/null', 'gamma/hello/null']);
    expect(await page.evaluate(() => sessionStorage.getItem('modmirror.token'))).toBe(site.tokens.user);
  });

  it('marks a deprecated version, with its reason and link, and sends the token only as a header', async () => {
    await page.goto(`${site.server.url}#/acme/hello/null/1.0.0`);
    await page.waitForSelector('#deprecation');
    expect(await page.textContent('#deprecation')).toBe('Deprecated: Use 1.2 <b>now</b> · more');
    expect(await page.getAttribute('#deprecation a', 'href')).toBe('https://example.com/upgrade');
    expect(await page.locator('#version option').allTextContents()).toEqual(['1.2.0', '1.0.0 (deprecated)']);
    // The version's detail document, fetched with the token: its description (the README's first paragraph).
    await expect.poll(() => page.textContent('#description')).toBe('A module.');
    await page.screenshot({ path: join(SHOTS, 'private-deprecated.png'), fullPage: true });
    await page.goto(`${site.server.url}#/acme/hello/null/1.2.0`);
    await page.waitForFunction(() => (document.getElementById('version') as HTMLSelectElement | null)?.value === '1.2.0');
    expect(await page.locator('#deprecation').count()).toBe(0);

    const tokens = Object.values(site.tokens).filter((t): t is string => t !== undefined);
    for (const r of requests) for (const t of tokens) expect(r.url).not.toContain(t);
    const index = requests.filter((r) => r.url.endsWith('browse/index.json') && r.authorization === `Bearer ${site.tokens.user}`);
    expect(index.length).toBeGreaterThan(0);
    const details = requests.filter((r) => r.url.endsWith('/v1/modules/acme/hello/null/1.0.0/index.json'));
    expect(details.length).toBeGreaterThan(0);
    for (const r of details) expect(r.authorization).toBe(`Bearer ${site.tokens.user}`);
  });

  it('keeps the token in this tab only: another tab asks again', async () => {
    const other = await (await browser.newContext()).newPage();
    await other.goto(site.server.url);
    await other.waitForSelector('#sign-in');
    await other.close();
  });
});
