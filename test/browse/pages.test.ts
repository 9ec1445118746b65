/// <reference lib="dom" />
// The browse page's rows of a namespace in pages (docs/browse-page.md, "The
// rows, in pages"): where a page ends is the modules' own hashes' doing, a
// publish rewrites only the page of its module (and the list when a page
// splits), a mirror that kept one file per namespace is upgraded by its next
// write, and the page in Chromium loads every page.

import { createHash } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/serve/index.js';
import { runCli, serveMirror, tempDir, treeOf, writeFiles } from '../helpers.js';
import { launchChromium } from './chromium.js';

const MODULES = 150;
const names = Array.from({ length: MODULES }, (_, i) => `m${String(i).padStart(3, '0')}`);
/** As docs/browse-page.md says: a module ends its page when its key's SHA-256 starts with a multiple of 32. */
const endsPage = (key: string) => createHash('sha256').update(key).digest().readUInt32BE(0) % 32 === 0;
const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8'));
const moduleFiles = (n: number) => ({ 'main.tf': `variable "n" {\n  default = ${n}\n}\n`, 'README.md': `# Module ${n}\n\nManages storage number ${n}.\n` });

let dir: string;
let dist: string;
const folder = (ns: string, mirror = dist) => join(mirror, 'browse/modules', ns);
const pagesOf = (ns: string, mirror = dist): string[] => readJson(join(folder(ns, mirror), 'index.json')).pages;
const rowsOf = (ns: string, mirror = dist): string[][] => pagesOf(ns, mirror).flatMap((page) => readJson(join(folder(ns, mirror), `${page}.json`)).modules);
const inodes = (ns: string) => Object.fromEntries(readdirSync(folder(ns)).map((f) => [f, statSync(join(folder(ns), f)).ino]));
const browseChanged = (stdout: string): string[] => (JSON.parse(stdout).changed as string[]).filter((f) => f.startsWith('browse/modules/')).sort();

async function publish(path: string): Promise<string> {
  const result = await runCli(['publish', '--source', path, '--json'], dir);
  expect(result.code, result.stderr).toBe(0);
  return result.stdout;
}

beforeAll(async () => {
  dir = tempDir('mm-browse-pages-');
  const files: Record<string, string> = { 'mirror.config.yaml': 'sources:\n  - folder: mods\n', 'mods/beta/one/aws/1.0.0/main.tf': 'variable "x" {}\n' };
  names.forEach((name, i) => {
    for (const [file, text] of Object.entries(moduleFiles(i))) files[`mods/acme/${name}/aws/1.0.0/${file}`] = text;
  });
  writeFiles(dir, files);
  const built = await runCli(['build', '--json'], dir);
  expect(built.code, built.stderr).toBe(0);
  dist = join(dir, 'dist');
});

describe("a namespace's rows in pages", () => {
  it('ends a page after each module whose hash says so, names it by that module, and verify checks every row', async () => {
    const keys = names.map((name) => `acme/${name}/aws`);
    const ends = keys.filter(endsPage);
    const expected = [...ends.map((key) => key.split('/')[1]!), ...(endsPage(keys.at(-1)!) ? [] : ['m149'])].map((name) => `${name}.aws`);
    expect(ends.length).toBeGreaterThan(1);
    expect(pagesOf('acme')).toEqual(expected);
    expect(readdirSync(folder('acme')).sort()).toEqual([...expected.map((page) => `${page}.json`), 'index.json'].sort());
    expect(rowsOf('acme').map((row) => row.slice(0, 4).join('/'))).toEqual(keys.map((key) => `${key}/1.0.0`));
    expect((await runCli(['verify'], dir)).code).toBe(0);
  });

  it("has a publish rewrite its module's page, and the list only when a page splits: the other pages keep their files", async () => {
    const before = inodes('acme');
    const pages = pagesOf('acme');
    const pageOf = (name: string) => pages.find((page) => page.split('.')[0]! >= name)!;
    writeFiles(join(dir, 'mods/acme/m010/aws/1.1.0'), moduleFiles(1010));
    expect(browseChanged(await publish('mods/acme/m010/aws/1.1.0'))).toEqual([`browse/modules/acme/${pageOf('m010')}.json`]);
    const after = inodes('acme');
    for (const [file, ino] of Object.entries(before)) if (file !== `${pageOf('m010')}.json`) expect(after[file], file).toBe(ino);

    // A new module that ends a page, inside one that did not end with it: that page splits in two.
    const splitter = Array.from({ length: 10_000 }, (_, i) => `m07x${i}`).find((name) => endsPage(`acme/${name}/aws`))!;
    writeFiles(join(dir, `mods/acme/${splitter}/aws/1.0.0`), moduleFiles(2000));
    expect(browseChanged(await publish(`mods/acme/${splitter}/aws/1.0.0`))).toEqual(
      [`browse/modules/acme/${pageOf(splitter)}.json`, `browse/modules/acme/${splitter}.aws.json`, 'browse/modules/acme/index.json'].sort(),
    );
    expect(pagesOf('acme')).toEqual([...pages, `${splitter}.aws`].sort());
    expect(rowsOf('acme').find((row) => row[1] === 'm010')![3]).toBe('1.1.0');
    expect((await runCli(['verify'], dir)).code).toBe(0);

    // The same pages as a build of the same modules from nothing.
    const clean = await runCli(['build', '--clean', '--json', '--mirror', 'clean'], dir);
    expect(clean.code, clean.stderr).toBe(0);
    expect(treeOf(join(dist, 'browse/modules'))).toEqual(treeOf(join(dir, 'clean/browse/modules')));
  });

  it('upgrades a mirror that kept one file of rows per namespace at its next write, and verify accepts either', async () => {
    const old = join(dir, 'old');
    cpSync(dist, old, { recursive: true, dereference: true });
    for (const ns of ['acme', 'beta']) {
      writeFileSync(join(old, 'browse/modules', `${ns}.json`), `${JSON.stringify({ modules: rowsOf(ns, old) })}\n`);
      rmSync(folder(ns, old), { recursive: true });
    }
    expect((await runCli(['verify', '--mirror', 'old'], dir)).code).toBe(0);

    writeFiles(join(dir, 'mods/beta/one/aws/1.1.0'), { 'main.tf': 'variable "y" {}\n' });
    const published = await runCli(['publish', '--source', 'mods/beta/one/aws/1.1.0', '--mirror', 'old', '--json'], dir);
    expect(published.code, published.stderr).toBe(0);
    // Every namespace, not only the one written: the page reads only pages.
    expect(readdirSync(join(old, 'browse/modules')).sort()).toEqual(['acme', 'beta']);
    expect(rowsOf('acme', old)).toEqual(rowsOf('acme'));
    expect(rowsOf('beta', old).map((row) => row[3])).toEqual(['1.1.0']);
    expect((await runCli(['verify', '--mirror', 'old'], dir)).code).toBe(0);
    expect(existsSync(join(old, 'browse/modules/acme.json'))).toBe(false);
  });
});

describe('the browse page over pages', () => {
  let server: RunningServer;
  let browser: Browser;

  beforeAll(async () => {
    server = await serveMirror(dir);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('loads every page of every namespace, and opens a module without waiting for them', async () => {
    const page = await browser.newPage();
    const requested: string[] = [];
    page.on('request', (r) => requested.push(new URL(r.url()).pathname));
    await page.goto(server.url);
    const total = rowsOf('acme').length + rowsOf('beta').length;
    await expect.poll(() => page.textContent('#count')).toBe(`${total} modules`);
    for (const p of pagesOf('acme')) expect(requested).toContain(`/browse/modules/acme/${p}.json`);
    await page.fill('#search', 'm149');
    await expect.poll(() => page.locator('#results .title').allTextContents()).toEqual(['acme/m149/aws']);

    const direct = await browser.newPage();
    // A page that never answers: the module's view must not wait for it.
    await direct.route('**/browse/modules/acme/index.json', () => undefined);
    await direct.goto(`${server.url}#/acme/m010/aws`);
    await direct.waitForFunction(() => document.getElementById('module-title')?.textContent?.startsWith('acme/m010/aws'));
    await page.close();
    await direct.close();
  });
});
