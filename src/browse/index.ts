// The browse page: a static single-page site written with the mirror
// (index.html and its scripts and style under browse/) and a compact index
// of modules. It reads the registry's own documents, so it works on a plain
// file host as under modmirror serve, and renders each README from the
// detail document as it is shown: the mirror stores no HTML of its own, and
// a build spends nothing on READMEs but writing them into the details.

import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { RecentVersion } from '../mirror/manifest.js';
import type { ModulesView } from '../mirror/view.js';
import type { ModuleSummary } from '../protocol/documents.js';
import type { Staging } from '../mirror/staging.js';
import { PACKAGE_ROOT } from '../version.js';
import { BROWSE_MODULES_DIR, browsePageFile, browsePageListFile, legacyBrowseNamespaceFile, parsePageList, planPages } from './pages.js';

const STATIC = join(PACKAGE_ROOT, 'src/browse/static');
/** The page's own files, and markdown-it's browser build, which renders the READMEs: where each is written from. */
const ASSETS: Record<string, () => string> = {
  'index.html': () => join(STATIC, 'index.html'),
  'browse/app.js': () => join(STATIC, 'app.js'),
  'browse/readme.js': () => join(STATIC, 'readme.js'),
  'browse/module.js': () => join(STATIC, 'module.js'),
  'browse/module-page.js': () => join(STATIC, 'module-page.js'),
  'browse/style.css': () => join(STATIC, 'style.css'),
  // Found only when the page is written: serve and verify need the names alone.
  'browse/markdown-it.min.js': () => createRequire(import.meta.url).resolve('markdown-it/dist/markdown-it.min.js'),
};
export const BROWSE_INDEX_FILE = 'browse/index.json';
export const BROWSE_ASSET_FILES = Object.keys(ASSETS);
/** Where mirrors written before the page rendered READMEs itself kept their renderings, and the files a whole-mirror index needed: gone at the next write. */
const LEGACY_FILES = ['browse/readme', 'browse/rendered', 'browse/recent.json'];
/** How many recent versions the page shows. */
export const RECENT_COUNT = 20;
export const BROWSE_FIELDS = ['namespace', 'name', 'provider', 'version', 'description', 'published_at', 'verified', 'versions', 'calls'] as const;

/**
 * A module's row in the browse page's index; `calls`: the registry modules its
 * latest version calls, from which the page lists a module's callers. A module
 * that calls none has no ninth field, as every row had before modmirror kept
 * the calls: a mirror written then still agrees with its states.
 */
export function browseRow(latest: ModuleSummary, versions: number, calls: string[] = []): unknown[] {
  const row = [latest.namespace, latest.name, latest.provider, latest.version, latest.description, latest.published_at, latest.verified, versions];
  return calls.length > 0 ? [...row, calls] : row;
}

export interface BrowseSiteOptions {
  baseUrl: string;
  imageHosts: string[];
  /** The namespaces whose files to write (a write of some modules); default all. */
  namespaces?: string[];
  /** The mirror's most recent versions, newest first (the manifest keeps them). */
  recent: RecentVersion[];
}

/**
 * The page, its assets, and its index: the namespaces, the most recent
 * versions, and each namespace's rows in pages (pages.ts), read by the page
 * as it starts.
 */
export async function emitBrowseSite(staging: Staging, view: ModulesView, options: BrowseSiteOptions): Promise<void> {
  const imageOrigins = options.imageHosts.map((h) => new URL(h).origin);
  const all = view.namespaces();
  const index = {
    host: options.baseUrl === '' ? '' : new URL(options.baseUrl).host,
    // The provider network mirror's URL is under it; '' when the mirror's locations are relative.
    baseUrl: options.baseUrl,
    fields: BROWSE_FIELDS,
    namespaces: all,
    recent: options.recent.map((r) => [...r.module.split('/'), r.version, r.published_at]),
    // The README renderer shows these hosts' images (the page's Content-Security-Policy allows the same).
    imageHosts: imageOrigins,
  };
  await staging.write(BROWSE_INDEX_FILE, `${JSON.stringify(index)}\n`);
  if (options.namespaces) {
    // A namespace with no folder of pages yet (a mirror an older modmirror wrote) is written whole, so the page finds every one.
    const paged = new Set(folderNames(staging.at(BROWSE_MODULES_DIR)));
    const written = [...new Set([...options.namespaces, ...all.filter((namespace) => !paged.has(namespace))])];
    for (const namespace of written) await emitNamespacePages(staging, view, namespace, true);
  } else {
    for (const namespace of all) await emitNamespacePages(staging, view, namespace, false);
  }
  for (const [target, source] of Object.entries(ASSETS)) {
    let text = readFileSync(source(), 'utf8');
    if (target === 'index.html') text = text.replace('IMG_SOURCES', imageOrigins.join(' '));
    // markdown-it's source map is not shipped: no browser should ask for it.
    if (target.endsWith('.js')) text = text.replace(/^\/\/# sourceMappingURL=.*$/m, '');
    await staging.write(target, text);
  }
  for (const dir of LEGACY_FILES) await staging.remove(dir);
}

/**
 * A namespace's pages and their list. A write of some modules (`partial`)
 * writes only the pages that change, and keeps the rows of the modules it
 * did not rewrite as the pages they were on have them (each was written with
 * its module's state): so a publish reads its page, not the namespace's states.
 */
async function emitNamespacePages(staging: Staging, view: ModulesView, namespace: string, partial: boolean): Promise<void> {
  const keys = view.modulesIn(namespace);
  const old = partial ? readPageList(staging.at(browsePageListFile(namespace))) : undefined;
  const plan = planPages(namespace, keys, old, partial ? (key) => view.rewritten(key) : () => true);
  // Rows as the pages a write replaces had them; with no list, as the one file an older modmirror kept.
  const rowsIn = new Map<string, Map<string, unknown[]>>();
  const legacy = partial && old === undefined ? rowsOf(staging.at(legacyBrowseNamespaceFile(namespace))) : new Map<string, unknown[]>();
  const kept = (key: string, from: string[]) => {
    for (const page of from) {
      if (!rowsIn.has(page)) rowsIn.set(page, rowsOf(staging.at(browsePageFile(namespace, page))));
      const row = rowsIn.get(page)!.get(key);
      if (row) return row;
    }
    return legacy.get(key);
  };
  for (const page of plan.pages) {
    if (!page.write) continue;
    const rows = page.keys.flatMap((key) => {
      const row = partial && !view.rewritten(key) ? kept(key, page.from) : undefined;
      if (row) return [row];
      const listing = view.listing(key);
      return listing && listing.versions > 0 && listing.latest ? [browseRow(listing.latest, listing.versions, listing.calls)] : [];
    });
    await staging.write(browsePageFile(namespace, page.name), `${JSON.stringify({ modules: rows })}\n`);
  }
  const names = new Set(plan.pages.map((p) => p.name));
  // A whole write also removes what no list names (a page a killed writer left, a file put there by hand).
  const stale = partial
    ? plan.removed
    : fileNames(staging.at(`${BROWSE_MODULES_DIR}/${namespace}`))
        .filter((f) => f.endsWith('.json') && f !== 'index.json')
        .map((f) => f.slice(0, -'.json'.length))
        .filter((page) => !names.has(page));
  for (const page of stale) await staging.remove(browsePageFile(namespace, page));
  await staging.write(browsePageListFile(namespace), `${JSON.stringify({ pages: [...names] })}\n`);
  await staging.remove(legacyBrowseNamespaceFile(namespace));
}

/** The pages a namespace's list names; undefined when it is missing or unreadable (then every page is written). */
function readPageList(file: string): string[] | undefined {
  try {
    return parsePageList(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

/** The rows of a page (or an older modmirror's namespace file) by module key; none when it is missing or unreadable (then each row is made from its state). */
function rowsOf(file: string): Map<string, unknown[]> {
  try {
    const { modules } = JSON.parse(readFileSync(file, 'utf8')) as { modules: unknown[][] };
    return new Map(modules.map((row) => [row.slice(0, 3).join('/'), row]));
  } catch {
    return new Map();
  }
}

function folderNames(dir: string): string[] {
  return entries(dir)
    .filter((e) => e.isDirectory())
    .map((e) => e.name);
}

function fileNames(dir: string): string[] {
  return entries(dir)
    .filter((e) => e.isFile())
    .map((e) => e.name);
}

function entries(dir: string) {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

export type RecentRow = readonly [namespace: string, name: string, provider: string, version: string, publishedAt: string];
