// The browse page: a static single-page site written with the mirror
// (index.html, browse/app.js, browse/style.css), a compact index of modules,
// and each version's READMEs rendered to safe HTML, each distinct rendering
// stored once. It reads the registry's
// own documents, so it works on a plain file host as under modmirror serve.

import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { ModuleRecord } from '../manifest.js';
import { addressKey } from '../protocol/paths.js';
import type { Staging } from '../emit/staging.js';
import type { BuiltVersion } from '../types.js';
import { PACKAGE_ROOT } from '../version.js';
import { createReadmeRenderer, storedRendering, type ReadmeOptions, type StoredRendering } from './markdown.js';

// One copy, read by tests and the CLI alike; package.json `files` ships this
// folder for that reason (test/package.test.ts installs the packed tarball and builds with it).
const STATIC = join(PACKAGE_ROOT, 'src/browse/static');
/** The compiled worker, also when this code runs bundled into the CLI (lib/cli-bundle/) or from src/ in tests. */
const RENDER_WORKER = join(PACKAGE_ROOT, 'lib/browse/render-worker.js');
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
  /** Stops the rendering thread, if any. */
  close(): Promise<void>;
}

/** Recently seen texts kept whole (most versions repeat the one before's READMEs), up to this many characters: a few versions of a large module. */
const RECENT_TEXT_CHARS = 2 * 1024 * 1024;

/**
 * One per write of a mirror: each distinct README text is rendered once
 * however many modules and versions carry it, and each distinct rendering
 * is stored once. Texts are remembered across the build by their digest, not
 * themselves, so the memory this takes stays small for a large build.
 * `thread`: render in a worker thread (a build), not on this one (a publish
 * renders a version's few READMEs, less than starting a thread costs).
 */
export function createReadmeWriter(staging: Staging, options: ReadmeOptions & { thread?: boolean }): ReadmeWriter {
  const renderer = options.thread ? threadRenderer(options) : inlineRenderer(options);
  const byTextDigest = new Map<string, string | Promise<string>>();
  const recent = new RecentTexts(RECENT_TEXT_CHARS);
  const renderAndStore = async (markdown: string): Promise<string> => {
    const { digest, data } = await renderer.render(markdown);
    // Stored already (two texts with the same HTML, or a publish's seeded staging): left as it is, so a
    // publish does not count it as changed.
    if (!existsSync(join(staging.root, renderedFile(digest)))) await staging.write(renderedFile(digest), data);
    return digest;
  };
  const digestOf = async (markdown: string, known: RenderedReadmes | undefined): Promise<string> => {
    const seen = known?.get(markdown) ?? recent.get(markdown);
    if (seen !== undefined) return seen;
    const textDigest = createHash('sha1').update(markdown).digest('binary');
    let digest = byTextDigest.get(textDigest);
    if (digest === undefined) {
      // The promise while it renders, so versions built side by side with a new text render it once; then the
      // digest alone (a build of 10,000 versions has tens of thousands of texts).
      const rendering = renderAndStore(markdown);
      byTextDigest.set(textDigest, rendering);
      rendering.then((d) => byTextDigest.set(textDigest, d), () => byTextDigest.delete(textDigest));
      digest = rendering;
    }
    const resolved = await digest;
    recent.set(markdown, resolved);
    return resolved;
  };
  return {
    async emit(versions, known) {
      for (const v of versions) {
        const readmes = contentsOf(v).filter((c) => c.readme !== '');
        const digests = await Promise.all(readmes.map((c) => digestOf(c.readme, known)));
        const pointers = Object.fromEntries(readmes.map((c, i) => [c.path, digests[i]!]));
        await staging.write(readmeFile(addressKey(v.source.address), v.source.version), `${JSON.stringify(pointers)}\n`);
      }
    },
    close: () => renderer.close(),
  };
}

/** Texts and their digests, the least recently used going first once they hold more than `limit` characters. */
class RecentTexts {
  private readonly texts = new Map<string, string>();
  private chars = 0;
  constructor(private readonly limit: number) {}

  get(text: string): string | undefined {
    const digest = this.texts.get(text);
    if (digest !== undefined) {
      this.texts.delete(text);
      this.texts.set(text, digest);
    }
    return digest;
  }

  set(text: string, digest: string): void {
    if (this.texts.has(text)) return;
    this.texts.set(text, digest);
    this.chars += text.length;
    for (const oldest of this.texts.keys()) {
      if (this.chars <= this.limit) break;
      this.texts.delete(oldest);
      this.chars -= oldest.length;
    }
  }
}

interface Renderer {
  render(markdown: string): Promise<StoredRendering>;
  close(): Promise<void>;
}

function inlineRenderer(options: ReadmeOptions): Renderer {
  let render: Promise<(markdown: string) => string> | undefined;
  return {
    async render(markdown) {
      render ??= createReadmeRenderer(options);
      return storedRendering((await render)(markdown));
    },
    close: async () => {},
  };
}

/** Started on the first README, so a build with none starts no thread. */
function threadRenderer(options: ReadmeOptions): Renderer {
  let worker: Worker | undefined;
  let nextId = 0;
  const waiting = new Map<number, { resolve: (r: StoredRendering) => void; reject: (e: Error) => void }>();
  const failAll = (error: Error) => {
    for (const w of waiting.values()) w.reject(error);
    waiting.clear();
  };
  const start = () => {
    const w = new Worker(RENDER_WORKER, { workerData: { imageHosts: options.imageHosts } });
    w.on('message', (m: { id: number; digest: string; data: Uint8Array; error?: string }) => {
      const entry = waiting.get(m.id);
      waiting.delete(m.id);
      if (m.error !== undefined) entry?.reject(new Error(`README rendering failed: ${m.error}`));
      else entry?.resolve({ digest: m.digest, data: Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength) });
    });
    w.on('error', failAll);
    w.on('exit', (code) => failAll(new Error(`the README rendering thread stopped (exit ${code})`)));
    return w;
  };
  return {
    render(markdown) {
      worker ??= start();
      const id = nextId++;
      const result = new Promise<StoredRendering>((resolve, reject) => waiting.set(id, { resolve, reject }));
      worker.postMessage({ id, markdown });
      return result;
    },
    async close() {
      await worker?.terminate();
      worker = undefined;
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
    let text = readFileSync(join(STATIC, source), 'utf8');
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
