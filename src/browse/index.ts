// The browse page: a static single-page site written with the mirror
// (index.html and its scripts and style under browse/) and a compact index
// of modules. It reads the registry's own documents, so it works on a plain
// file host as under modmirror serve, and renders each README from the
// detail document as it is shown: the mirror stores no HTML of its own, and
// a build spends nothing on READMEs but writing them into the details.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { ModuleRecord } from '../mirror/manifest.js';
import type { Staging } from '../mirror/staging.js';
import { PACKAGE_ROOT } from '../version.js';

const STATIC = join(PACKAGE_ROOT, 'src/browse/static');
/** The page's own files, and markdown-it's browser build, which renders the READMEs: where each is written from. */
const ASSETS: Record<string, () => string> = {
  'index.html': () => join(STATIC, 'index.html'),
  'browse/app.js': () => join(STATIC, 'app.js'),
  'browse/readme.js': () => join(STATIC, 'readme.js'),
  'browse/style.css': () => join(STATIC, 'style.css'),
  // Found only when the page is written: serve and verify need the names alone.
  'browse/markdown-it.min.js': () => createRequire(import.meta.url).resolve('markdown-it/dist/markdown-it.min.js'),
};
export const BROWSE_INDEX_FILE = 'browse/index.json';
/**
 * Each namespace's own most recent versions, for a private registry's server:
 * a caller's newest readable versions are among those of its readable
 * namespaces, so it merges these rather than filtering the global list,
 * which would show fewer rows the more others publish.
 */
export const BROWSE_RECENT_FILE = 'browse/recent.json';
export const BROWSE_ASSET_FILES = Object.keys(ASSETS);
/** Where mirrors written before the page rendered READMEs itself kept their renderings: gone at the next write. */
const LEGACY_README_DIRS = ['browse/readme', 'browse/rendered'];
/** How many recent versions the page shows: the build keeps as many per namespace too. */
export const RECENT_COUNT = 20;

/** The page, its assets and the compact module index (one array per module). */
/** `sorted` is in address order (sortRecords). */
export async function emitBrowseSite(staging: Staging, sorted: ModuleRecord[], options: { baseUrl: string; imageHosts: string[] }): Promise<void> {
  const recent = recentVersions(sorted, RECENT_COUNT);
  const imageOrigins = options.imageHosts.map((h) => new URL(h).origin);
  const index = {
    host: options.baseUrl === '' ? '' : new URL(options.baseUrl).host,
    // The provider network mirror's URL is under it; '' when the mirror's locations are relative.
    baseUrl: options.baseUrl,
    fields: ['namespace', 'name', 'provider', 'version', 'description', 'published_at', 'verified', 'versions'],
    modules: sorted.map((r) => [
      r.latest.namespace,
      r.latest.name,
      r.latest.provider,
      r.latest.version,
      r.latest.description,
      r.latest.published_at,
      r.latest.verified,
      r.versions.length,
    ]),
    recent,
    // The README renderer shows these hosts' images (the page's Content-Security-Policy allows the same).
    imageHosts: imageOrigins,
  };
  await staging.write(BROWSE_INDEX_FILE, `${JSON.stringify(index)}\n`);
  await staging.write(BROWSE_RECENT_FILE, `${JSON.stringify({ namespaces: recentByNamespace(sorted, RECENT_COUNT) })}\n`);
  for (const [target, source] of Object.entries(ASSETS)) {
    let text = readFileSync(source(), 'utf8');
    if (target === 'index.html') text = text.replace('IMG_SOURCES', imageOrigins.join(' '));
    // markdown-it's source map is not shipped: no browser should ask for it.
    if (target.endsWith('.js')) text = text.replace(/^\/\/# sourceMappingURL=.*$/m, '');
    await staging.write(target, text);
  }
  for (const dir of LEGACY_README_DIRS) await staging.remove(dir);
}

export type RecentRow = readonly [namespace: string, name: string, provider: string, version: string, publishedAt: string];

/** `recentVersions` of each namespace; `sorted` is in address order, so a namespace's records are together. */
function recentByNamespace(sorted: ModuleRecord[], count: number): Record<string, RecentRow[]> {
  const byNamespace: Record<string, RecentRow[]> = {};
  let start = 0;
  for (let i = 1; i <= sorted.length; i++) {
    const namespace = sorted[start]?.address.namespace;
    if (i < sorted.length && sorted[i]!.address.namespace === namespace) continue;
    if (namespace !== undefined) byNamespace[namespace] = recentVersions(sorted.slice(start, i), count);
    start = i;
  }
  return byNamespace;
}

/** The `count` newest of rows already each newest first (ties by address), as recentVersions orders them. */
export function newestRows(lists: RecentRow[][], count: number): RecentRow[] {
  return lists
    .flat()
    .sort((a, b) => (a[4] === b[4] ? (a.join('/') < b.join('/') ? -1 : 1) : a[4] > b[4] ? -1 : 1))
    .slice(0, count);
}

/**
 * The `count` most recently published versions, newest first (ties by
 * address): kept as the versions go by rather than sorting all of them.
 */
function recentVersions(records: ModuleRecord[], count: number): RecentRow[] {
  const before = (a: RecentRow, b: RecentRow) => (a[4] === b[4] ? a.join('/') < b.join('/') : a[4] > b[4]);
  const top: RecentRow[] = [];
  for (const r of records) {
    for (const v of r.versions) {
      const row = [r.address.namespace, r.address.name, r.address.provider, v.version, v.published_at] as const;
      if (top.length === count && !before(row, top[count - 1]!)) continue;
      let at = top.length;
      while (at > 0 && before(row, top[at - 1]!)) at--;
      top.splice(at, 0, row);
      if (top.length > count) top.pop();
    }
  }
  return top;
}
