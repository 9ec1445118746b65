// Emit stage: built versions -> the static registry tree, written into a
// staging folder (./staging.ts) that is swapped in whole at the end. The
// browse page (browse/) and the hosts' _headers (hosting/) are written beside
// it by build and publish, from the same records.

import { DEPRECATIONS_FILE, type Deprecation, type Deprecations } from '../mirror/deprecations.js';
import { readFile } from 'node:fs/promises';
import type { BuiltVersion, ModuleAddress } from '../types.js';
import {
  MANIFEST_FORMAT,
  moduleStateFile,
  type ForcedReplacement,
  type Ledger,
  type Manifest,
  type ManifestVersion,
  type ModuleRecord,
  type ModuleState,
  type ProvidersManifest,
  type RecentVersion,
  type Removal,
} from '../mirror/manifest.js';
import {
  discoveryDocument,
  downloadDocument,
  downloadsSummaryDocument,
  detailDocument,
  listingDocument,
  moduleSummary,
  type ModuleSummary,
  versionsDocument,
  versionsDocumentContent,
  type VersionsDocumentContent,
} from '../protocol/documents.js';
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
  VERSIONS_INDEX_FILE,
} from '../protocol/paths.js';
import { jsonText, type Staging } from '../mirror/staging.js';
import { latestVersion } from '../version-order.js';
import { firstListed, listedSummary, type ModulesView } from '../mirror/view.js';
import { parseModuleSource } from '../protocol/source-address.js';

export interface IndexOptions {
  baseUrl: string;
  generator: string;
  /** The mirror's records of deliberate replacements and removals, carried forward (and added to) by every write. */
  ledger?: Ledger;
  /** Write only the listings that show these namespace/name pairs (a change to some modules); default all. */
  only?: { namespace: string; name: string }[];
  /** The provider network mirror's folder and entries, listed in the manifest beside the modules, and the in-house releases' host name when one was given. */
  providers?: { path: string; entries: ProvidersManifest; hostname?: string };
  /** The mirror's deprecated versions, written back for the versions it holds. */
  deprecations?: Deprecations;
  /** The mirror's most recent versions, as the root keeps them (recentVersions). */
  recent: RecentVersion[];
  /** Modules whose states (with their ledger records) a build wrote as each finished: not written again. */
  stagedStates?: ReadonlySet<string>;
}

/**
 * Every document of one module: versions, latest and per-version details,
 * downloads (not the archives: those are written as each version is packed). `versions` is newest first; `providers` are the providers the
 * module's name exists for.
 */
export async function emitModule(
  staging: Staging,
  versions: BuiltVersion[],
  providers: string[],
  options: { baseUrl: string; deprecations?: Record<string, Deprecation>; onDetail?: DetailListener },
): Promise<ModuleRecord | undefined> {
  const first = versions[0];
  if (!first) return undefined;
  const writer = createModuleWriter(
    staging,
    first.source.address,
    versions.map((v) => v.source.version),
    providers,
    options,
  );
  for (const v of versions) await writer.add(v);
  return writer.finish([]);
}

/** What the versions document and the module's record keep of a version once its detail is written. */
type WrittenVersion = Omit<BuiltVersion, 'content'> & { content: VersionsDocumentContent };

/**
 * Told of each detail document as it is written, with the document and its
 * text: `version`'s own, or with `ofModule` the module's, which is the very
 * text of `version`'s (its latest). The build checks them there, rather than
 * reading every detail back (verify.ts, WrittenDetails).
 */
export type DetailListener = (address: ModuleAddress, version: string, doc: object, text: string, ofModule: boolean) => void;

export interface ModuleWriter {
  /** Writes the version's detail and download documents; its content can go once this resolves. */
  add(version: BuiltVersion): Promise<void>;
  /** Writes the module's own documents once every version is added; `failed` are the planned versions that were not. */
  finish(failed: string[]): Promise<ModuleRecord | undefined>;
}

/**
 * A module's documents written as each version is built, rather than once all
 * of them are: a history of hundreds of versions with large READMEs is then
 * never held whole. Each detail lists every version of the module, so it is
 * written with the `planned` versions (newest first); the few details written
 * before a version failed are corrected in `finish`.
 */
export function createModuleWriter(
  staging: Staging,
  address: ModuleAddress,
  planned: string[],
  providers: string[],
  options: { baseUrl: string; deprecations?: Record<string, Deprecation>; onDetail?: DetailListener },
): ModuleWriter {
  const { deprecations = {}, onDetail } = options;
  const written = new Map<string, WrittenVersion>();
  const plannedLatest = latestVersion(planned);
  const writeDetail = async (version: string, doc: object, text: string, latest: boolean) => {
    await staging.write(versionDetailFile(address, version), text);
    onDetail?.(address, version, doc, text, false);
    if (!latest) return;
    await staging.write(latestDetailFile(address), text);
    onDetail?.(address, version, doc, text, true);
  };
  return {
    async add(v) {
      const version = v.source.version;
      const doc = detailDocument(v, planned, providers, deprecations[version]);
      await writeDetail(version, doc, jsonText(doc), version === plannedLatest);
      await staging.writeJson(downloadFile(address, version), downloadDocument(address, version, options.baseUrl));
      written.set(version, { source: v.source, archive: v.archive, description: v.description, content: versionsDocumentContent(v.content) });
    },
    async finish(failed) {
      const names = planned.filter((n) => !failed.includes(n) && written.has(n));
      const versions = names.map((n) => written.get(n)!);
      if (versions.length === 0) return undefined;
      const latest = latestVersion(names)!;
      if (names.length !== planned.length) {
        // Rare (a version failed): the details already written list it, so they are read back and corrected.
        for (const name of names) {
          const detail = JSON.parse(await readFile(staging.at(versionDetailFile(address, name)), 'utf8')) as { versions: string[] };
          detail.versions = names;
          await writeDetail(name, detail, jsonText(detail), name === latest);
        }
      }
      await staging.writeJson(versionsFile(address), versionsDocument(address, versions, deprecations));
      await staging.writeJson(downloadsSummaryFile(address), downloadsSummaryDocument(address));
      const calls = registryCalls(address, written.get(latest)!.content);
      return {
        address,
        latest: moduleSummary(written.get(latest)!),
        ...(calls.length > 0 ? { calls } : {}),
        versions: versions.map((v) => ({
          version: v.source.version,
          tag: v.source.tag,
          sha256: v.archive.sha256,
          size: v.archive.size,
          published_at: v.source.publishedAt.toISOString(),
        })),
      };
    },
  };
}

/**
 * Discovery, the listings' first pages, and the mirror's truth (each module's
 * state, then the root). `sorted` is in address order (sortRecords): every
 * module for a build; for a write of some modules (`only`), those it rewrote,
 * and the listings that show them are written from `view`, which reads the
 * other modules' states where a listing needs them.
 */
export async function emitIndexes(staging: Staging, sorted: ModuleRecord[], options: IndexOptions & { view: ModulesView }): Promise<void> {
  const { only, view } = options;
  // The truth first, so the listings below read the states as this write leaves them (their order on disk is write-order.ts's).
  const providers = options.providers && Object.keys(options.providers.entries).length > 0 ? options.providers : undefined;
  await writeManifest(
    staging,
    sorted,
    {
      format: MANIFEST_FORMAT,
      generator: options.generator,
      base_url: options.baseUrl,
      ...(options.recent.length > 0 ? { recent: options.recent } : {}),
      ...(options.ledger?.forced?.length ? { forced: options.ledger.forced } : {}),
      ...(options.ledger?.removed?.length ? { removed: options.ledger.removed } : {}),
      // Beside modules, and optional: a manifest without them (an older mirror) still reads as one without providers.
      ...(providers ? { providers_path: providers.path, providers: providers.entries } : {}),
      ...(providers?.hostname ? { providers_hostname: providers.hostname } : {}),
    },
    options.deprecations ?? {},
    options.stagedStates ?? new Set(),
  );
  const basePath = basePathOf(options.baseUrl);
  const inHouse = Object.values(options.providers?.entries ?? {}).some((e) => e.versions.some((v) => v.registry && !v.registry.upstream));
  await staging.writeJson(DISCOVERY_FILE, discoveryDocument(options.baseUrl, { providers: inHouse }));
  await staging.writeJson(listingFile(), listingDocument(firstListed(view, view.namespaces()), 0, LIST_DEFAULT_LIMIT, basePath, ''));
  const namespaces = only ? [...new Set(only.map((o) => o.namespace))] : view.namespaces();
  // A namespace or name with no module left has no listing (a removal takes its folder away).
  for (const namespace of namespaces) {
    const first = firstListed(view, [namespace]);
    if (first.length > 0) await staging.writeJson(listingFile(namespace), listingDocument(first, 0, LIST_DEFAULT_LIMIT, basePath, namespace));
  }
  const names = only ?? groupNames(view, namespaces);
  for (const { namespace, name } of names) {
    const summaries = view
      .modulesIn(namespace)
      .filter((key) => key.startsWith(`${namespace}/${name}/`))
      .map((key) => listedSummary(view, key))
      .filter((s) => s !== undefined);
    if (summaries.length > 0)
      await staging.writeJson(providersListingFile(namespace, name), listingDocument(summaries, 0, LIST_DEFAULT_LIMIT, basePath, `${namespace}/${name}`));
  }
  // Whole-mirror indexes an older mirror had: each module's state says what they said.
  for (const legacy of LEGACY_INDEX_FILES) await staging.remove(legacy);
}

/** Files older mirrors kept beside the manifest, listing every module; the states hold it now. */
const LEGACY_INDEX_FILES = [SEARCH_INDEX_FILE, VERSIONS_INDEX_FILE, DEPRECATIONS_FILE];

/** Each namespace/name pair of `namespaces`, once. */
function groupNames(view: ModulesView, namespaces: string[]): { namespace: string; name: string }[] {
  return namespaces.flatMap((namespace) => [...new Set(view.modulesIn(namespace).map((key) => key.split('/')[1]!))].map((name) => ({ namespace, name })));
}

/**
 * The mirror's truth: each module's state (with its own ledger records, and
 * one for a module whose every version was removed, so its records stay) and
 * the root, last. The root is replaced even with its own bytes: its new stamp
 * tells a running server to load the mirror again. `staged` modules' states
 * are written already, their records in them.
 */
async function writeManifest(
  staging: Staging,
  sorted: ModuleRecord[],
  head: Omit<Manifest, 'modules'>,
  deprecations: Deprecations,
  staged: ReadonlySet<string>,
): Promise<void> {
  const { forced = [], removed = [], ...root } = head;
  const { byModule: ledgers, rootRemoved } = ledgersByModule({ forced, removed });
  const written = new Set<string>();
  for (const r of sorted) {
    const key = addressKey(r.address);
    written.add(key);
    await writeModuleState(staging, r, deprecations[key] ?? {}, ledgers.get(key));
  }
  for (const key of [...ledgers.keys()].sort()) {
    if (written.has(key) || staged.has(key)) continue;
    await staging.write(moduleStateFile(key), jsonText(moduleState(key, [], undefined, ledgers.get(key))));
  }
  await staging.writeChunks(MANIFEST_FILE, [jsonText({ ...root, ...(rootRemoved.length > 0 ? { removed: rootRemoved } : {}) })]);
}

/** A module's ledger records. */
export interface ModuleLedger {
  forced: ForcedReplacement[];
  removed: Removal[];
}

/** The ledger's records by module, in their order, and the removals of no module (providers'), which the root keeps. */
export function ledgersByModule(ledger: Ledger): { byModule: Map<string, ModuleLedger>; rootRemoved: Removal[] } {
  const byModule = new Map<string, ModuleLedger>();
  const ledgerOf = (key: string) => byModule.get(key) ?? byModule.set(key, { forced: [], removed: [] }).get(key)!;
  const rootRemoved: Removal[] = [];
  for (const f of ledger.forced ?? []) ledgerOf(f.module).forced.push(f);
  for (const r of ledger.removed ?? []) {
    if (r.module === undefined) rootRemoved.push(r);
    else ledgerOf(r.module).removed.push(r);
  }
  return { byModule, rootRemoved };
}

/** One module's state, from its record: what a build writes as soon as the module's last version is done. */
export function writeModuleState(
  staging: Staging,
  record: ModuleRecord,
  deprecations: Record<string, Deprecation>,
  ledger: ModuleLedger | undefined,
): Promise<void> {
  const key = addressKey(record.address);
  return staging.write(moduleStateFile(key), jsonText(moduleState(key, [...manifestVersions(record, deprecations)], record.latest, ledger, record.calls)));
}

function moduleState(
  key: string,
  versions: ManifestVersion[],
  latest: ModuleSummary | undefined,
  ledger: ModuleLedger | undefined,
  calls?: string[],
): ModuleState {
  return {
    format: MANIFEST_FORMAT,
    module: key,
    versions,
    ...(latest ? { latest } : {}),
    ...(calls?.length ? { calls } : {}),
    ...(ledger?.forced.length ? { forced: ledger.forced } : {}),
    ...(ledger?.removed.length ? { removed: ledger.removed } : {}),
  };
}

/** A module's manifest entries, made as the manifest is written, each with its deprecation (the write's, not the record's). */
function* manifestVersions(record: ModuleRecord, deprecations: Record<string, Deprecation>): Generator<ManifestVersion> {
  for (const { version, tag, sha256, size, published_at } of record.versions) {
    const deprecation = deprecations[version];
    yield { version, tag, archive: archiveFile(record.address, version), sha256, size, published_at, ...(deprecation ? { deprecation } : {}) };
  }
}

export function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    let list = groups.get(k);
    if (!list) groups.set(k, (list = []));
    list.push(item);
  }
  return groups;
}

/**
 * The registry modules a version's root and submodules call (`ns/name/provider`,
 * lower case, itself left out), whatever host they name: the browse page lists
 * a module's callers among the mirror's modules from them, so a write of one
 * module keeps them in its own state rather than reading the others'.
 */
export function registryCalls(address: ModuleAddress, content: VersionsDocumentContent): string[] {
  const self = addressKey(address).toLowerCase();
  const found = new Set<string>();
  for (const m of [content.root, ...content.submodules]) {
    for (const call of m.moduleCalls) {
      const source = parseModuleSource(call.source);
      if (source.kind !== 'registry') continue;
      const key = addressKey(source.address).toLowerCase();
      if (key !== self) found.add(key);
    }
  }
  return [...found].sort();
}
