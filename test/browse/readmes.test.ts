/// <reference lib="dom" />
// The browse page's READMEs in a real headless Chromium: the mirror stores no
// HTML of its own, and the page renders each README of the version it shows
// (root, submodules, examples) from the registry's detail document.

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './chromium.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RunningServer } from '../../src/serve/index.js';
import { runCli, serveMirror, tempDir, writeFiles } from '../helpers.js';

let server: RunningServer;
let browser: Browser;
let page: Page;
let dist: string;

beforeAll(async () => {
  const dir = tempDir('mm-readmes-');
  writeFiles(dir, {
    'mirror.config.yaml': 'sources:\n  - folder: mods\n',
    'mods/acme/a/aws/1.0.0/main.tf': 'variable "x" {}\n',
    'mods/acme/a/aws/1.0.0/README.md': '# First\n\nThe *first* release.\n\nMore about the *first* one.\n',
    'mods/acme/a/aws/1.1.0/main.tf': 'variable "x" {}\n',
    'mods/acme/a/aws/1.1.0/README.md': '# Second\n\n| name | value |\n|---|---|\n| x | 1 |\n',
    'mods/acme/a/aws/1.1.0/modules/part/main.tf': 'variable "y" {}\n',
    'mods/acme/a/aws/1.1.0/modules/part/README.md': '# Part\n\nSee [the docs](https://example.com/part).\n',
    'mods/acme/a/aws/1.1.0/examples/basic/main.tf': 'module "a" {\n  source = "../.."\n}\n',
    'mods/acme/a/aws/1.1.0/examples/basic/README.md': '# Basic\n\nRun `terraform apply`.\n',
    // An example without a README shows none.
    'mods/acme/a/aws/1.1.0/examples/bare/main.tf': 'module "a" {\n  source = "../.."\n}\n',
  });
  const built = await runCli(['build', '--clean'], dir);
  expect(built.code, built.stderr).toBe(0);
  dist = join(dir, 'dist');
  server = await serveMirror(dir);
  browser = await launchChromium();
  page = await browser.newPage();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function openVersion(version: string): Promise<void> {
  await page.goto(`${server.url}#/acme/a/aws/${version}`);
  await page.waitForFunction((v) => (document.getElementById('version') as HTMLSelectElement | null)?.value === v, version);
}

const readmeOf = (section: string) => page.locator(`${section} > .readme`).first().innerHTML();

it('stores no README HTML: the page carries one renderer', () => {
  expect(readdirSync(join(dist, 'browse')).sort()).toEqual([
    'app.js',
    'index.json',
    'markdown-it.min.js',
    'module-page.js',
    'module.js',
    'modules',
    'readme.js',
    'style.css',
  ]);
  // The rows of each namespace's modules in pages, and nothing else.
  expect(readdirSync(join(dist, 'browse/modules'))).toEqual(['acme']);
  expect(readdirSync(join(dist, 'browse/modules/acme')).sort()).toEqual(['a.aws.json', 'index.json']);
});

it("renders the shown version's READMEs, each in its own section", async () => {
  await openVersion('1.1.0');
  // The title is the page's header: the README goes on from there.
  expect(await readmeOf('#panel-readme')).not.toContain('<h1>Second</h1>');
  expect(await readmeOf('#panel-readme')).toContain('<table>');
  expect(await readmeOf('details.submodule')).toContain('<a href="https://example.com/part" rel="noopener noreferrer nofollow">the docs</a>');
  expect(await readmeOf('details.example:has(summary:text-is("examples/basic"))')).toContain('<code>terraform apply</code>');
  expect(await page.locator('details.example:has(summary:text-is("examples/bare")) .readme').count()).toBe(0);

  await page.selectOption('#version', '1.0.0');
  await page.waitForFunction(() => document.querySelector('#panel-readme > .readme')?.textContent?.startsWith('More about'));
  // Its first paragraph is the description, shown in the header.
  expect(await readmeOf('#panel-readme')).toBe('<p>More about the <em>first</em> one.</p>\n');
  expect(await page.textContent('#description')).toBe('The *first* release.');
  expect(await page.locator('details.submodule').count()).toBe(0);
});
