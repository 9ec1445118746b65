// The served mirror: its index (from each module's state file), loaded once
// per generation of dist/, and a bounded cache of its documents. Every write
// replaces manifest.json last; the next request after that sees the new
// generation, reading again only the states that changed, and nothing cached
// from the old one is served again.

import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { versionsIndexOf } from '../mirror/versions-index.js';
import {
  MODULE_STATES_DIR,
  moduleStateFile,
  moduleStatesIn,
  readManifestFile,
  stateNamespacesIn,
  readModuleStateFile,
  recentVersions,
  type RecentVersion,
} from '../mirror/manifest.js';
import { MirrorError } from '../errors.js';
import { payload, type Payload } from '../http/payload.js';
import type { ModuleSummary } from '../protocol/documents.js';
import { MANIFEST_FILE, SEARCH_INDEX_FILE, VERSIONS_INDEX_FILE } from '../protocol/paths.js';
import { fileStamp, Looks } from '../file-stamp.js';
import { PROVIDERS_INDEX_FILE, providerKey, providerSignatureFile, providerSumsFile, providerZipFile, type ProvidersIndex } from '../protocol/providers.js';

export interface IndexedModule {
  key: string;
  summary: ModuleSummary;
  /** Newest first, as in the manifest. */
  versions: string[];
  /** The newest versions with their dates (the browse page's most recent, for a private caller). */
  recent: RecentVersion[];
  /** The bytes of its archives (for /metrics). */
  archiveBytes: number;
  /** The registry modules its latest version calls (the browse page's rows, for a private caller). */
  calls: string[];
  /** Lower-case namespace, name, provider and description, for search. */
  haystack: string;
  nameLower: string;
}

export interface MirrorIndex {
  generation: string;
  /** In address order. */
  modules: IndexedModule[];
  byKey: Map<string, IndexedModule>;
  /** The provider network mirror: its folder (undefined when the mirror has no providers) and each zip's provider. */
  providers: {
    path: string | undefined;
    /** Every provider, as HOSTNAME/NAMESPACE/TYPE. */
    keys: Set<string>;
    zips: Map<string, string>;
    /** In-house providers served over providers.v1, as NAMESPACE/TYPE. */
    registry: Set<string>;
    /** Their releases' SHA256SUMS and .sig files, each with its provider. */
    releaseFiles: Map<string, string>;
  };
}

/**
 * A mirror that fails to load (one being copied in file by file) is tried
 * again at most this often; the last good one is served meanwhile.
 */
const RETRY_AFTER_FAILURE_MS = 200;
/** Enough for the hot documents of a large mirror while the whole server stays under 200 MB at 100,000 versions. */
const CACHE_BYTES = 32 * 1024 * 1024;

export class Mirror {
  private index: MirrorIndex;
  private readonly looks = new Looks();
  private failed: { generation: string; at: number } | undefined;
  private cache = new Map<string, Payload>();
  private cacheBytes = 0;
  /** New generations loaded since the server started (for /metrics). */
  reloads = 0;

  constructor(readonly root: string) {
    this.index = loadIndex(root);
  }

  /** The current index, reloaded when dist/ has been replaced since the last look. */
  current(): MirrorIndex {
    if (!this.looks.due()) return this.index;
    const generation = generationOf(this.root);
    // Undefined between a swap's two renames: the old index is all there is.
    if (generation === undefined || generation === this.index.generation) return this.index;
    const now = performance.now();
    if (this.failed?.generation === generation && now - this.failed.at < RETRY_AFTER_FAILURE_MS) return this.index;
    try {
      this.index = loadIndex(this.root, this.index);
      this.reloads++;
      this.failed = undefined;
      this.cache.clear();
      this.cacheBytes = 0;
    } catch {
      this.failed = { generation, at: now };
    }
    return this.index;
  }

  /** Look at dist/ again on the next call: this process just replaced it. */
  refresh(): void {
    this.looks.again();
  }

  /** A file of the tree as a payload; 404 when it does not exist. */
  async document(rel: string): Promise<Payload> {
    const generation = this.current().generation;
    const hit = this.cache.get(rel);
    if (hit) {
      this.cache.delete(rel);
      this.cache.set(rel, hit);
      return hit;
    }
    let body: Buffer;
    try {
      body = await readFile(join(this.root, rel));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') {
        throw new MirrorError('NOT_FOUND', 'Not found');
      }
      throw error;
    }
    const p = payload(body);
    if (generation === this.index.generation) this.remember(rel, p);
    return p;
  }

  private remember(rel: string, p: Payload): void {
    this.cache.set(rel, p);
    this.cacheBytes += p.body.length;
    for (const [key, old] of this.cache) {
      if (this.cacheBytes <= CACHE_BYTES) break;
      this.cache.delete(key);
      this.cacheBytes -= old.body.length;
    }
  }
}

function generationOf(root: string): string | undefined {
  return fileStamp(join(root, MANIFEST_FILE));
}

/** The mirror at `root`; with `previous`, the states whose files did not change since it are taken from it. */
export function loadIndex(root: string, previous?: MirrorIndex): MirrorIndex {
  const generation = generationOf(root);
  if (generation === undefined) {
    throw new MirrorError('OUTPUT_FAILED', `The directory "${root}" holds no built mirror (no ${MANIFEST_FILE}).`, {
      hint: 'Did you build it? Run modmirror build, or pass --dir with the folder the build wrote.',
    });
  }
  const head = readManifestFile(join(root, MANIFEST_FILE))!;
  const loaded = head.format >= 3 ? loadStates(root, previous) : { modules: loadOlderIndexes(root), folders: undefined };
  const { modules } = loaded;
  const index = { generation, modules, byKey: new Map(modules.map((m) => [m.key, m])), providers: loadProviders(root) };
  if (loaded.folders) folderStamps.set(index, loaded.folders);
  return index;
}

/** A state's file identity, with the module read from it: a reload reads again only the files that changed. */
const stamps = new WeakMap<IndexedModule, string>();
/** Each namespace's state folder's identity when an index was loaded: a write renames states into it, which changes it. */
const folderStamps = new WeakMap<MirrorIndex, Map<string, string | undefined>>();

/** Every module with versions, in address order; a namespace whose folder did not change since `previous` is taken whole from it. */
function loadStates(root: string, previous: MirrorIndex | undefined): { modules: IndexedModule[]; folders: Map<string, string | undefined> } {
  const modules: IndexedModule[] = [];
  const folders = new Map<string, string | undefined>();
  const before = previous && folderStamps.get(previous);
  const previousIn = new Map<string, IndexedModule[]>();
  for (const m of previous?.modules ?? []) {
    const list = previousIn.get(m.summary.namespace);
    if (list) list.push(m);
    else previousIn.set(m.summary.namespace, [m]);
  }
  for (const namespace of stateNamespacesIn(root)) {
    const folder = fileStamp(join(root, MODULE_STATES_DIR, namespace));
    folders.set(namespace, folder);
    if (folder !== undefined && before?.get(namespace) === folder) {
      for (const m of previousIn.get(namespace) ?? []) modules.push(m);
      continue;
    }
    for (const key of moduleStatesIn(root, namespace)) {
      const file = join(root, moduleStateFile(key));
      const stamp = fileStamp(file);
      const known = previous?.byKey.get(key);
      if (known && stamps.get(known) === stamp) {
        modules.push(known);
        continue;
      }
      // Only what the server answers from: not the archives' paths and digests, which a large mirror holds by the megabyte.
      const state = readModuleStateFile(file, key);
      if (!state || state.versions.length === 0 || !state.latest) continue;
      const module = indexed(
        key,
        state.latest,
        state.versions.map((v) => v.version),
        newestOf(key, state.versions),
      );
      module.archiveBytes = state.versions.reduce((sum, v) => sum + v.size, 0);
      module.calls = state.calls ?? [];
      if (stamp !== undefined) stamps.set(module, stamp);
      modules.push(module);
    }
  }
  return { modules, folders };
}

function indexed(key: string, summary: ModuleSummary, versions: string[], recent: RecentVersion[]): IndexedModule {
  return {
    key,
    summary,
    versions,
    recent,
    archiveBytes: 0,
    calls: [],
    haystack: `${summary.namespace} ${summary.name} ${summary.provider} ${summary.description}`.toLowerCase(),
    nameLower: summary.name.toLowerCase(),
  };
}

/** A module's most recently published versions, as many as the browse page shows. */
function newestOf(module: string, versions: { version: string; published_at: string }[]): RecentVersion[] {
  return recentVersions([{ module, versions }]);
}

/** A mirror written before each module had its state file: its whole-mirror indexes (it has no recent versions). */
function loadOlderIndexes(root: string): IndexedModule[] {
  const versionsOf = readIndexFile(root, VERSIONS_INDEX_FILE, versionsIndexOf);
  const search = readIndexFile(root, SEARCH_INDEX_FILE, (value) => value as { modules: ModuleSummary[] });
  return search.modules.map((summary) => {
    const key = `${summary.namespace}/${summary.name}/${summary.provider}`;
    return indexed(key, summary, versionsOf.get(key) ?? [], []);
  });
}

/** A mirror built before providers existed has no providers index: it has no providers. */
function loadProviders(root: string): MirrorIndex['providers'] {
  let index: ProvidersIndex;
  try {
    index = JSON.parse(readFileSync(join(root, PROVIDERS_INDEX_FILE), 'utf8')) as ProvidersIndex;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      return { path: undefined, keys: new Set(), zips: new Map(), registry: new Set(), releaseFiles: new Map() };
    throw new MirrorError('OUTPUT_FAILED', `Cannot load ${PROVIDERS_INDEX_FILE} from "${root}": ${(error as Error).message}`, {
      hint: 'Run modmirror verify to see what is wrong, then build again.',
      cause: error,
    });
  }
  const keys = new Set<string>();
  const zips = new Map<string, string>();
  const registry = new Set<string>();
  const releaseFiles = new Map<string, string>();
  for (const p of index.providers) {
    const key = providerKey(p);
    keys.add(key);
    if (p.registry) registry.add(`${p.namespace}/${p.type}`);
    for (const v of p.versions) {
      for (const platform of v.platforms) zips.set(providerZipFile(index.path, p, v.version, platform), key);
      if (v.key_id === undefined) continue;
      releaseFiles.set(providerSumsFile(index.path, p, v.version), key);
      releaseFiles.set(providerSignatureFile(index.path, p, v.version), key);
    }
  }
  return { path: index.providers.length > 0 ? index.path : undefined, keys, zips, registry, releaseFiles };
}

function readIndexFile<T>(root: string, rel: string, read: (document: unknown) => T): T {
  try {
    return read(JSON.parse(readFileSync(join(root, rel), 'utf8')));
  } catch (error) {
    throw new MirrorError('OUTPUT_FAILED', `Cannot load ${rel} from "${root}": ${(error as Error).message}`, {
      hint: 'A mirror built by an older modmirror has no versions-index.json: run modmirror build again. Otherwise run modmirror verify to see what is wrong.',
      cause: error,
    });
  }
}
