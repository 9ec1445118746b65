/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The browse page's providers in a real headless Chromium (Debian's package,
// driven by playwright-core): the home view lists the mirrored providers, a
// provider's page shows its versions, platforms and the required_providers
// and provider_installation snippets, a module's required provider links to
// it when the mirror holds it; and opening a page moves focus to the content
// without drawing a box around it.

import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/serve/index.js';
import { ROOT, runCli, serveMirror, tempDir, writeFiles } from '../helpers.js';
import { testKey, signRelease, type TestKey } from '../providers/keys.js';
import { writeReleaseFolder } from '../providers/zips.js';

let server: RunningServer;
let browser: Browser;
let page: Page;
let acme: TestKey;

beforeAll(async () => {
  const dir = tempDir('mm-browse-providers-');
  // The sample modules: acme/network/aws requires hashicorp/aws, which this mirror carries; acme/dns/google's google it does not.
  writeFiles(dir, {
    'mirror.config.yaml': `sources:\n  - folder: ${JSON.stringify(join(ROOT, 'modules'))}\nproviders:\n  - folder: aws\n    namespace: hashicorp\n  - folder: widgets\n    namespace: acme\n    registry: true\n    hostname: registry.example.com\n    keys: [${join(dir, 'acme.pub.asc')}]\n`,
  });
  // An in-house provider, signed by its publisher's key.
  acme = await testKey(dir, 'Acme');
  await writeReleaseFolder(join(dir, 'widgets'), 'widgets', '1.0.0', ['linux_amd64']);
  await signRelease(join(dir, 'widgets'), 'widgets', '1.0.0', acme);
  await writeReleaseFolder(join(dir, 'aws'), 'aws', '5.31.0', ['linux_amd64', 'darwin_arm64']);
  await writeReleaseFolder(join(dir, 'aws'), 'aws', '5.30.0', ['linux_amd64']);
  const built = await runCli(['build', '--json'], dir);
  expect(built.code, built.stderr).toBe(0);
  server = await serveMirror(dir);
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** Whether the element in focus draws a visible outline. */
const focusBox = () =>
  page.evaluate(() => {
    const active = document.activeElement as HTMLElement;
    const style = getComputedStyle(active);
    return { id: active.id, outline: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0 };
  });

describe('providers on the browse page', () => {
  it('lists the mirrored providers on the home view', async () => {
    await page.goto(server.url);
    await expect.poll(() => page.textContent('#count')).toBe('4 modules · 2 providers');
    expect(await page.locator('#providers li').allTextContents()).toEqual([
      'registry.example.com/acme/widgets 1.0.0 · in-house',
      'registry.terraform.io/hashicorp/aws 5.31.0',
    ]);
  });

  it('shows an in-house provider with its required_providers snippet and the key ID it is signed with', async () => {
    await page.goto(`${server.url}#/-/providers/registry.example.com/acme/widgets`);
    await expect.poll(() => page.textContent('#provider-title')).toBe('registry.example.com/acme/widgets');
    expect(await page.textContent('#provider-origin')).toContain('In-house provider of this registry');
    expect(await page.textContent('#required-providers')).toBe(
      'terraform {\n  required_providers {\n    widgets = {\n      source  = "registry.example.com/acme/widgets"\n      version = "1.0.0"\n    }\n  }\n}\n',
    );
    expect(await page.textContent('#signing-keys')).toBe(`Signed with key ID ${acme.keyId}`);
    const rows = await page.locator('table tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    expect(rows).toEqual([['1.0.0', 'linux_amd64', acme.keyId]]);
  });

  it("shows a provider's versions, platforms and the snippets to use it", async () => {
    await page.goto(server.url);
    await page.click('#providers a:has-text("hashicorp/aws")');
    await expect.poll(() => page.textContent('#provider-title')).toBe('registry.terraform.io/hashicorp/aws');
    const rows = await page.locator('table tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    expect(rows).toEqual([
      ['5.31.0', 'darwin_arm64, linux_amd64'],
      ['5.30.0', 'linux_amd64'],
    ]);
    expect(await page.textContent('#required-providers')).toBe(
      'terraform {\n  required_providers {\n    aws = {\n      source  = "registry.terraform.io/hashicorp/aws"\n      version = "5.31.0"\n    }\n  }\n}\n',
    );
    expect(await page.textContent('#provider-installation')).toBe(
      `provider_installation {\n  network_mirror {\n    url     = "${server.url}providers/"\n    include = ["registry.terraform.io/hashicorp/aws"]\n  }\n  direct {\n    exclude = ["registry.terraform.io/hashicorp/aws"]\n  }\n}\n`,
    );
  });

  it("links a module's required provider to the mirrored one, and leaves one the mirror lacks as text", async () => {
    await page.goto(`${server.url}#/acme/network/aws/2.0.0`);
    await page.waitForSelector('.provider-link', { state: 'attached' });
    expect(await page.locator('.provider-link').first().getAttribute('href')).toBe('#/-/providers/registry.terraform.io/hashicorp/aws');
    // modules/nat declares nothing: its aws_* resources imply hashicorp/aws, linked the same way.
    const nat = page.locator('details.submodule', { hasText: 'modules/nat' });
    expect(await nat.locator('.provider-link').evaluateAll((links) => links.map((a) => [a.textContent, a.getAttribute('href')]))).toEqual([
      ['hashicorp/aws', '#/-/providers/registry.terraform.io/hashicorp/aws'],
    ]);
    await page.goto(`${server.url}#/acme/dns/google`);
    await expect.poll(() => page.textContent('#module-title')).toBe('acme/dns/google');
    expect(await page.locator('.provider-link').count()).toBe(0);
  });
});

describe('focus after opening a page', () => {
  it('moves focus to the content without a box, by mouse and by keyboard', async () => {
    await page.goto(server.url);
    await page.waitForSelector('#results li');
    await page.click('#results a:has-text("acme/network/aws")');
    await expect.poll(() => page.textContent('#module-title')).toBe('acme/network/aws');
    expect(await focusBox()).toEqual({ id: 'main', outline: false });

    await page.goto(server.url);
    await page.waitForSelector('#results li');
    await page.focus('#results a');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#module-title');
    expect(await focusBox()).toEqual({ id: 'main', outline: false });
    // The focus move still serves keyboard users: the next Tab goes into the new content, and links there show their ring.
    await page.keyboard.press('Tab');
    const next = await focusBox();
    expect(next.id).not.toBe('main');
    expect(await page.evaluate(() => document.getElementById('main')!.contains(document.activeElement))).toBe(true);
    expect(next.outline).toBe(true);
  });
});
