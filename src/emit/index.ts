// Emit stage: built versions -> the static registry tree. Everything is
// written into a staging folder beside the output and swapped in whole at
// the end, so a reader never sees half a mirror.

import { existsSync, readdirSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { MirrorError } from '../errors.js';
import type { BuiltVersion, ModuleAddress } from '../types.js';
import {
  discoveryDocument,
  downloadDocument,
  downloadsSummaryDocument,
  detailDocument,
  latestVersion,
  listingDocument,
  moduleSummary,
  versionsDocument,
  type ModuleSummary,
} from './documents.js';
import {
  addressKey,
  archiveFile,
  basePathOf,
  DISCOVERY_FILE,
  downloadFile,
  downloadsSummaryFile,
  latestDetailFile,
  LIST_DEFAULT_LIMIT,
  listingFile,
  MANIFEST_FILE,
  providersListingFile,
  SEARCH_INDEX_FILE,
  versionDetailFile,
  versionsFile,
} from './paths.js';

export const MANIFEST_FORMAT = 1;

/** What the manifest and the listings keep of each module once its versions are written. */
export interface ModuleRecord {
  address: ModuleAddress;
  latest: ModuleSummary;
  versions: { version: string; tag: string; archive: string; sha256: string; size: number; published_at: string }[];
}

export interface Staging {
  root: string;
  write(rel: string, data: string | Buffer): Promise<void>;
  writeJson(rel: string, value: unknown): Promise<void>;
  /** Swaps the staging folder in as the output folder. */
  commit(): Promise<void>;
  discard(): Promise<void>;
}

export async function createStaging(outDir: string): Promise<Staging> {
  assertReplaceable(outDir);
  const root = join(dirname(outDir), `.${basename(outDir)}.staging-${process.pid}`);
  await rm(root, { recursive: true, force: true });
  await mkdir(root, { recursive: true });
  const made = new Set<string>();
  const write = async (rel: string, data: string | Buffer) => {
    const file = join(root, rel);
    const dir = dirname(file);
    if (!made.has(dir)) {
      await mkdir(dir, { recursive: true });
      made.add(dir);
    }
    await writeFile(file, data);
  };
  return {
    root,
    write,
    writeJson: (rel, value) => write(rel, `${JSON.stringify(value, null, 2)}\n`),
    async commit() {
      const old = join(dirname(outDir), `.${basename(outDir)}.old-${process.pid}`);
      if (existsSync(outDir)) await rename(outDir, old);
      await rename(root, outDir);
      await rm(old, { recursive: true, force: true });
    },
    discard: () => rm(root, { recursive: true, force: true }),
  };
}

/** The output folder is replaced whole, so refuse to replace one that is not a mirror. */
function assertReplaceable(outDir: string): void {
  if (!existsSync(outDir)) return;
  const entries = readdirSync(outDir);
  if (entries.length > 0 && !entries.includes(MANIFEST_FILE)) {
    throw new MirrorError('OUTPUT_FAILED', `The output folder "${outDir}" is not empty and holds no modmirror mirror (no ${MANIFEST_FILE}).`, {
      hint: 'Choose another --out folder, or empty this one: the build replaces the whole folder.',
    });
  }
}

export async function writeArchive(staging: Staging, version: BuiltVersion, data: Buffer): Promise<void> {
  await staging.write(archiveFile(version.source.address, version.source.version), data);
}

/**
 * Every document of one module: versions, latest and per-version details,
 * downloads. `versions` is newest first; `providers` are the providers the
 * module's name exists for.
 */
export async function emitModule(staging: Staging, versions: BuiltVersion[], providers: string[], baseUrl: string): Promise<ModuleRecord | undefined> {
  const first = versions[0];
  if (!first) return undefined;
  const address = first.source.address;
  const names = versions.map((v) => v.source.version);
  const latest = latestVersion(names)!;
  await staging.writeJson(versionsFile(address), versionsDocument(address, versions));
  for (const v of versions) {
    const detail = detailDocument(v, names, providers);
    await staging.writeJson(versionDetailFile(address, v.source.version), detail);
    if (v.source.version === latest) await staging.writeJson(latestDetailFile(address), detail);
    await staging.writeJson(downloadFile(address, v.source.version), downloadDocument(address, v.source.version, baseUrl));
  }
  await staging.writeJson(downloadsSummaryFile(address), downloadsSummaryDocument(address));
  return {
    address,
    latest: moduleSummary(versions.find((v) => v.source.version === latest)!),
    versions: versions.map((v) => ({
      version: v.source.version,
      tag: v.source.tag,
      archive: archiveFile(address, v.source.version),
      sha256: v.archive.sha256,
      size: v.archive.size,
      published_at: v.source.publishedAt.toISOString(),
    })),
  };
}

/** Discovery, first listing pages, latest-per-provider listings, search index and manifest. */
export async function emitIndexes(staging: Staging, records: ModuleRecord[], baseUrl: string, generator: string): Promise<void> {
  const sorted = [...records].sort((a, b) => (addressKey(a.address) < addressKey(b.address) ? -1 : 1));
  const summaries = sorted.map((r) => r.latest);
  const basePath = basePathOf(baseUrl);
  await staging.writeJson(DISCOVERY_FILE, discoveryDocument(baseUrl));
  await staging.writeJson(listingFile(), listingDocument(summaries, 0, LIST_DEFAULT_LIMIT, basePath, ''));
  for (const [namespace, list] of groupBy(summaries, (s) => s.namespace)) {
    await staging.writeJson(listingFile(namespace), listingDocument(list, 0, LIST_DEFAULT_LIMIT, basePath, namespace));
  }
  for (const [key, list] of groupBy(summaries, (s) => `${s.namespace}/${s.name}`)) {
    const [namespace = '', name = ''] = key.split('/');
    await staging.writeJson(providersListingFile(namespace, name), listingDocument(list, 0, LIST_DEFAULT_LIMIT, basePath, key));
  }
  // Compact: the server loads it once; people read the listings instead.
  await staging.write(SEARCH_INDEX_FILE, `${JSON.stringify({ modules: summaries })}\n`);
  await staging.writeJson(MANIFEST_FILE, {
    format: MANIFEST_FORMAT,
    generator,
    modules: Object.fromEntries(sorted.map((r) => [addressKey(r.address), { versions: r.versions }])),
  });
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    let list = groups.get(k);
    if (!list) groups.set(k, (list = []));
    list.push(item);
  }
  return groups;
}
