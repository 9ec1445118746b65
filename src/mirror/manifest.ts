// The records a mirror is written from, and manifest.json's shape: a leaf
// module that emit, browse, hosting, verify and bundle all read, so none of
// them imports another stage for its types.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MirrorError, messageOf } from '../errors.js';
import { fileStamp } from '../file-stamp.js';
import { jsonText } from './staging.js';
import type { ModuleSummary } from '../protocol/documents.js';
import { addressKey, MANIFEST_FILE } from '../protocol/paths.js';
import { DEFAULT_PROVIDERS_PATH } from '../protocol/providers.js';
import type { Deprecation, ModuleAddress } from '../types.js';

/**
 * 3: each module's truth is a file of its own, `state/NS/NAME/PROVIDER.json`
 * (its versions with their digests and deprecations, its latest summary, and
 * the ledger records of its versions), and manifest.json is the root: the
 * mirror's base URL, its providers and their ledger. A write reads and
 * rewrites the states of the modules it changes, and the root.
 * 2: the whole truth in manifest.json (its modules' latest summaries,
 * deprecations and base URL), which a format-3 write splits into states.
 * 1: as 2 without summaries, deprecations and base URL: they are read once
 * from the module's latest detail, deprecations.json and discovery.
 */
export const MANIFEST_FORMAT = 3;

/** Where each module's state is, under the mirror's root: a folder per namespace. */
export const MODULE_STATES_DIR = 'state';

/**
 * A module's state file: `state/NS/NAME.PROVIDER.json` (names hold no dots),
 * so a namespace's modules, and a name's providers, are one folder's listing.
 */
export function moduleStateFile(key: string): string {
  const [namespace, name, provider] = key.split('/');
  return `${MODULE_STATES_DIR}/${namespace}/${name}.${provider}.json`;
}

/** The module key a state file path names, or undefined for any other path. */
export function moduleOfStateFile(rel: string): string | undefined {
  const match = /^state\/([^/.]+)\/([^/.]+)\.([^/.]+)\.json$/.exec(rel);
  return match ? `${match[1]}/${match[2]}/${match[3]}` : undefined;
}

/** Whether a path is the mirror's truth (the root manifest.json or a module's state), which every other document is derived from. */
export const isTruthFile = (rel: string): boolean => rel === MANIFEST_FILE || moduleOfStateFile(rel) !== undefined;

/** What a module's state file holds: its entry of the whole manifest, and its own ledger records. */
export interface ModuleState extends ManifestModule {
  format: number;
  module: string;
  forced?: ForcedReplacement[];
  removed?: Removal[];
}

export interface ManifestVersion {
  version: string;
  tag: string;
  archive: string;
  sha256: string;
  size: number;
  published_at: string;
  /** Set while the version is deprecated. */
  deprecation?: Deprecation;
}

/** A version replaced on purpose (`publish --force`, `build --replace`): kept in the manifest so the replacement is on record. */
export interface ForcedReplacement {
  module: string;
  version: string;
  previous_sha256: string;
  sha256: string;
  at: string;
  /** Who asked: `user@host` for the CLI. */
  by?: string;
}

/** A version removed on purpose (`build --prune`): on record with the bytes it had, which it can never come back with other bytes than. */
export interface Removal {
  /** `ns/name/provider` for a module version, */
  module?: string;
  /** or `host/ns/type` for a provider version. */
  provider?: string;
  version: string;
  /** A module version's archive sha256. */
  sha256?: string;
  /** A provider version's zips: platform -> sha256. */
  archives?: Record<string, string>;
  at: string;
  by?: string;
}

/** The records of deliberate changes that every write carries forward and only ever adds to. */
export type Ledger = Pick<Manifest, 'forced' | 'removed'>;

/** One provider package (zip) of the network mirror. */
export interface ProviderArchive {
  /** os_arch, as the network mirror keys archives. */
  platform: string;
  /** The zip's path in the mirror. */
  archive: string;
  sha256: string;
  size: number;
  /** ["h1:...", "zh:..."]: what VERSION.json lists and lock files hold. */
  hashes: string[];
}

export interface ProviderVersion {
  version: string;
  /** In platform order. */
  archives: ProviderArchive[];
  /** An in-house release, also served over the provider registry protocol (providers.v1). */
  registry?: ProviderRegistryVersion;
}

/** What the provider registry protocol serves of an in-house release besides its zips. */
export interface ProviderRegistryVersion {
  /** Plugin protocol versions, as the release's manifest names them (default ["5.0"]). */
  protocols: string[];
  /** The release's SHA256SUMS and its binary detached signature, as paths in the mirror with their sha256. */
  shasums: { file: string; sha256: string };
  signature: { file: string; sha256: string };
  /** The key that made the signature (upper-case hex), the one the download documents list. */
  key_id: string;
  /**
   * The upstream's release, kept by `serve --upstream` with the upstream's own
   * SHA256SUMS, signature and keys: served over providers.v1 under the network
   * mirror's HOSTNAME folder (protocol/providers.ts providerRegistryBase), not the mirror's own.
   */
  upstream?: true;
}

/** Providers by `HOSTNAME/NAMESPACE/TYPE`, in key order; versions newest first. */
export type ProvidersManifest = Record<string, { versions: ProviderVersion[] }>;

/**
 * `manifest.json`, the mirror's ledger: every version with its archive's
 * digest, every provider package with its hashes, and every deliberate
 * replacement and removal; what verify and every writer read back. `providers` and `providers_path` came with the provider
 * network mirror: a manifest without them (an older mirror) has no providers.
 */
export interface Manifest {
  format: number;
  generator: string;
  forced?: ForcedReplacement[];
  removed?: Removal[];
  /** The base URL the mirror's documents are written for ('' for relative ones). */
  base_url?: string;
  /**
   * In a bucket: counts the writes that made a manifest live there. Derived documents carry the
   * generation they were derived from, so a slow writer never replaces them with older ones.
   */
  generation?: number;
  modules: Record<string, ManifestModule>;
  /** The most recently published versions of the whole mirror, newest first (format 3: its root keeps them for the browse page). */
  recent?: RecentVersion[];
  /** The network mirror's folder in the tree (set when there are providers). */
  providers_path?: string;
  providers?: ProvidersManifest;
  /**
   * The host name in-house releases are published under (HOSTNAME/NAMESPACE/TYPE), as the first
   * `publish --provider-release` that named one gave it, so later ones need not repeat it.
   */
  providers_hostname?: string;
}

/** A version in the mirror's list of the most recently published. */
export interface RecentVersion {
  module: string;
  version: string;
  published_at: string;
}

/** How many recent versions the root keeps (the browse page shows them). */
export const RECENT_COUNT = 20;

/** Newest first; ties by module and version, so the list is the same however it was gathered. */
function newerFirst(a: RecentVersion, b: RecentVersion): number {
  if (a.published_at !== b.published_at) return a.published_at > b.published_at ? -1 : 1;
  const ka = `${a.module}@${a.version}`;
  const kb = `${b.module}@${b.version}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/**
 * The `count` most recent versions of `records`, over `previous` (the list a
 * write found) without the rows of the modules `records` rewrote: a write of
 * some modules keeps the list without reading the others. A removal may
 * leave it shorter until the next build, which gathers it from every module.
 */
export function recentVersions(records: readonly DatedVersions[], previous: RecentVersion[] = [], count = RECENT_COUNT): RecentVersion[] {
  const rewritten = new Set(records.map(moduleKeyOf));
  // Kept as the versions go by rather than sorting all of them: a build holds every version.
  const top: RecentVersion[] = [];
  const offer = (row: RecentVersion) => {
    if (top.length === count && newerFirst(row, top[count - 1]!) >= 0) return;
    let at = top.length;
    while (at > 0 && newerFirst(row, top[at - 1]!) < 0) at--;
    top.splice(at, 0, row);
    if (top.length > count) top.pop();
  };
  for (const row of previous) if (!rewritten.has(row.module)) offer(row);
  for (const r of records) {
    const module = moduleKeyOf(r);
    for (const { version, published_at } of r.versions) offer({ module, version, published_at });
  }
  return top;
}

/** A module's versions with their dates: a record, or what a reader kept of a state. */
export type DatedVersions = { versions: readonly Pick<ManifestVersion, 'version' | 'published_at'>[] } & ({ address: ModuleAddress } | { module: string });

function moduleKeyOf(r: DatedVersions): string {
  return 'address' in r ? addressKey(r.address) : r.module;
}

/** One module's truth: its versions, newest first, and the summary listings and search show of it. */
export interface ManifestModule {
  versions: ManifestVersion[];
  /** Absent in a format-1 manifest. */
  latest?: ModuleSummary;
  /** The registry modules (`ns/name/provider`) the latest version (its root and submodules) calls; absent when none, or written before modmirror kept them. */
  calls?: string[];
}

/** The generation of the manifest a write makes live over `live` (the one it replaces, if any). */
export function nextGeneration(live: Pick<Manifest, 'generation'> | undefined): number {
  return (live?.generation ?? 0) + 1;
}

/** `manifest`'s text with `generation` set, beside the other head fields. */
export function manifestTextWithGeneration(manifest: Manifest, generation: number): Buffer {
  const { format, generator, generation: _old, ...rest } = manifest;
  return Buffer.from(jsonText({ format, generator, generation, ...rest }));
}

/**
 * The mirror's manifest, or undefined when `dir` holds none (no mirror yet):
 * the root with the states of `modules` (default: every module the state
 * folder holds), as one Manifest.
 */
export function readManifest(dir: string, modules?: Iterable<string>): Manifest | undefined {
  return readManifestAt(
    (rel) => join(dir, rel),
    () => modules ?? moduleStatesIn(dir),
  );
}

/**
 * The manifest of a mirror whose files are where `at` says (a change gathered
 * beside the live mirror, or the live one): the root, and with format 3 the
 * states of the modules `modules` names. A module without a state file is
 * not in the mirror.
 */
export function readManifestAt(at: (rel: string) => string, modules: () => Iterable<string>): Manifest | undefined {
  const root = readManifestFile(at(MANIFEST_FILE));
  if (!root || root.format < 3) return root;
  const states: ModuleState[] = [];
  for (const key of [...new Set(modules())].sort()) {
    const state = readModuleStateFile(at(moduleStateFile(key)), key);
    if (state) states.push(state);
  }
  return withModuleStates(root, states);
}

/** The root with `states` merged in: their entries as `modules`, their ledger records after the root's own. */
export function withModuleStates(root: Manifest, states: ModuleState[]): Manifest {
  const modules: Record<string, ManifestModule> = {};
  const forced = [...(root.forced ?? [])];
  const removed = [...(root.removed ?? [])];
  for (const { module, versions, latest, calls, forced: f, removed: r } of states) {
    modules[module] = { versions, ...(latest ? { latest } : {}), ...(calls ? { calls } : {}) };
    forced.push(...(f ?? []));
    removed.push(...(r ?? []));
  }
  return { ...root, ...(forced.length > 0 ? { forced } : {}), ...(removed.length > 0 ? { removed } : {}), modules };
}

/** A module's state, or undefined when the file is not there; throws naming the file when it is unreadable. */
export function readModuleStateFile(file: string, key: string): ModuleState | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    return parseModuleState(text, key);
  } catch (error) {
    throw new MirrorError('OUTPUT_FAILED', `The mirror's module state "${file}" is unreadable: ${messageOf(error)}`, {
      hint: 'Run modmirror verify to see what else is wrong, then rebuild the mirror with modmirror build --clean.',
      cause: error,
    });
  }
}

/** A module state's text, checked for what every reader relies on; throws a plain Error saying what is wrong. */
export function parseModuleState(text: string, key: string): ModuleState {
  const state = JSON.parse(text) as ModuleState;
  if (typeof state !== 'object' || state === null || Array.isArray(state)) throw new Error('not a JSON object');
  if (state.module !== key) throw new Error(`it names the module "${String(state.module)}", not ${key}`);
  if (!Array.isArray(state.versions)) throw new Error('no "versions" list');
  for (const list of ['forced', 'removed'] as const) if (state[list] !== undefined && !Array.isArray(state[list])) throw new Error(`"${list}" is not a list`);
  return state;
}

/** The modules (`ns/name/provider`) whose state files are in the mirror at `dir` (in `namespace` alone, if given), sorted. */
export function moduleStatesIn(dir: string, namespace?: string): string[] {
  const base = join(dir, MODULE_STATES_DIR);
  const namespaces = namespace !== undefined ? [namespace] : listNames(base, 'folders');
  const keys: string[] = [];
  for (const ns of namespaces) keys.push(...statesInFolder(join(base, ns), ns));
  return namespace !== undefined ? keys : keys.sort();
}

/**
 * A namespace's modules, sorted, listed again only when its folder changed: a write renames its states
 * into it, which changes the folder's stamp, and a namespace of thousands of modules is listed by every
 * write of one of them more than once.
 */
const listedFolders = new Map<string, { stamp: string; keys: string[] }>();
function statesInFolder(folder: string, namespace: string): string[] {
  const stamp = fileStamp(folder);
  if (stamp === undefined) return [];
  const known = listedFolders.get(folder);
  if (known?.stamp === stamp) return [...known.keys];
  const keys: string[] = [];
  for (const file of listNames(folder, 'files')) {
    // NAME.PROVIDER.json: names hold no dots.
    const parts = file.split('.');
    if (parts.length === 3 && parts[2] === 'json' && parts[0] !== '' && parts[1] !== '') keys.push(`${namespace}/${parts[0]}/${parts[1]}`);
  }
  keys.sort();
  if (listedFolders.size > 10_000) listedFolders.clear();
  listedFolders.set(folder, { stamp, keys });
  return [...keys];
}

/** The namespaces with a state folder in the mirror at `dir`, sorted. */
export function stateNamespacesIn(dir: string): string[] {
  return listNames(join(dir, MODULE_STATES_DIR), 'folders').sort();
}

function listNames(path: string, kind: 'files' | 'folders'): string[] {
  try {
    // A state folder holds only state files: their names are enough.
    if (kind === 'files') return readdirSync(path);
    return readdirSync(path, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
    throw error;
  }
}

/** The ledger records of one module (undefined: of the providers, which the root keeps). */
export function ledgerOwner(record: ForcedReplacement | Removal): string | undefined {
  return record.module;
}

/** The manifest's text, checked for what every reader relies on; throws a plain Error saying what is wrong. */
export function parseManifest(text: string): Manifest {
  const manifest = JSON.parse(text) as Manifest;
  if (typeof manifest !== 'object' || manifest === null || Array.isArray(manifest)) throw new Error('not a JSON object');
  // A format-3 root names no modules: their states do.
  if (manifest.format >= 3 && manifest.modules === undefined) manifest.modules = {};
  if (typeof manifest.modules !== 'object' || manifest.modules === null || Array.isArray(manifest.modules)) throw new Error('no "modules" object');
  for (const list of ['forced', 'removed'] as const)
    if (manifest[list] !== undefined && !Array.isArray(manifest[list])) throw new Error(`"${list}" is not a list`);
  return manifest;
}

/** The manifest in `file` (the root alone, for format 3); undefined when there is none. */
export function readManifestFile(file: string): Manifest | undefined {
  if (!existsSync(file)) return undefined;
  try {
    return parseManifest(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new MirrorError('OUTPUT_FAILED', `The mirror's manifest "${file}" is unreadable: ${messageOf(error)}`, {
      hint: 'Run modmirror verify to see what else is wrong, then rebuild the mirror with modmirror build --clean.',
      cause: error,
    });
  }
}

/**
 * A manifest no code can change: what a write found under the lock is read
 * once and shared by the writer and the ledger, which compares the write's
 * result with it; frozen, a writer that changed it by mistake would throw
 * rather than blind the ledger.
 */
export function frozenManifest(manifest: Manifest | undefined): Manifest | undefined {
  const freeze = (value: unknown): void => {
    if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
    for (const child of Object.values(value)) freeze(child);
    Object.freeze(value);
  };
  freeze(manifest);
  return manifest;
}

/** The manifest's provider network mirror, as a write carries it forward (emitIndexes' `providers`); undefined when it has none. */
export function carriedProviders(
  manifest: Pick<Manifest, 'providers' | 'providers_path' | 'providers_hostname'>,
): { path: string; entries: ProvidersManifest; hostname?: string } | undefined {
  if (!manifest.providers) return undefined;
  const hostname = manifest.providers_hostname;
  return { path: manifest.providers_path ?? DEFAULT_PROVIDERS_PATH, entries: manifest.providers, ...(hostname ? { hostname } : {}) };
}

/** Every provider archive of a manifest, keyed `HOSTNAME/NAMESPACE/TYPE@VERSION:PLATFORM`. */
export function providerArchivesOf(manifest: Pick<Manifest, 'providers'>): Map<string, ProviderArchive> {
  const archives = new Map<string, ProviderArchive>();
  for (const [key, entry] of Object.entries(manifest.providers ?? {})) {
    for (const v of entry.versions) for (const a of v.archives) archives.set(`${key}@${v.version}:${a.platform}`, a);
  }
  return archives;
}

/**
 * What the manifest and the listings keep of each module once its versions
 * are written. Held for every version until the end of a build, so without
 * the archive path: that follows from the address and version (archiveFile).
 */
export interface ModuleRecord {
  address: ModuleAddress;
  latest: ModuleSummary;
  versions: VersionRecord[];
  /** As the state keeps them (ManifestModule.calls). */
  calls?: string[];
}

export type VersionRecord = Omit<ManifestVersion, 'archive'>;

/** Records in address order, as every index, the browse page and _headers list them: sorted once per write. */
export function sortRecords(records: ModuleRecord[]): ModuleRecord[] {
  return [...records].sort((a, b) => (addressKey(a.address) < addressKey(b.address) ? -1 : 1));
}
