// The browse page: a static single-page site written with the mirror
// (index.html, browse/app.js, browse/style.css), a compact index of modules,
// and each version's READMEs rendered to safe HTML. It reads the registry's
// own documents, so it works on a plain file host as under modmirror serve.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ModuleRecord } from '../manifest.js';
import { addressKey } from '../protocol/paths.js';
import type { Staging } from '../emit/staging.js';
import type { BuiltVersion } from '../types.js';
import { createReadmeRenderer, type ReadmeOptions } from './markdown.js';

// The same path from src/browse/ (tests) and lib/browse/ (the CLI), so both
// read the one copy; package.json `files` ships this folder for that reason
// (test/package.test.ts installs the packed tarball and builds with it).
const STATIC = new URL('../../src/browse/static/', import.meta.url);
const ASSETS: [string, string][] = [
  ['index.html', 'index.html'],
  ['app.js', 'browse/app.js'],
  ['style.css', 'browse/style.css'],
];
export const BROWSE_INDEX_FILE = 'browse/index.json';
const RECENT = 20;

export function readmeFile(key: string, version: string): string {
  return `browse/readme/${key}/${version}.json`;
}

/** Markdown text -> its HTML; most versions of a module repeat an earlier version's READMEs. */
export type RenderedReadmes = Map<string, string>;

/** Each version's READMEs (root, submodules, examples) as sanitized HTML, by module path. */
export async function emitReadmes(staging: Staging, versions: BuiltVersion[], options: ReadmeOptions & { rendered?: RenderedReadmes }): Promise<void> {
  const rendered = options.rendered ?? new Map<string, string>();
  let render: ((markdown: string) => string) | undefined;
  for (const v of versions) {
    const html: Record<string, string> = {};
    for (const c of contentsOf(v)) {
      let h = c.readme === '' ? '' : rendered.get(c.readme);
      if (h === undefined) {
        render ??= await createReadmeRenderer(options);
        rendered.set(c.readme, (h = render(c.readme)));
      }
      html[c.path] = h;
    }
    await staging.write(readmeFile(addressKey(v.source.address), v.source.version), `${JSON.stringify(html)}\n`);
  }
}

/** What a built mirror already rendered for `version` (publish reuses it instead of rendering again). */
export function readRenderedReadmes(dir: string, version: BuiltVersion): RenderedReadmes {
  const rendered: RenderedReadmes = new Map();
  let html: Record<string, string>;
  try {
    html = JSON.parse(readFileSync(join(dir, readmeFile(addressKey(version.source.address), version.source.version)), 'utf8')) as Record<string, string>;
  } catch {
    return rendered; // not there (a mirror from before the browse page): render afresh
  }
  for (const c of contentsOf(version)) if (c.readme !== '' && typeof html[c.path] === 'string') rendered.set(c.readme, html[c.path]!);
  return rendered;
}

function contentsOf(v: BuiltVersion) {
  return [v.content.root, ...v.content.submodules, ...v.content.examples];
}

/** The page, its assets and the compact module index (one array per module). */
/** `sorted` is in address order (sortRecords). */
export async function emitBrowseSite(staging: Staging, sorted: ModuleRecord[], options: { baseUrl: string; imageHosts: string[] }): Promise<void> {
  const recent = recentVersions(sorted, RECENT);
  const index = {
    host: options.baseUrl === '' ? '' : new URL(options.baseUrl).host,
    // The provider network mirror's URL is under it; '' when the mirror's locations are relative.
    baseUrl: options.baseUrl,
    fields: ['namespace', 'name', 'provider', 'version', 'description', 'published_at', 'verified', 'versions'],
    modules: sorted.map((r) => [r.latest.namespace, r.latest.name, r.latest.provider, r.latest.version, r.latest.description, r.latest.published_at, r.latest.verified, r.versions.length]),
    recent,
  };
  await staging.write(BROWSE_INDEX_FILE, `${JSON.stringify(index)}\n`);
  const imageSources = options.imageHosts.map((h) => new URL(h).origin).join(' ');
  for (const [source, target] of ASSETS) {
    let text = readFileSync(new URL(source, STATIC), 'utf8');
    if (source === 'index.html') text = text.replace('IMG_SOURCES', imageSources);
    await staging.write(target, text);
  }
}

type RecentRow = readonly [namespace: string, name: string, provider: string, version: string, publishedAt: string];

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
