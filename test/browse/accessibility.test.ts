/// <reference lib="dom" />
// The browse page checked as people use it: axe-core, run in the suite's
// Chromium, finds no serious or critical violation on the home page and a
// module page (each tab shown in turn), and at 375, 1024 and 1440 px wide
// neither page scrolls sideways; screenshots of each go to test-results/browse/.

import { createRequire } from 'node:module';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/serve/index.js';
import { launchChromium } from './chromium.js';
import { ROOT, runCli, serveMirror, tempDir, writeFiles } from '../helpers.js';

const SHOTS = join(ROOT, 'test-results', 'browse');
const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const WIDTHS = [375, 1024, 1440];

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

let server: RunningServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  const dir = tempDir('mm-browse-a11y-');
  writeFiles(dir, {
    'mirror.config.yaml': `sources:\n  - folder: ${JSON.stringify(join(ROOT, 'modules'))}\n  - folder: extra\n`,
    // Two modules that call the samples: one from its root (by another host), one from a submodule.
    'extra/zz/app/aws/1.0.0/main.tf': 'module "net" {\n  source  = "registry.example.com/acme/network/aws"\n  version = "2.0.0"\n}\n',
    'extra/zz/edge/aws/1.0.0/main.tf': 'module "dns" {\n  source = "./modules/dns"\n}\n',
    'extra/zz/edge/aws/1.0.0/modules/dns/main.tf': 'module "zone" {\n  source = "Acme/Network/aws//modules/nat"\n}\n',
  });
  const built = await runCli(['build', '--json'], dir);
  expect(built.code, built.stderr).toBe(0);
  server = await serveMirror(dir);
  browser = await launchChromium();
  // axe is put into the page as a script of its own, which the page's Content-Security-Policy would refuse.
  const context = await browser.newContext({ bypassCSP: true, viewport: { width: 1440, height: 900 } });
  page = await context.newPage();
  mkdirSync(SHOTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** axe-core's serious and critical violations on the page as it is, one line each. */
async function violations(): Promise<string[]> {
  await page.addScriptTag({ path: AXE });
  const found = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document): Promise<{ violations: Violation[] }> } }).axe;
    return (await axe.run(document)).violations;
  });
  return found
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')})`);
}

/** Screenshots of the page at each width, and the widths at which it scrolls sideways. */
async function overflowing(name: string): Promise<number[]> {
  const wide: number[] = [];
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: join(SHOTS, `${name}-${width}.png`), fullPage: true });
    if (await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth)) wide.push(width);
  }
  await page.setViewportSize({ width: 1440, height: 900 });
  return wide;
}

describe('used by', () => {
  it("lists the modules of the mirror whose latest version calls the module, from the browse page's rows", async () => {
    await page.goto(`${server.url}#/acme/network/aws`);
    await expect.poll(() => page.locator('#used-by a').allTextContents()).toEqual(['zz/app/aws', 'zz/edge/aws']);
    await page.click('#used-by a:has-text("zz/app/aws")');
    await expect.poll(() => page.textContent('#module-title')).toBe('zz/app/aws');
    await expect.poll(() => page.textContent('#used-by')).toBe('No module in this mirror calls it.');
  });
});

describe('browse page accessibility and widths', () => {
  it('home page: no serious or critical violation, no sideways scrolling', async () => {
    await page.goto(server.url);
    await page.waitForSelector('#results li');
    expect(await violations()).toEqual([]);
    expect(await overflowing('home')).toEqual([]);
  });

  it('module page, every tab: no serious or critical violation, no sideways scrolling', async () => {
    await page.goto(`${server.url}#/acme/network/aws`);
    await page.waitForSelector('#used-by li');
    const tabs = await page.locator('[role="tab"]').evaluateAll((links) => links.map((a) => a.id));
    expect(tabs.length).toBeGreaterThan(4);
    for (const tab of tabs) {
      await page.click(`#${tab}`);
      await page.locator('details').evaluateAll((all) => all.forEach((d) => ((d as HTMLDetailsElement).open = true)));
      expect({ tab, violations: await violations() }).toEqual({ tab, violations: [] });
      expect({ tab, overflowing: await overflowing(`module-${tab.replace('tab-', '')}`) }).toEqual({ tab, overflowing: [] });
    }
  });
});
