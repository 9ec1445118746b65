// The one way to open a built mirror: its manifest, base URL, deprecations
// and records, each read once, all from the manifest (the mirror's truth);
// and its documents read back into the records emit writes from, so a
// writer can rewrite one module with the same functions a build uses (and
// so give the same bytes a clean build would). Nothing here reads a derived
// document (search index, listings, deprecations.json) as truth, except to
// upgrade a format-1 manifest, which lacks what they hold.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BuiltVersion, ExtractedVersion, ModuleAddress, ModuleContent } from '../types.js';
import { moduleSummary, type ModuleSummary } from '../protocol/documents.js';
import { readDeprecations, type Deprecations } from './deprecations.js';
import { MANIFEST_FORMAT, moduleStatesIn, readManifest, type Manifest, type ManifestVersion, type ModuleRecord, type RecentVersion } from './manifest.js';
import { GENERATOR } from '../version.js';
import { latestVersion } from '../version-order.js';
import { addressKey, baseUrlOfModulesService, DISCOVERY_FILE, parseAddressKey, versionDetailFile } from '../protocol/paths.js';

export interface OpenedMirror {
  dir: string;
  /** False when `dir` holds no mirror yet: the manifest is then an empty one. */
  exists: boolean;
  manifest: Manifest;
  /** Its own base URL; undefined for a new mirror (the writer's config gives one). */
  baseUrl: string | undefined;
  deprecations: Deprecations;
  /** The record of every module the manifest was read with (a write reads part of the mirror), read on first use. */
  records(): ModuleRecord[];
  /** The providers a module name exists for in the mirror, sorted: a detail document lists them. */
  providersOf(namespace: string, name: string): string[];
  /**
   * What a write of some modules needs of the rest of the mirror (writeMirrorIndexes' `live`); undefined
   * when there is no mirror yet, or its manifest is older than format 3 and the write rewrites it whole.
   */
  live: { dir: string; recent: RecentVersion[] | undefined } | undefined;
}

/** `read` gives the mirror's manifest: a write passes the live one it has read once (MirrorWrite.live). */
export function openMirror(dir: string, read: () => Manifest | undefined = () => readManifest(dir)): OpenedMirror {
  const found = read();
  const manifest = found ?? { format: MANIFEST_FORMAT, generator: GENERATOR, modules: {} };
  let records: ModuleRecord[] | undefined;
  return {
    dir,
    exists: found !== undefined,
    manifest,
    baseUrl: found ? (found.base_url ?? readBaseUrl(dir)) : undefined,
    deprecations: readDeprecations(dir, found),
    records: () => (records ??= Object.keys(manifest.modules).length > 0 ? readRecords(dir, manifest) : []),
    providersOf: (namespace, name) => providersIn(dir, manifest, namespace, name),
    live: found && found.format >= 3 ? { dir, recent: found.recent } : undefined,
  };
}

/** The providers `namespace/name` has versions for: from the state folder, or an older manifest's modules. */
export function providersIn(dir: string, manifest: Manifest, namespace: string, name: string): string[] {
  const keys = manifest.format >= 3 ? moduleStatesIn(dir, namespace) : Object.keys(manifest.modules);
  return keys
    .map((k) => k.split('/'))
    .filter(([ns, n, p]) => ns === namespace && n === name && (manifest.format < 3 || (manifest.modules[`${ns}/${n}/${p}`]?.versions.length ?? 1) > 0))
    .map(([, , p]) => p!)
    .sort();
}

/** The modules of `namespace/name`, for every provider the mirror has a state for: a write of one reads them all. */
export function moduleFamily(dir: string, address: ModuleAddress): string[] {
  const prefix = `${address.namespace}/${address.name}/`;
  return [...new Set([...moduleStatesIn(dir, address.namespace).filter((k) => k.startsWith(prefix)), addressKey(address)])];
}

/** Each module of the manifest with its versions and latest summary, as emitIndexes takes them. */
export function readRecords(dir: string, manifest: Manifest): ModuleRecord[] {
  return Object.entries(manifest.modules)
    .filter(([, entry]) => entry.versions.length > 0)
    .map(([key, entry]) => {
      const address = parseAddressKey(key);
      return {
        address,
        latest: entry.latest ?? latestSummaryOf(dir, address, entry.versions),
        versions: entry.versions.map(({ archive: _archive, ...v }) => v),
        ...(entry.calls ? { calls: entry.calls } : {}),
      };
    });
}

/** A format-1 manifest's module has no summary: its latest version's detail says it, as emit made it. */
function latestSummaryOf(dir: string, address: ModuleAddress, versions: ManifestVersion[]): ModuleSummary {
  const latest = latestVersion(versions.map((v) => v.version))!;
  return moduleSummary(
    readBuiltVersion(
      dir,
      address,
      versions.find((v) => v.version === latest)!,
    ),
  );
}

interface ContentDocument {
  path: string;
  readme: string;
  empty: boolean;
  inputs: { name: string; type: string; description: string; default: string; required: boolean; sensitive: boolean; nullable: boolean }[];
  outputs: { name: string; description: string; sensitive: boolean }[];
  dependencies: { name: string; source: string; version: string }[];
  provider_dependencies: { name: string; namespace: string; source: string; version: string }[];
  resources: { name: string; type: string }[];
  data_sources: { name: string; type: string }[];
  required_version: string;
}

interface DetailDocument extends ModuleSummary {
  tag: string;
  root: ContentDocument;
  submodules: ContentDocument[];
  examples: ContentDocument[];
}

function contentOf(doc: ContentDocument): ModuleContent {
  return {
    path: doc.path,
    readme: doc.readme,
    empty: doc.empty,
    inputs: doc.inputs.map((i) => ({ ...i, default: i.required ? undefined : (JSON.parse(i.default) as unknown) })),
    outputs: doc.outputs,
    resources: doc.resources,
    dataSources: doc.data_sources,
    moduleCalls: doc.dependencies,
    providers: doc.provider_dependencies,
    requiredVersion: doc.required_version,
  };
}

/** Every version of one module, newest first, from its detail documents and the manifest. */
export async function readModuleVersions(dir: string, manifest: Manifest, address: ModuleAddress): Promise<BuiltVersion[]> {
  const key = `${address.namespace}/${address.name}/${address.provider}`;
  return (manifest.modules[key]?.versions ?? []).map((entry) => readBuiltVersion(dir, address, entry));
}

/**
 * One published version as a build would have made it, from its detail
 * document (its content) and manifest entry (its digest, and, as recorded, its
 * tag and date: the truth wins over a detail a racing writer left).
 */
export function readBuiltVersion(
  dir: string,
  address: ModuleAddress,
  entry: Pick<ManifestVersion, 'version' | 'sha256' | 'size'> & Partial<Pick<ManifestVersion, 'tag' | 'published_at'>>,
): BuiltVersion {
  const doc = JSON.parse(readFileSync(join(dir, versionDetailFile(address, entry.version)), 'utf8')) as DetailDocument;
  const content: ExtractedVersion = { root: contentOf(doc.root), submodules: doc.submodules.map(contentOf), examples: doc.examples.map(contentOf) };
  return {
    source: {
      address,
      meta: { owner: doc.owner, description: doc.description, source: doc.source, verified: doc.verified },
      version: entry.version,
      tag: entry.tag ?? doc.tag,
      publishedAt: new Date(entry.published_at ?? doc.published_at),
    },
    content,
    archive: { sha256: entry.sha256, size: entry.size },
    description: doc.description,
  } satisfies BuiltVersion;
}

/** A built mirror's base URL: '' when its locations are relative, undefined when it has no discovery document. */
export function readBaseUrl(dir: string): string | undefined {
  let modulesV1: unknown;
  try {
    modulesV1 = (JSON.parse(readFileSync(join(dir, DISCOVERY_FILE), 'utf8')) as Record<string, unknown>)['modules.v1'];
  } catch {
    return undefined;
  }
  if (typeof modulesV1 !== 'string') return undefined;
  return baseUrlOfModulesService(modulesV1);
}
