// The browse page: a static single-page site written with the mirror
// (index.html, browse/app.js, browse/style.css), a compact index of modules,
// and each version's READMEs rendered to safe HTML, each distinct rendering
// stored once. It reads the registry's
// own documents, so it works on a plain file host as under modmirror serve.

import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
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
const gzipAsync = promisify(gzip);
const MAX_PENDING_RENDERINGS = 4;

export function readmeFile(key: string, version: string): string {
  return `browse/readme/${key}/${version}.json`;
}

/**
 * Where a rendering is stored: named by the sha256 of its HTML, so each
 * distinct rendering is one file however many versions show it, and
 * gzipped, since README HTML compresses about ninefold and the page
 * undoes it (a host that already decoded it on the wire is handled too).
 */
export function renderedFile(digest: string): string {
  return `${RENDERED_DIR}/${digest}.html.gz`;
}
export const RENDERED_DIR = 'browse/rendered';
export const RENDERED_NAME = /^([0-9a-f]{64})\.html\.gz$/;

/** Markdown text -> the digest of its stored rendering. */
export type RenderedReadmes = Map<string, string>;

export interface ReadmeWriter {
  /**
   * Writes each version's README pointers (module path -> digest of the
   * rendering) and every rendering not yet stored. `known` gives renderings
   * the mirror already has (publish).
   */
  emit(versions: BuiltVersion[], known?: RenderedReadmes): Promise<void>;
}

/**
 * One per write of a mirror: each distinct README text is rendered once
 * however many modules and versions carry it, and each distinct rendering
 * is stored once. Texts are remembered across modules by their digest, not
 * themselves, so the memory this takes stays small for a large build.
 */
export function createReadmeWriter(staging: Staging, options: ReadmeOptions): ReadmeWriter {
  const byTextDigest = new Map<string, string>();
  const stored = new Set<string>();
  let render: ((markdown: string) => string) | undefined;
  const renderAndStore = async (markdown: string, pending: Promise<void>[]): Promise<string> => {
    render ??= await createReadmeRenderer(options);
    const html = render(markdown);
    const digest = createHash('sha256').update(html).digest('hex');
    // A seeded staging (publish) may have it already: leave it, so it is not counted as changed.
    if (!stored.has(digest) && !existsSync(join(staging.root, renderedFile(digest)))) {
      stored.add(digest);
      // zlib's thread pool compresses while the next README is rendered here.
      pending.push(gzipAsync(html).then((data) => staging.write(renderedFile(digest), data)));
      // A few at a time: a module's renderings together are tens of megabytes.
      if (pending.length >= MAX_PENDING_RENDERINGS) await Promise.all(pending.splice(0));
    }
    return digest;
  };
  return {
    async emit(versions, known) {
      // Texts of these versions by themselves (most versions of a module repeat an earlier one's READMEs).
      const local: RenderedReadmes = new Map(known);
      const pending: Promise<void>[] = [];
      for (const v of versions) {
        const pointers: Record<string, string> = {};
        for (const c of contentsOf(v)) {
          if (c.readme === '') continue;
          let digest = local.get(c.readme);
          if (digest === undefined) {
            const textDigest = createHash('sha1').update(c.readme).digest('base64');
            digest = byTextDigest.get(textDigest);
            if (digest === undefined) byTextDigest.set(textDigest, (digest = await renderAndStore(c.readme, pending)));
            local.set(c.readme, digest);
          }
          pointers[c.path] = digest;
        }
        await staging.write(readmeFile(addressKey(v.source.address), v.source.version), `${JSON.stringify(pointers)}\n`);
      }
      await Promise.all(pending);
    },
  };
}

/** The README pointers of a version's file in a built mirror: module path -> digest (none for a mirror from before them). */
export function readReadmePointers(dir: string, key: string, version: string): Record<string, string> {
  let pointers: unknown;
  try {
    pointers = JSON.parse(readFileSync(join(dir, readmeFile(key, version)), 'utf8'));
  } catch {
    return {};
  }
  const valid: Record<string, string> = {};
  if (typeof pointers !== 'object' || pointers === null) return valid;
  for (const [path, digest] of Object.entries(pointers)) if (typeof digest === 'string' && /^[0-9a-f]{64}$/.test(digest)) valid[path] = digest;
  return valid;
}

/** What a built mirror already rendered for `version` (publish reuses it instead of rendering again). */
export function readRenderedReadmes(dir: string, version: BuiltVersion): RenderedReadmes {
  const rendered: RenderedReadmes = new Map();
  const pointers = readReadmePointers(dir, addressKey(version.source.address), version.source.version);
  for (const c of contentsOf(version)) {
    const digest = Object.hasOwn(pointers, c.path) ? pointers[c.path] : undefined;
    // Only a rendering that is there: a mirror from before content addressing has none, so it renders afresh.
    if (c.readme !== '' && digest !== undefined && existsSync(join(dir, renderedFile(digest)))) rendered.set(c.readme, digest);
  }
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
