// `modmirror verify`: checks that a mirror agrees with itself. Every
// versions file, detail, listing, search entry and versions index entry agree
// with the manifest; every download location resolves to an archive in the
// tree whose sha256 and size match; every JSON file parses and has the spec's
// fields.

import { readProvenance } from '../emit/provenance.js';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { latestVersion } from '../version-order.js';
import { moduleStateFile, readManifestAt, readManifestFile, readModuleStateFile, type Manifest, type ModuleState } from '../mirror/manifest.js';
import { firstListed, listedSummary, listingOf, type ModuleListing, type ModulesView } from '../mirror/view.js';
import {
  addressKey,
  archiveFile,
  basePathOfModulesService,
  DISCOVERY_FILE,
  downloadFile,
  downloadsSummaryFile,
  latestDetailFile,
  LIST_DEFAULT_LIMIT,
  listingFile,
  MANIFEST_FILE,
  MODULES_BASE,
  parseAddressKey,
  providersListingFile,
  SEARCH_INDEX_FILE,
  versionDetailFile,
  versionsFile,
  VERSIONS_INDEX_FILE,
  provenanceFile,
} from '../protocol/paths.js';
import { versionsIndexOf, type VersionsIndex } from '../mirror/versions-index.js';
import { CONTENT_FIELDS, DETAIL_FIELDS, SUMMARY_FIELDS, type FieldType, type ModuleSummary } from '../protocol/documents.js';
import { BROWSE_ASSET_FILES, BROWSE_INDEX_FILE } from '../browse/index.js';
import { verifyBrowsePages } from './browse.js';
import type { ModuleAddress } from '../types.js';
import { verifyProviders } from '../providers/verify.js';
import { DEPRECATIONS_FILE, deprecationsOf, deprecationsText, readDeprecationsFile, type Deprecations } from '../mirror/deprecations.js';
import { messageOf } from '../errors.js';
import { treeView, type MirrorView, type Problem } from '../mirror/transaction.js';

export type { Problem };

export interface VerifyOptions {
  /** Check only these modules (`ns/name/provider`) and the indexes; default every module and every file. */
  modules?: string[];
  /** Hash every archive (default true). */
  hashArchives?: boolean;
  /** With `modules`, check the providers too (a provider publish). */
  providers?: boolean;
  /** Details the writer checked as it wrote them (WrittenDetails): each is then checked on disk by its size, not read back. */
  written?: WrittenDetails;
}

/**
 * What a build knows of the detail documents it wrote, so verify need not
 * read them back (a history's details are tens of megabytes of README text
 * that parsing back only proves JSON.stringify wrote JSON). Each document is
 * checked for the protocol's fields and its id as it is written; what is kept
 * is its size on disk and the few values verify compares with the manifest,
 * held by module and version so that a build of 100,000 versions keeps no
 * path or id string per detail.
 */
export class WrittenDetails {
  private readonly modules = new Map<string, { versions: Map<string, WrittenDetail>; own?: ModuleDetail }>();

  /** A DetailListener (emit/index.ts). */
  readonly add = (address: ModuleAddress, version: string, doc: object, text: string, ofModule: boolean): void => {
    const key = addressKey(address);
    let module = this.modules.get(key);
    if (!module) this.modules.set(key, (module = { versions: new Map() }));
    const size = Buffer.byteLength(text);
    if (ofModule) {
      module.own = { size, copyOf: version };
      return;
    }
    const detail = doc as Json;
    const rel = versionDetailFile(address, version);
    const problems: Problem[] = [];
    const problem = (path: string, message: string) => problems.push({ path, message });
    checkDetailFields(detail, rel, problem);
    checkDetailId(detail, key, version, rel, problem);
    const { published_at, versions, deprecation } = detail;
    module.versions.set(version, { size, published_at, versions, deprecation, ...(problems.length > 0 ? { problems } : {}) });
  };

  /** A version's detail, as written. */
  version(key: string, version: string): WrittenDetail | undefined {
    return this.modules.get(key)?.versions.get(version);
  }

  /** The module's own detail, as written: the very text of version `copyOf`'s. */
  moduleDetail(key: string): ModuleDetail | undefined {
    return this.modules.get(key)?.own;
  }
}

interface WrittenDetail {
  size: number;
  published_at: unknown;
  versions: unknown;
  deprecation: unknown;
  problems?: Problem[];
}

interface ModuleDetail {
  size: number;
  copyOf: string;
}

type Json = Record<string, unknown>;

/** Checks the mirror in folder `dir`, or the one a view shows (a change before it is applied: only some modules, `options.modules`). */
export async function verifyMirror(dir: string | MirrorView, options: VerifyOptions = {}): Promise<Problem[]> {
  const mirror = typeof dir === 'string' ? treeView(dir) : dir;
  const at = (rel: string) => mirror.at(rel);
  const problems: Problem[] = [];
  const problem = (path: string, message: string) => problems.push({ path, message });
  // Paths read so far, not their contents: a mirror of 100,000 versions must not be held in memory at once.
  // A version's own files are read once each and are known from the manifest (versionFileCheck), so only
  // the few files of each module and the indexes are remembered here.
  const checked = new Set<string>();
  const json = async (rel: string, once = false): Promise<Json | undefined> => {
    let value: Json | undefined;
    try {
      // Read synchronously: mirror documents are small, and a promise-based read is four round trips through the thread pool.
      value = JSON.parse(readFileSync(at(rel), 'utf8')) as Json;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (!checked.has(rel)) problem(rel, code === 'ENOENT' ? 'missing' : `does not parse: ${(error as Error).message}`);
    }
    if (!once) checked.add(rel);
    return value;
  };

  if (!existsSync(at(MANIFEST_FILE))) return [{ path: MANIFEST_FILE, message: 'missing: this is not a built mirror' }];
  let manifest: Manifest;
  // A whole mirror of per-module states is read a state at a time, each checked as it is read: of every
  // version, only its name is held past its module (what the listings and the walk over every file need).
  let lazy: boolean;
  try {
    const root = readManifestFile(at(MANIFEST_FILE))!;
    lazy = root.format >= 3 && options.modules === undefined;
    manifest = lazy ? { ...root, modules: {} } : readManifestAt(at, () => mirror.modules())!;
  } catch (error) {
    return [{ path: MANIFEST_FILE, message: `does not parse: ${messageOf((error as { cause?: unknown }).cause ?? error)}` }];
  }
  const discovery = await json(DISCOVERY_FILE);
  const modulesV1 = discovery?.['modules.v1'];
  if (discovery && typeof modulesV1 !== 'string') problem(DISCOVERY_FILE, 'has no "modules.v1" string');
  const basePath = typeof modulesV1 === 'string' ? basePathOfModulesService(modulesV1) : '/';

  const keys = options.modules ?? (lazy ? [...new Set(mirror.modules())].sort() : Object.keys(manifest.modules));
  // A mirror with the browse page has all of it: without markdown-it's file, say, it would show no README.
  if (existsSync(at(BROWSE_INDEX_FILE))) {
    for (const file of BROWSE_ASSET_FILES) if (!existsSync(at(file))) problem(file, 'missing: the browse page needs it');
  }
  const deprecations = manifest.format >= 3 ? deprecationsOf(manifest) : verifyOlderDeprecations(manifest, at, problem);
  const held = new Map<string, HeldModule>();
  // A state read, or undefined, its problem said once, when it does not parse.
  const readState = (key: string) => {
    const rel = moduleStateFile(key);
    try {
      return readModuleStateFile(at(rel), key);
    } catch (error) {
      if (!checked.has(rel)) problem(rel, `does not parse: ${messageOf((error as { cause?: unknown }).cause ?? error)}`);
      return undefined;
    } finally {
      checked.add(rel);
    }
  };
  for (const key of keys) {
    const entry = lazy ? readState(key) : manifest.modules[key];
    if (!entry) {
      if (!lazy) problem(MANIFEST_FILE, `has no module ${key}`);
      continue;
    }
    held.set(key, { listing: listingOf(entry), versions: entry.versions.map((v) => v.version) });
    if (entry.versions.length === 0) {
      // Every version removed: the state keeps the removals on record, and the mirror serves nothing of the module.
      const rel = versionsFile(parseAddressKey(key));
      if (existsSync(at(rel))) problem(rel, 'is there, but the module state lists no versions');
      continue;
    }
    if (lazy) Object.assign(deprecations, deprecationsOf({ modules: { [key]: entry } }));
    await verifyModule(key, entry.versions, {
      at,
      json,
      problem,
      basePath,
      hashArchives: options.hashArchives ?? true,
      deprecations,
      written: options.written,
      seen: (rel) => checked.add(rel),
    });
  }
  if (manifest.format >= 3) await verifyListings(held, readState, keys, mirror, { json, problem }, options.modules === undefined);
  else await verifyIndexes(manifest, keys, { json, problem });
  if (options.modules === undefined || options.providers === true) {
    await verifyProviders(manifest, { at, json: (rel) => json(rel), problem, hashArchives: options.hashArchives ?? true, basePath });
  }
  if (options.modules === undefined) {
    // Every file is walked only in a whole folder; a change in place is checked by the modules it touches.
    if (mirror.root === undefined) throw new Error("verifyMirror: a check of every file needs the mirror's folder");
    const isVersionFile = versionFileCheck(held);
    verifyEveryJsonFile(mirror.root, (path) => checked.has(path) || isVersionFile(path), problem);
  }
  return problems;
}

/**
 * Whether `path` is a version's detail or download file, which verifyModule
 * reads for every version in the manifest. The walk goes a folder at a time,
 * so the versions of the module it is in are kept for the next question.
 */
function versionFileCheck(held: Map<string, HeldModule>): (path: string) => boolean {
  let last: { key: string; versions: Set<string> } | undefined;
  const versionsOf = (key: string) => {
    if (last?.key !== key) last = { key, versions: new Set(held.get(key)?.versions) };
    return last.versions;
  };
  return (path) => {
    if (!path.startsWith(MODULES_BASE) || !(path.endsWith('/index.json') || path.endsWith('/download'))) return false;
    const parts = path.slice(MODULES_BASE.length).split('/');
    if (parts.length !== 5) return false;
    const [namespace = '', name = '', provider = '', version = '', file] = parts;
    if (!versionsOf(`${namespace}/${name}/${provider}`).has(version)) return false;
    const address = { namespace, name, provider };
    return path === (file === 'download' ? downloadFile(address, version) : versionDetailFile(address, version));
  };
}

/** What verify keeps of a module once it is checked: what listings show of it, and its versions' names. */
interface HeldModule {
  listing: ModuleListing;
  versions: string[];
}

interface Context {
  /** Where each file of the mirror is. */
  at: (rel: string) => string;
  /** `once`: a version's own file, read only once and known from the manifest, so not remembered. */
  json: (rel: string, once?: boolean) => Promise<Json | undefined>;
  problem: (path: string, message: string) => void;
  basePath: string;
  hashArchives: boolean;
  /** The manifest's (a format-1 manifest: deprecations.json's): what each version's `deprecation` in `versions` and in its detail must say. */
  deprecations: Deprecations;
  written: WrittenDetails | undefined;
  /** Marks a file as checked, so the walk over every file does not read it again. */
  seen: (rel: string) => void;
}

/** A document's `deprecation` must be the one the mirror records, or absent when it records none. */
function checkDeprecation(shown: unknown, recorded: unknown, rel: string, where: string, problem: Context['problem']): void {
  if (JSON.stringify(shown ?? null) === JSON.stringify(recorded ?? null)) return;
  problem(rel, `${where}deprecation ${JSON.stringify(shown ?? null)} differs from the recorded ${JSON.stringify(recorded ?? null)}`);
}

/** A detail's own fields, and each of its contents' (root, submodules, examples). */
function checkDetailFields(detail: Json, rel: string, problem: Context['problem']): void {
  checkFields(detail, DETAIL_FIELDS, rel, '', problem);
  const contents = [detail['root'], ...((detail['submodules'] as unknown[]) ?? []), ...((detail['examples'] as unknown[]) ?? [])];
  contents.forEach((c, i) => {
    if (typeof c === 'object' && c !== null) checkFields(c as Json, CONTENT_FIELDS, rel, i === 0 ? 'root.' : `module content ${i}: `, problem);
  });
}

/**
 * Whether a file is the size the writer wrote (WrittenDetails); says so when
 * it is not. The writer checked its content as it wrote it.
 */
function sizeAsWritten(rel: string, written: { size: number }, ctx: Context): boolean {
  let size: number | undefined;
  try {
    size = statSync(ctx.at(rel)).size;
  } catch {
    size = undefined;
  }
  if (size === written.size) return true;
  ctx.problem(rel, size === undefined ? 'missing' : `is ${size} bytes, not the ${written.size} the build wrote`);
  return false;
}

function checkDetailId(detail: Json, key: string, version: string, rel: string, problem: Context['problem']): void {
  if (detail['id'] !== `${key}/${version}`) problem(rel, `id is ${JSON.stringify(detail['id'])}, expected "${key}/${version}"`);
}

function checkFields(doc: Json, fields: Record<string, FieldType>, rel: string, where: string, problem: Context['problem']): void {
  for (const [name, type] of Object.entries(fields)) {
    const value = doc[name];
    const ok = type === 'array' ? Array.isArray(value) : typeof value === type && (type !== 'number' || Number.isInteger(value));
    if (!ok) problem(rel, `${where}${name}: expected ${type === 'number' ? 'an integer' : `a ${type}`}, got ${JSON.stringify(value)}`);
  }
}

const sameList = (a: unknown, b: string[]) => Array.isArray(a) && a.length === b.length && a.every((v, i) => v === b[i]);

async function verifyModule(key: string, entries: Manifest['modules'][string]['versions'], ctx: Context): Promise<void> {
  const { json, problem } = ctx;
  const [namespace = '', name = '', provider = ''] = key.split('/');
  const address: ModuleAddress = { namespace, name, provider };
  const versions = entries.map((e) => e.version);

  const versionsRel = versionsFile(address);
  const versionsDoc = await json(versionsRel);
  const listed = (versionsDoc?.['modules'] as { source?: string; versions?: { version?: string }[] }[] | undefined)?.[0];
  if (versionsDoc && (!listed || listed.source !== key)) problem(versionsRel, `modules[0].source should be ${key}`);
  else if (
    listed &&
    !sameList(
      listed.versions?.map((v) => v.version),
      versions,
    )
  ) {
    problem(versionsRel, `lists versions ${JSON.stringify(listed.versions?.map((v) => v.version))}, the manifest ${JSON.stringify(versions)}`);
  }
  const deprecated = ctx.deprecations[key] ?? {};
  for (const v of (listed?.versions ?? []) as { version?: string; deprecation?: unknown }[]) {
    checkDeprecation(v.deprecation, deprecated[v.version ?? ''], versionsRel, `version ${v.version}: `, problem);
  }

  const latest = latestVersion(versions);
  // Only the latest's detail is kept (to compare with the latest document): a module's details can be a hundred megabytes.
  let latestDetail: Json | undefined;
  // What each detail must agree on with the manifest, read back or as written.
  const checkAgainstManifest = (
    detail: { published_at?: unknown; versions?: unknown; deprecation?: unknown },
    entry: (typeof entries)[number],
    rel: string,
  ) => {
    if (detail.published_at !== entry.published_at)
      problem(rel, `published_at ${JSON.stringify(detail.published_at)} differs from the manifest's ${entry.published_at}`);
    if (!sameList(detail.versions, versions)) problem(rel, 'versions differ from the manifest');
    checkDeprecation(detail.deprecation, deprecated[entry.version], rel, '', problem);
  };
  for (const entry of entries) {
    const rel = versionDetailFile(address, entry.version);
    const written = ctx.written?.version(key, entry.version);
    if (written) {
      if (sizeAsWritten(rel, written, ctx)) {
        for (const p of written.problems ?? []) problem(p.path, p.message);
        checkAgainstManifest(written, entry, rel);
      }
    } else {
      const detail = await json(rel, true);
      if (detail) {
        if (entry.version === latest) latestDetail = detail;
        checkDetailFields(detail, rel, problem);
        checkDetailId(detail, key, entry.version, rel, problem);
        checkAgainstManifest(detail, entry, rel);
      }
    }
    await verifyDownload(address, entry, ctx);
  }

  const latestRel = latestDetailFile(address);
  const latestWritten = ctx.written?.moduleDetail(key);
  if (latestWritten !== undefined) {
    ctx.seen(latestRel);
    // Written as the very text of the latest version's detail, and that one is checked above.
    if (sizeAsWritten(latestRel, latestWritten, ctx) && latestWritten.copyOf !== latest)
      problem(latestRel, `is not the detail of the latest version ${latest}`);
  } else {
    latestDetail ??= latest === undefined ? undefined : await json(versionDetailFile(address, latest), true);
    const latestDoc = await json(latestRel);
    if (latest !== undefined && latestDoc && JSON.stringify(latestDoc) !== JSON.stringify(latestDetail)) {
      problem(latestRel, `is not the detail of the latest version ${latest}`);
    }
  }
  const summary = await json(downloadsSummaryFile(address));
  if (summary && (summary['data'] as Json | undefined)?.['type'] !== 'module-downloads-summary') {
    problem(downloadsSummaryFile(address), 'data.type should be module-downloads-summary');
  }
}

async function verifyDownload(address: ModuleAddress, entry: Manifest['modules'][string]['versions'][number], ctx: Context): Promise<void> {
  const rel = downloadFile(address, entry.version);
  const doc = await ctx.json(rel, true);
  if (!doc) return;
  const location = doc['location'];
  if (typeof location !== 'string') {
    ctx.problem(rel, 'has no "location" string');
    return;
  }
  // Resolve the way a client does: relative to the download URL, under the mirror's base path.
  const resolved = new URL(location, new URL(`${ctx.basePath}${rel}`, 'http://mirror/'));
  const archiveRel = decodeURIComponent(resolved.pathname).slice(ctx.basePath.length);
  if (archiveRel !== entry.archive || entry.archive !== archiveFile(address, entry.version)) {
    ctx.problem(rel, `location ${location} resolves to ${archiveRel}, the manifest says ${entry.archive}`);
    return;
  }
  // Without hashing, the size on disk is all that is compared: the bytes need not be read.
  let data: Buffer | undefined;
  let size: number;
  try {
    // Read synchronously, as every document here is: a promise-based read is round trips through the thread pool.
    if (ctx.hashArchives) size = (data = readFileSync(ctx.at(archiveRel))).length;
    else size = statSync(ctx.at(archiveRel)).size;
  } catch {
    ctx.problem(archiveRel, 'missing: the download location points at no archive');
    return;
  }
  if (size !== entry.size) ctx.problem(archiveRel, `size ${size} differs from the manifest's ${entry.size}`);
  if (data) {
    const sha256 = createHash('sha256').update(data).digest('hex');
    if (sha256 !== entry.sha256) ctx.problem(archiveRel, `sha256 ${sha256} differs from the manifest's ${entry.sha256}`);
    verifyProvenance(archiveRel, entry.sha256, ctx);
  }
}

/** A version's provenance, when it has one, must be of its archive: the subject's name and sha256. */
function verifyProvenance(archiveRel: string, sha256: string, ctx: Context): void {
  const rel = provenanceFile(archiveRel);
  let text: string;
  try {
    text = readFileSync(ctx.at(rel), 'utf8');
  } catch {
    return;
  }
  const read = readProvenance(text);
  if (typeof read === 'string') return ctx.problem(rel, `is not a provenance statement: ${read}`);
  if (read.subject.name !== basename(archiveRel)) ctx.problem(rel, `is the provenance of ${read.subject.name}, not of ${basename(archiveRel)}`);
  else if (read.subject.sha256 !== sha256)
    ctx.problem(rel, `its subject's sha256 ${read.subject.sha256} is not the archive's ${sha256}: it is not the provenance of this archive`);
}

/** A mirror older than format 3: deprecations.json, which its manifest may record too (format 2). */
function verifyOlderDeprecations(manifest: Manifest, at: (rel: string) => string, problem: Context['problem']): Deprecations {
  let deprecations: Deprecations;
  let derived: Deprecations = {};
  try {
    derived = readDeprecationsFile(at(DEPRECATIONS_FILE));
  } catch (error) {
    problem(DEPRECATIONS_FILE, messageOf(error));
  }
  if (manifest.format >= 2) {
    // The manifest records them; deprecations.json is derived from it.
    deprecations = deprecationsOf(manifest);
    const versionsByModule = Object.entries(manifest.modules).map(([key, e]): [string, string[]] => [key, e.versions.map((v) => v.version)]);
    if (existsSync(at(DEPRECATIONS_FILE)) && readFileSync(at(DEPRECATIONS_FILE), 'utf8') !== deprecationsText(deprecations, versionsByModule))
      problem(DEPRECATIONS_FILE, 'differs from the deprecations the manifest records');
  } else deprecations = derived;
  for (const [key, versions] of Object.entries(deprecations)) {
    for (const version of Object.keys(versions)) {
      if (!manifest.modules[key]?.versions.some((v) => v.version === version))
        problem(DEPRECATIONS_FILE, `deprecates ${key} ${version}, which the manifest does not list`);
    }
  }
  return deprecations;
}

/**
 * Format 3: each module's state agrees with its latest detail, and the
 * listings' first pages and the browse page's files that show `keys` (every
 * one of them, for a whole mirror) list what the states say.
 */
async function verifyListings(
  held: Map<string, HeldModule>,
  readState: (key: string) => ModuleState | undefined,
  keys: string[],
  mirror: MirrorView,
  ctx: Pick<Context, 'json' | 'problem'>,
  whole: boolean,
): Promise<void> {
  const { json, problem } = ctx;
  const view: ModulesView = {
    namespaces: mirror.namespaces,
    modulesIn: mirror.modulesIn,
    listing: (key) => {
      const known = held.get(key)?.listing;
      if (known) return known;
      const state = readState(key);
      return state && listingOf(state);
    },
    rewritten: () => false,
  };
  for (const key of keys) {
    const listing = held.get(key)?.listing;
    const recorded = listing?.latest;
    if (!recorded || listing.versions === 0) continue;
    const latest = await json(latestDetailFile(parseAddressKey(key)));
    if (!latest) continue;
    for (const field of Object.keys(SUMMARY_FIELDS)) {
      const value = (recorded as unknown as Json)[field];
      if (value !== latest[field])
        problem(moduleStateFile(key), `latest ${field} ${JSON.stringify(value)} differs from its latest detail's ${JSON.stringify(latest[field])}`);
    }
  }
  const namespaces = whole ? view.namespaces() : [...new Set(keys.map((k) => k.slice(0, k.indexOf('/'))))];
  const listed = (modules: string[]) => modules.map((key) => listedSummary(view, key)).filter((s) => s !== undefined);
  const checkListing = async (rel: string, expected: ModuleSummary[]) => {
    const doc = await json(rel);
    if (!doc) return;
    const shown = ((doc['modules'] as Json[] | undefined) ?? []).map((m) => m['id']);
    if (
      !sameList(
        shown,
        expected.slice(0, LIST_DEFAULT_LIMIT).map((s) => s.id),
      )
    )
      problem(rel, 'disagrees with the module states');
    const meta = doc['meta'] as Json | undefined;
    if (meta?.['limit'] !== LIST_DEFAULT_LIMIT || meta?.['current_offset'] !== 0) problem(rel, 'meta should have limit and current_offset 0');
    if (expected.length > LIST_DEFAULT_LIMIT !== (meta?.['next_offset'] !== undefined)) problem(rel, 'meta.next_offset disagrees with the number of modules');
  };
  const first = firstListed(view, view.namespaces());
  await checkListing(listingFile(), first);
  const browse = existsSync(mirror.at(BROWSE_INDEX_FILE)) ? await json(BROWSE_INDEX_FILE) : undefined;
  for (const namespace of namespaces) {
    const modules = view.modulesIn(namespace);
    const summaries = whole ? listed(modules) : firstListed(view, [namespace]);
    if (summaries.length === 0) continue;
    await checkListing(listingFile(namespace), summaries);
    const names = new Set((whole ? modules : keys.filter((k) => k.startsWith(`${namespace}/`))).map((k) => k.split('/')[1]!));
    for (const name of names) {
      // A name whose every version was removed keeps its states, and has no listing.
      const providers = listed(modules.filter((k) => k.startsWith(`${namespace}/${name}/`)));
      if (providers.length > 0) await checkListing(providersListingFile(namespace, name), providers);
    }
    if (!browse || !Array.isArray(browse['namespaces'])) continue;
    if (!(browse['namespaces'] as unknown[]).includes(namespace)) problem(BROWSE_INDEX_FILE, `does not list the namespace ${namespace}`);
    await verifyBrowsePages(namespace, view, whole ? undefined : keys, { at: mirror.at, json, problem });
  }
}

async function verifyIndexes(manifest: Manifest, keys: string[], ctx: Pick<Context, 'json' | 'problem'>): Promise<void> {
  const { json, problem } = ctx;
  const search = await json(SEARCH_INDEX_FILE);
  const summaries = (search?.['modules'] as Json[] | undefined) ?? [];
  if (search && !Array.isArray(search['modules'])) problem(SEARCH_INDEX_FILE, 'has no "modules" list');
  const indexed = new Map(summaries.map((s) => [`${String(s['namespace'])}/${String(s['name'])}/${String(s['provider'])}`, s]));
  const manifestKeys = Object.keys(manifest.modules).sort();
  if (search && !sameList([...indexed.keys()].sort(), manifestKeys)) problem(SEARCH_INDEX_FILE, 'does not list the same modules as the manifest');

  for (const key of keys) {
    const [namespace = '', name = '', provider = ''] = key.split('/');
    const latest = await json(latestDetailFile({ namespace, name, provider }));
    const entry = indexed.get(key);
    const recorded = manifest.modules[key]?.latest;
    if (recorded && entry && JSON.stringify(recorded) !== JSON.stringify(entry)) problem(SEARCH_INDEX_FILE, `${key}: differs from the manifest's summary`);
    if (!latest || !entry) continue;
    for (const field of Object.keys(SUMMARY_FIELDS)) {
      if (entry[field] !== latest[field])
        problem(SEARCH_INDEX_FILE, `${key}: ${field} ${JSON.stringify(entry[field])} differs from its latest detail's ${JSON.stringify(latest[field])}`);
    }
  }

  await verifyVersionsIndex(manifest, keys, ctx);

  const ids = (list: Json[]) => list.map((s) => s['id']);
  const checkListing = async (rel: string, expected: Json[]) => {
    const doc = await json(rel);
    if (!doc) return;
    const shown = (doc['modules'] as Json[] | undefined) ?? [];
    if (!sameList(ids(shown), ids(expected.slice(0, LIST_DEFAULT_LIMIT)) as string[])) problem(rel, 'disagrees with the search index');
    const meta = doc['meta'] as Json | undefined;
    if (meta?.['limit'] !== LIST_DEFAULT_LIMIT || meta?.['current_offset'] !== 0) problem(rel, 'meta should have limit and current_offset 0');
    if (expected.length > LIST_DEFAULT_LIMIT !== (meta?.['next_offset'] !== undefined)) problem(rel, 'meta.next_offset disagrees with the number of modules');
  };
  await checkListing(listingFile(), summaries);
  const namespaces = new Set(keys.map((k) => k.split('/')[0]!));
  for (const ns of namespaces)
    await checkListing(
      listingFile(ns),
      summaries.filter((s) => s['namespace'] === ns),
    );
  const names = new Set(keys.map((k) => k.split('/').slice(0, 2).join('/')));
  for (const nn of names) {
    const [ns = '', n = ''] = nn.split('/');
    await checkListing(
      providersListingFile(ns, n),
      summaries.filter((s) => s['namespace'] === ns && s['name'] === n),
    );
  }
}

/** The server answers from the versions index, so it must list what the manifest lists, in its order. */
async function verifyVersionsIndex(manifest: Manifest, keys: string[], ctx: Pick<Context, 'json' | 'problem'>): Promise<void> {
  const doc = await ctx.json(VERSIONS_INDEX_FILE);
  if (!doc) return;
  let index: VersionsIndex;
  try {
    index = versionsIndexOf(doc);
  } catch (error) {
    ctx.problem(VERSIONS_INDEX_FILE, (error as Error).message);
    return;
  }
  if (!sameList([...index.keys()].sort(), Object.keys(manifest.modules).sort()))
    ctx.problem(VERSIONS_INDEX_FILE, 'does not list the same modules as the manifest');
  for (const key of keys) {
    const listed = index.get(key);
    const versions = manifest.modules[key]?.versions.map((v) => v.version) ?? [];
    if (listed && !sameList(listed, versions))
      ctx.problem(VERSIONS_INDEX_FILE, `${key}: lists versions ${JSON.stringify(listed)}, the manifest ${JSON.stringify(versions)}`);
  }
}

function verifyEveryJsonFile(dir: string, checked: (path: string) => boolean, problem: Context['problem']): void {
  // Walked folder by folder rather than listed whole: a large mirror has hundreds of thousands of files.
  // Synchronously: an asynchronous walk waits on the thread pool for every folder (8 of the 11 s a
  // 20,000-version build spent verifying), and a folder holds few enough entries to list at once.
  const walk = (rel: string): void => {
    for (const entry of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const path = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (
        entry.isFile() &&
        !/\.(tar\.gz|zip|html|js|css|json\.asc)$|_SHA256SUMS(\.sig)?$/.test(entry.name) &&
        entry.name !== '_headers' &&
        !checked(path)
      ) {
        try {
          JSON.parse(readFileSync(join(dir, path), 'utf8'));
        } catch (error) {
          problem(path, `does not parse: ${(error as Error).message}`);
        }
      }
    }
  };
  walk('');
}
