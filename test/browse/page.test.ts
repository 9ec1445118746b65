/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The browse page in a real headless Chromium (Debian's package, driven by
// playwright-core): search, filters, module pages, versions, providers, the
// usage snippet, download counts, and a malicious README that stays inert.

import { mkdirSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './chromium.js';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/serve/index.js';
import { ROOT, runCli, serveMirror, tempDir, writeFiles } from '../helpers.js';

const SHOTS = join(ROOT, 'test-results', 'browse');
const EVIL_README = [
  '# Evil',
  '',
  'A module whose README tries everything.',
  '',
  '<script>window.__pwned = true</script>',
  '<img src="x" onerror="window.__pwned = true">',
  '',
  '[click me](javascript:window.__pwned=true) and [fine](https://example.com/docs)',
  '',
  '![tracker](http://127.0.0.2:9/pixel.png)',
  '',
].join('\n');

const EVIL_PUBLISHED = new Date('2030-01-02T03:04:05Z');
/** Every version of the samples and the evil module: all fit in the page's 20 recent rows. */
const ALL_VERSIONS = [
  'acme/dns/aws 1.0.0',
  'acme/dns/google 1.0.0',
  'acme/network/aws 1.0.0',
  'acme/network/aws 1.1.0',
  'acme/network/aws 2.0.0',
  'acme/network/aws 2.1.0-rc.1',
  'acme/storage/aws 1.0.0',
  'zz/evil/aws 0.1.0',
];

let server: RunningServer;
let browser: Browser;
let page: Page;
const foreignRequests: string[] = [];

beforeAll(async () => {
  const dir = tempDir('mm-browse-');
  writeFiles(dir, {
    'mirror.config.yaml': `sources:\n  - folder: ${JSON.stringify(join(ROOT, 'modules'))}\n  - folder: extra\n`,
    'extra/zz/evil/aws/0.1.0/main.tf': 'variable "x" {}\n',
    'extra/zz/evil/aws/0.1.0/README.md': EVIL_README,
  });
  // A folder version is dated by its newest file: this one is the newest of all,
  // whenever the samples were checked out.
  for (const file of ['main.tf', 'README.md']) utimesSync(join(dir, 'extra/zz/evil/aws/0.1.0', file), EVIL_PUBLISHED, EVIL_PUBLISHED);
  const built = await runCli(['build', '--json'], dir);
  expect(built.code, built.stderr).toBe(0);
  server = await serveMirror(dir);
  browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url.replace(/\/$/, '') });
  page = await context.newPage();
  page.on('request', (r) => {
    if (!r.url().startsWith(server.url)) foreignRequests.push(r.url());
  });
  mkdirSync(SHOTS, { recursive: true });
});

/** Opens a module page and waits until it shows that module (a hash change keeps the old page until then). */
async function openModule(path: string): Promise<void> {
  // Through the home view, so no element of the previous module page can be mistaken for the new one.
  await page.goto(`${server.url}#/`);
  await page.waitForSelector('#search');
  await page.goto(`${server.url}#/${path}`);
  const key = path.split('/').slice(0, 3).join('/');
  await page.waitForFunction((k) => document.getElementById('module-title')?.textContent?.startsWith(k) && document.querySelector('#version') !== null, key);
  if (path.split('/').length === 4)
    await page.waitForFunction((v) => (document.getElementById('version') as HTMLSelectElement).value === v, path.split('/')[3]);
}

/** The provision snippet of acme/network/aws: its one required input to fill in. */
const usageOf = (host: string, version: string) =>
  `module "network" {\n  source  = "${host}/acme/network/aws"\n  version = "${version}"\n\n  # Required inputs\n  name = "" # string\n}\n`;

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('home page', () => {
  it('shows the module count, searches as you type and filters', async () => {
    await page.goto(server.url);
    await expect.poll(() => page.textContent('#count')).toBe('5 modules');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('search');
    const recent = await page.locator('#recent li a').allTextContents();
    expect([...recent].sort()).toEqual(ALL_VERSIONS);
    expect(recent[0]).toBe('zz/evil/aws 0.1.0');
    expect(await page.locator('#recent li').first().textContent()).toBe('zz/evil/aws 0.1.0 2030-01-02');
    // A date is never cut over two lines, however narrow the column.
    expect(
      await page
        .locator('#recent time')
        .first()
        .evaluate((t) => getComputedStyle(t).whiteSpace),
    ).toBe('nowrap');
    await page.screenshot({ path: join(SHOTS, 'home.png'), fullPage: true });

    await page.fill('#search', 'dns');
    await expect.poll(() => page.locator('#results .title').allTextContents()).toEqual(['acme/dns/aws', 'acme/dns/google']);
    await page.selectOption('#provider', 'google');
    await expect.poll(() => page.locator('#results .title').allTextContents()).toEqual(['acme/dns/google']);
    await page.selectOption('#provider', '');
    await page.fill('#search', '');
    await page.selectOption('#namespace', 'zz');
    await expect.poll(() => page.locator('#results .title').allTextContents()).toEqual(['zz/evil/aws']);
    expect(await page.textContent('#summary')).toBe('1 of 5 modules');
  });

  it('is usable by keyboard and fits a phone-sized screen', async () => {
    await page.goto(server.url);
    await page.waitForSelector('#results li');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('provider');
    await page.setViewportSize({ width: 375, height: 800 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await page.setViewportSize({ width: 1280, height: 900 });
  });
});

describe('module page', () => {
  it('opens a module, marks pre-releases, switches versions and shows the tables', async () => {
    await page.goto(server.url);
    await page.fill('#search', 'network');
    await page.click('#results a:has-text("acme/network/aws")');
    await expect.poll(() => page.textContent('#module-title')).toBe('acme/network/aws');
    expect(await page.locator('.breadcrumb li').allTextContents()).toEqual(['Modules', 'acme', 'network/aws']);
    expect(await page.locator('#version option').allTextContents()).toEqual(['2.1.0-rc.1 (pre-release)', '2.0.0', '1.1.0', '1.0.0']);
    expect(await page.inputValue('#version')).toBe('2.0.0');
    // Tabs with their counts; the README first, without the title and description the header shows.
    expect(await page.locator('.tabs [role="tab"]').allTextContents()).toEqual([
      'Readme',
      'Inputs 8',
      'Outputs 7',
      'Dependencies 2',
      'Resources 9',
      'Submodules 1',
      'Examples 2',
    ]);
    expect(await page.getAttribute('#tab-readme', 'aria-selected')).toBe('true');
    const description = await page.textContent('#description');
    expect(await page.textContent('#panel-readme')).not.toContain(description);
    expect(await page.locator('#panel-readme .readme > :first-child').textContent()).toBe('Usage');
    // The root README's title is the header's; the submodule's and the examples' keep theirs, inside their details.
    expect(await page.locator('.readme h1').allTextContents()).toEqual(['nat', 'Basic example', 'Complete example']);
    expect(await page.locator('details.submodule > summary').allTextContents()).toEqual(['modules/nat']);
    expect(await page.locator('details.example > summary').allTextContents()).toEqual(['examples/basic', 'examples/complete']);
    expect(await page.locator('main').evaluate((m) => [...m.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.textContent?.trim()))).toBe(false);
    await page.screenshot({ path: join(SHOTS, 'module.png'), fullPage: true });

    // A tab is a link to itself: the address changes, the page does not move.
    await page.evaluate(() => window.scrollTo(0, 200));
    const y = await page.evaluate(() => window.scrollY);
    await page.click('#tab-inputs');
    await expect.poll(() => page.url()).toMatch(/#\/acme\/network\/aws\/inputs$/);
    expect(await page.evaluate(() => window.scrollY)).toBe(y);
    expect(await page.isVisible('#panel-inputs')).toBe(true);
    expect(await page.isVisible('#panel-readme')).toBe(false);
    expect(await page.locator('#panel-inputs th').allTextContents()).toEqual(['Name', 'Type', 'Default', 'Required', 'Description']);
    // Required inputs first; object and list defaults as HCL, not JSON.
    expect(await page.locator('#panel-inputs tbody tr td:first-child').first().textContent()).toBe('name');
    const defaultOf = (input: string) =>
      page
        .locator('#panel-inputs tbody tr', { has: page.locator(`td:first-child code:text-is("${input}")`) })
        .locator('td')
        .nth(2);
    expect(await defaultOf('default_security_group_ingress').textContent()).toBe(
      '[\n  {\n    protocol  = "-1"\n    from_port = 0\n    to_port   = 0\n    self      = true\n  },\n]',
    );
    expect(await defaultOf('cidr_block').textContent()).toBe('"10.0.0.0/16"');

    // A deep link opens its tab.
    await page.goto(`${server.url}#/acme/network/aws/1.1.0/outputs`);
    await page.waitForFunction(() => (document.getElementById('version') as HTMLSelectElement | null)?.value === '1.1.0');
    expect(await page.getAttribute('#tab-outputs', 'aria-selected')).toBe('true');
    expect(await page.isVisible('#panel-outputs')).toBe(true);
    // Opening the page leaves it at its top: focus moves to the content without scrolling.
    expect(await page.evaluate(() => window.scrollY)).toBe(0);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main');

    await page.selectOption('#version', '1.0.0');
    await expect.poll(() => page.url()).toMatch(/#\/acme\/network\/aws\/1\.0\.0$/);
    const host = new URL(server.url).host;
    await expect.poll(() => page.textContent('#usage')).toBe(usageOf(host, '1.0.0'));
  });

  it('switches between the providers a module exists for', async () => {
    await openModule('acme/dns/aws');
    expect(await page.locator('.provider-tabs a').allTextContents()).toEqual(['aws', 'google']);
    await page.click('.provider-tabs a:has-text("google")');
    await expect.poll(() => page.textContent('#module-title')).toBe('acme/dns/google');
    expect(await page.getAttribute('.provider-tabs a:has-text("google")', 'aria-current')).toBe('page');
  });

  it("copies a provision snippet with the page's own host and the required inputs", async () => {
    await openModule('acme/network/aws');
    await page.click('#copy');
    await expect.poll(() => page.textContent('#copy')).toBe('Copied');
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    const host = new URL(server.url).host;
    expect(copied).toBe(usageOf(host, '2.0.0'));
    expect(copied).toBe(await page.textContent('#usage'));
  });

  it('says where the version came from, from its provenance', async () => {
    await openModule('acme/storage/aws');
    await expect.poll(() => page.textContent('#provenance')).toBe('Built from folder 1.0.0 (provenance)');
  });

  it('shows download counts from modmirror serve', async () => {
    const archive = await request(new URL('/v1/modules/acme/storage/aws/1.0.0/storage-aws-1.0.0.tar.gz', server.url));
    await archive.body.dump();
    await openModule('acme/storage/aws');
    await expect.poll(() => page.textContent('#downloads')).toBe(' · 1 downloads');
  });

  it('keeps a malicious README inert', async () => {
    await openModule('zz/evil/aws');
    const readme = page.locator('.readme');
    expect(await readme.textContent()).toContain('<script>window.__pwned = true</script>');
    expect(await readme.locator('script, img, [onerror]').count()).toBe(0);
    expect(await readme.locator('a').evaluateAll((links) => links.map((a) => a.getAttribute('href')))).toEqual([
      'https://example.com/docs',
      'http://127.0.0.2:9/pixel.png',
    ]);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: boolean }).__pwned)).toBeUndefined();
    expect(foreignRequests).toEqual([]);
  });
});
