// The browse page: a static single-page site written with the mirror
// (index.html and its scripts and style under browse/) and a compact index
// of modules. It reads the registry's own documents, so it works on a plain
// file host as under modmirror serve, and renders each README from the
// detail document as it is shown: the mirror stores no HTML of its own, and
// a build spends nothing on READMEs but writing them into the details.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { RecentVersion } from '../mirror/manifest.js';
import type { ModulesView } from '../mirror/view.js';
import type { ModuleSummary } from '../protocol/documents.js';
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
/** Each namespace's rows (one array per module, as `fields` names them): a write rewrites only its namespace's. */
export const browseNamespaceFile = (namespace: string) => `browse/modules/${namespace}.json`;
export const BROWSE_ASSET_FILES = Object.keys(ASSETS);
/** Where mirrors written before the page rendered READMEs itself kept their renderings, and the files a whole-mirror index needed: gone at the next write. */
const LEGACY_FILES = ['browse/readme', 'browse/rendered', 'browse/recent.json'];
/** How many recent versions the page shows. */
export const RECENT_COUNT = 20;
export const BROWSE_FIELDS = ['namespace', 'name', 'provider', 'version', 'description', 'published_at', 'verified', 'versions'] as const;

/** A module's row in the browse page's index. */
export function browseRow(latest: ModuleSummary, versions: number): unknown[] {
  return [latest.namespace, latest.name, latest.provider, latest.version, latest.description, latest.published_at, latest.verified, versions];
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
 * versions, and a file of rows per namespace, read by the page as it starts.
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
  for (const namespace of options.namespaces ?? all) {
    // A write of some modules keeps the rows of the others as the namespace's file has them (it was written with
    // their states, and each row is written again with its module's): so a publish reads one state, not the namespace's.
    const kept = options.namespaces ? rowsOf(staging.at(browseNamespaceFile(namespace))) : new Map<string, unknown[]>();
    const rows = view.modulesIn(namespace).flatMap((key) => {
      const row = view.rewritten(key) ? undefined : kept.get(key);
      if (row) return [row];
      const state = view.state(key);
      return state && state.versions.length > 0 && state.latest ? [browseRow(state.latest, state.versions.length)] : [];
    });
    await staging.write(browseNamespaceFile(namespace), `${JSON.stringify({ modules: rows })}\n`);
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

/** The rows of a namespace's file by module key; none when it is missing or unreadable (then each row is made from its state). */
function rowsOf(file: string): Map<string, unknown[]> {
  try {
    const { modules } = JSON.parse(readFileSync(file, 'utf8')) as { modules: unknown[][] };
    return new Map(modules.map((row) => [row.slice(0, 3).join('/'), row]));
  } catch {
    return new Map();
  }
}

export type RecentRow = readonly [namespace: string, name: string, provider: string, version: string, publishedAt: string];
