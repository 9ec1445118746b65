// `modmirror build`: scan -> (read, extract, pack) per version -> emit ->
// verify -> swap in. Versions run a few at a time; a module's documents are
// written as soon as its last version is done, so memory holds one module's
// contents at a time rather than the whole mirror. Unchanged versions come
// from the cache; unchanged sources leave the mirror as it is. What the
// mirror has published stays (published.ts).

import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { availableParallelism } from 'node:os';
import { OUTPUT_FORMAT } from './cache.js';
import type { ResolvedConfig } from '../config/index.js';
import { MirrorError } from '../errors.js';
import { readDeprecations } from '../mirror/deprecations.js';
import { createModuleWriter, groupBy, ledgersByModule, writeModuleState, type ModuleLedger } from '../emit/index.js';
import { providerArchivesOf, recentVersions, type Manifest, type ManifestVersion, type RecentVersion } from '../mirror/manifest.js';
import { readBuiltVersion } from '../mirror/read.js';
import { emitProviders } from '../providers/emit.js';
import { authenticateReleases, type ProviderRelease } from '../providers/release.js';
import { scanProviders, type ProviderScan } from '../providers/scan.js';
import { providerKey, type ProviderAddress } from '../protocol/providers.js';
import { writeMirrorIndexes } from '../emit/indexes.js';
import { writeProvenance } from '../emit/provenance.js';
import type { PrivateSigningKey } from '../openpgp/keys.js';
import { addressKey, archiveFile, parseAddressKey, provenanceFile } from '../protocol/paths.js';
import { buildVersion, closeVersionCaches, createVersionCaches, forModule, type VersionCaches } from './version.js';
import { recordBuild, upToDateReport, type BuildReport } from './state.js';
import { forEachLimited, takeEach } from '../concurrency.js';
import { scan } from '../scan/index.js';
import { problemLines, withMirrorWrite, type MirrorWrite, type MirrorWriteOptions } from '../mirror/transaction.js';
import type { BuildProblem, BuiltVersion, ModuleAddress, PartialVersion, VersionSource } from '../types.js';
import { compareVersionsDesc } from '../version-order.js';
import { GENERATOR } from '../version.js';
import { verifyMirror, WrittenDetails } from '../verify/index.js';
import { byVersion, keepPublished, warnAboutKept, type KeepOptions, type Published, type PublishedEntry } from './published.js';

export interface BuildResult {
  outDir: string;
  modules: number;
  versions: number;
  archives: number;
  /** Provider packages (zips) in the network mirror. */
  providerPackages: number;
  /** Provider zips hashed in this run (the others came from the hash cache), and their bytes. */
  providerHashing: { zips: number; bytes: number };
  /** The modules and versions this run built from their sources (from the cache or not); the rest of the mirror was kept as published. */
  built: { modules: number; versions: number };
  /** Versions taken from an earlier build's cache rather than extracted and packed. */
  cached: number;
  /** True when the sources had not changed since the mirror was built: nothing was written. */
  upToDate: boolean;
  warnings: string[];
  errors: BuildProblem[];
  /** Versions mirrored although some of their files could not be read (never with `strict`). */
  partial: PartialVersion[];
  seconds: number;
}

export interface BuildOptions extends KeepOptions {
  /** Ignore the cache and the up-to-date check: extract and pack every version again. */
  clean?: boolean;
  /** Leave out (and fail on) a version whose documentation cannot be read whole, rather than mirror it with what could be read. */
  strict?: boolean;
  onProgress?: (done: number, total: number, current: VersionSource) => void;
  /** Signs each new version's provenance (unsigned without). */
  signer?: PrivateSigningKey;
}

export function build(config: ResolvedConfig, options: BuildOptions = {}): Promise<BuildResult> {
  const written = new WrittenDetails();
  const write: MirrorWriteOptions = {
    // Archives were hashed as they were packed (or when cached), and details checked as they were written:
    // check their sizes here, not read their bytes again.
    check: (root) => verifyMirror(root, { hashArchives: false, written }),
    // Only what was asked for: --replace of named versions, --prune of what the sources lack; both go on record.
    allow: { replace: (options.replace?.length ?? 0) > 0 || options.replaceAll === true, remove: options.prune === true },
    ...(options.signer ? { signer: options.signer } : {}),
    failure: (problems) =>
      new MirrorError('MIRROR_INVALID', `The built mirror failed verification; the previous one is left in place:\n${problemLines(problems)}`, {
        hint: 'This is a bug in modmirror or a corrupted cache: run again with --clean, and report it if it persists.',
      }),
  };
  return withMirrorWrite(config.outDir, write, (tx) => buildLocked(tx, { ...config, outDir: tx.outDir }, options, written));
}

async function buildLocked(tx: MirrorWrite, config: ResolvedConfig, options: BuildOptions, written: WrittenDetails): Promise<BuildResult> {
  const started = performance.now();
  const plan = await planBuild(config, options, tx.live());
  const { warnings } = plan;
  if (plan.upToDate) {
    const { modules, versions, providerPackages, report } = plan.upToDate;
    warnings.push(...report.warnings);
    return {
      outDir: config.outDir,
      modules,
      versions,
      archives: versions,
      providerPackages,
      providerHashing: plan.providerHashing,
      built: { modules: 0, versions: 0 },
      cached: versions,
      upToDate: true,
      warnings,
      errors: [],
      partial: report.partial,
      seconds: (performance.now() - started) / 1000,
    };
  }

  const errors: BuildProblem[] = [...plan.published.errors];
  const partial: PartialVersion[] = [];
  const versionWarnings: string[] = [];
  const caches = createVersionCaches(config.cacheDir, { packThread: true, limits: config.limits });
  const versionOptions = { reuse: options.clean !== true, strict: options.strict === true };
  let cacheHits = 0;
  const built = { modules: 0, versions: 0 };
  const { total, providersByName, pendingByRepo, published } = plan;
  // Deprecations live in the mirror (deprecate writes them there); a rebuild keeps them.
  const deprecations = readDeprecations(config.outDir, tx.live());
  const staged = tx.stage(async (staging) => {
    // Each module's state is written as soon as its last version is done, and of its versions the build keeps
    // only a count and the most recent: so it never holds every version of a large mirror at once.
    const states = new Set<string>();
    let recent: RecentVersion[] = [];
    let modulesWritten = 0;
    let versionsWritten = 0;
    const ledgers = moduleLedgers(published.ledger, plan.forcedBefore);
    let done = 0;
    const buildOne = async (source: VersionSource, moduleCaches: VersionCaches): Promise<BuiltVersion | undefined> => {
      try {
        const version = await buildVersion(source, moduleCaches, versionOptions);
        const verdict = published.check(source, version.built.archive.sha256);
        if (verdict instanceof MirrorError) throw verdict;
        // Written once, into the cache, and linked into the mirror as a cache hit is.
        const archiveRel = archiveFile(source.address, source.version);
        await staging.linkFrom(await version.store(), archiveRel);
        await writeProvenance(staging, config.outDir, source, archiveRel, version.built.archive.sha256, verdict === 'same', options.signer);
        if (version.cached) cacheHits++;
        for (const w of version.warnings) versionWarnings.push(`${source.label}: ${w}`);
        if (version.problems.length > 0)
          partial.push({ module: addressKey(source.address), version: source.version, source: source.label, problems: version.problems });
        return version.built;
      } catch (error) {
        if (!(error instanceof MirrorError)) throw error;
        const where = `${addressKey(source.address)} ${source.version} (${source.label})`;
        errors.push({
          code: error.code,
          message: `${where}: ${error.message}${error.hint ? `\n  hint: ${error.hint}` : ''}`,
          where: source.label,
          module: addressKey(source.address),
          version: source.version,
          ...(error.code === 'HCL_SYNTAX' ? { syntax: error.message.split('\n') } : {}),
        });
        return undefined;
      } finally {
        options.onProgress?.(++done, total, source);
      }
    };

    // A version's published bytes stay: carried forward from the live mirror, documents and archive alike.
    const keep = async (address: ModuleAddress, entry: PublishedEntry) => {
      const archiveRel = archiveFile(address, entry.version);
      await staging.linkFrom(join(config.outDir, archiveRel), archiveRel);
      if (existsSync(join(config.outDir, provenanceFile(archiveRel))))
        await staging.linkFrom(join(config.outDir, provenanceFile(archiveRel)), provenanceFile(archiveRel));
      return readBuiltVersion(config.outDir, address, entry);
    };
    await forEachLimited(takeEach(plan.modules), MODULE_CONCURRENCY, async ({ address, sources, carried }) => {
      const providers = providersByName.get(`${address.namespace}/${address.name}`) ?? [];
      const planned = [...sources.map((v) => v.version), ...carried.map((v) => v.version)].sort(compareVersionsDesc);
      // Each version's documents are written as soon as it is built, so its content (READMEs, inputs) goes at once.
      const writer = createModuleWriter(staging, address, planned, providers, {
        baseUrl: config.baseUrl,
        deprecations: deprecations[addressKey(address)],
        onDetail: written.add,
      });
      const failed: string[] = [];
      const moduleCaches = forModule(caches);
      let builtHere = 0;
      await forEachLimited(sources.values(), versionConcurrency(), async (source) => {
        const version = await buildOne(source, moduleCaches);
        if (version !== undefined) {
          builtHere++;
          return writer.add(version);
        }
        const entry = published.entry(source);
        if (entry) await writer.add(await keep(address, entry));
        else failed.push(source.version);
      });
      if (builtHere > 0) built.modules++;
      built.versions += builtHere;
      for (const entry of carried) await writer.add(await keep(address, entry));
      // A repository's reader (a git process and its object cache) goes as soon as its last version is done,
      // so a build of a thousand repositories holds one or two at a time.
      for (const v of sources) {
        if (v.origin.kind !== 'git') continue;
        const left = pendingByRepo.get(v.origin.gitDir)! - 1;
        pendingByRepo.set(v.origin.gitDir, left);
        if (left === 0) caches.git.close(v.origin.gitDir);
      }
      const record = await writer.finish(failed);
      const key = addressKey(address);
      // A module with no version left (each failed, none published) keeps its ledger records in a state the indexes write.
      if (!record) return;
      await writeModuleState(staging, record, deprecations[key] ?? {}, ledgers.of(key));
      states.add(key);
      recent = recentVersions([record], recent);
      modulesWritten++;
      versionsWritten += record.versions.length;
    });
    // Every version is built: the packing thread (its heap and buffers) ends before the indexes and verify, when memory peaks.
    await closeVersionCaches(caches);
    const carriedProviders = { from: config.outDir, entries: published.carriedProviders, held: published.heldZips };
    const providers = {
      path: config.providersPath,
      entries: await emitProviders(staging, published.packages, config.providersPath, plan.releases, carriedProviders, config.baseUrl),
      ...(published.providersHostname ? { hostname: published.providersHostname } : {}),
    };
    // Replacements are recorded as versions finish, in any order; the manifest lists this build's in a stable one.
    const ledger = {
      ...published.ledger,
      forced: [...published.ledger.forced.slice(0, plan.forcedBefore), ...published.ledger.forced.slice(plan.forcedBefore).sort(byVersion)],
    };
    await writeMirrorIndexes(staging, [], {
      baseUrl: config.baseUrl,
      imageHosts: config.imageHosts,
      generator: GENERATOR,
      ledger,
      providers,
      deprecations,
      // The live mirror says whether it keeps a _headers file.
      live: { dir: config.outDir, recent: undefined },
      staged: { keys: states, recent },
    });
    return { modules: modulesWritten, count: versionsWritten, providerPackages: providerArchivesOf({ providers: providers.entries }).size };
  });
  // A repository reader is a git process, the packer a thread: none outlives the build, whether it is committed or discarded.
  const { modules, count, providerPackages } = await staged.finally(() => closeVersionCaches(caches));
  // Versions finish in any order; the report should not.
  partial.sort((a, b) => (a.module === b.module ? compareVersionsDesc(a.version, b.version) : a.module < b.module ? -1 : 1));
  const report = { partial, warnings: versionWarnings.sort() };
  // A failed version must be tried again next time, so a build with errors records no fingerprint.
  await recordBuild(config.cacheDir, config.outDir, errors.length === 0 ? plan.fingerprint : undefined, report);
  warnings.push(...report.warnings);
  return {
    outDir: config.outDir,
    modules,
    versions: count,
    archives: count,
    providerPackages,
    providerHashing: plan.providerHashing,
    built,
    cached: cacheHits,
    upToDate: false,
    warnings,
    errors,
    partial,
    seconds: (performance.now() - started) / 1000,
  };
}

/**
 * What a build works from, made from the scan: each module's versions (taken
 * one module at a time, so a finished module's sources can be collected),
 * what it keeps of the published mirror, and the few totals the documents
 * need. Neither the scanned list nor the previous manifest outlives it.
 */
type BuildPlan =
  /** The mirror already matches its sources: its module, version and provider package counts. */
  | { warnings: string[]; providerHashing: ProviderHashing; upToDate: { modules: number; versions: number; providerPackages: number; report: BuildReport } }
  | {
      warnings: string[];
      providerHashing: ProviderHashing;
      upToDate?: undefined;
      releases: ProviderRelease[];
      fingerprint: string;
      total: number;
      modules: Map<string, ModulePlan>;
      providersByName: Map<string, string[]>;
      /** Versions left to build per git repository, to close its reader after the last. */
      pendingByRepo: Map<string, number>;
      published: Published;
      /** Replacements on record before this build: the ones after them are this build's. */
      forcedBefore: number;
    };

/** One module's work: the versions its sources produce, and the published ones they no longer do. */
interface ModulePlan {
  address: ModuleAddress;
  sources: VersionSource[];
  carried: ManifestVersion[];
}

type ProviderHashing = BuildResult['providerHashing'];

async function planBuild(config: ResolvedConfig, options: BuildOptions, previous: Manifest | undefined): Promise<BuildPlan> {
  const { versions, warnings } = await scan(config);
  // Every provider zip is checked (hashed, or its hashes taken from the cache by file stamp) before anything is written.
  const providers = await scanProviders(config.providerFolders, config.cacheDir, { reuse: options.clean !== true });
  const providerHashing = { zips: providers.hashed, bytes: providers.bytesHashed };
  const published = keepPublished(previous, versions, providers.packages, options);
  // In-house releases are authenticated (and unsigned ones signed) before anything is written too.
  const releases = await authenticateReleases(config.providerFolders, published.packages, {
    ...(config.signing ? { signing: config.signing } : {}),
    previousSignature: (address, version) => previousSignature(config.outDir, previous, address, version),
  });
  const fingerprint = fingerprintOf(config, versions, providers, releases);
  const report = options.clean || !previous ? undefined : upToDateReport(config.cacheDir, config.outDir, fingerprint);
  // A strict build leaves out what the last (lenient) build mirrored partly: that is work to do; so is a prune or a replacement.
  const asked = published.pruned > 0 || (options.replace?.length ?? 0) > 0 || (options.strict === true && (report?.partial.length ?? 0) > 0);
  if (previous && report && !asked) {
    const modules = Object.values(previous.modules);
    const upToDate = {
      modules: modules.length,
      versions: modules.reduce((n, m) => n + m.versions.length, 0),
      providerPackages: providerArchivesOf(previous).size,
      report,
    };
    return { warnings, providerHashing, upToDate };
  }
  warnAboutKept(published, warnings);
  const modules = new Map<string, ModulePlan>();
  for (const [key, sources] of groupBy(versions, (v) => addressKey(v.address))) modules.set(key, { address: sources[0]!.address, sources, carried: [] });
  for (const [key, carried] of published.carried) {
    const plan = modules.get(key);
    if (plan) plan.carried = carried;
    else modules.set(key, { address: parseAddressKey(key), sources: [], carried });
  }
  return {
    warnings,
    providerHashing,
    releases,
    fingerprint,
    total: versions.length,
    modules,
    providersByName: providersOfNames([...modules.values()].map((m) => m.address)),
    pendingByRepo: countByRepository(versions),
    published,
    forcedBefore: published.ledger.forced.length,
  };
}

function countByRepository(versions: VersionSource[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const v of versions) if (v.origin.kind === 'git') counts.set(v.origin.gitDir, (counts.get(v.origin.gitDir) ?? 0) + 1);
  return counts;
}

/** Everything the output depends on: modmirror, the base URL, each version's files and metadata. */
function fingerprintOf(config: ResolvedConfig, versions: VersionSource[], providers: ProviderScan, releases: ProviderRelease[]): string {
  const hash = createHash('sha256').update(`${GENERATOR}\n${OUTPUT_FORMAT}\n${config.baseUrl}\n${config.imageHosts.join(' ')}\n${config.providersPath}\n`);
  for (const v of versions) {
    hash.update(JSON.stringify([addressKey(v.address), v.version, v.tag, v.publishedAt.toISOString(), v.fingerprint, v.meta]));
    hash.update('\n');
  }
  for (const p of providers.packages) hash.update(`${JSON.stringify([p.address, p.version, p.platform, p.file, p.sha256, p.h1])}\n`);
  for (const r of releases)
    hash.update(`${JSON.stringify([r.address, r.version, r.protocols, r.key.keyId])} ${r.sums.toString('base64')} ${r.signature.toString('base64')}\n`);
  return hash.digest('hex');
}

/** The signature the mirror holds for an in-house release it signed before, so a rebuild need not sign again. */
function previousSignature(outDir: string, previous: Manifest | undefined, address: ProviderAddress, version: string): Buffer | undefined {
  const file = previous?.providers?.[providerKey(address)]?.versions.find((v) => v.version === version)?.registry?.signature.file;
  if (file === undefined) return undefined;
  try {
    return readFileSync(join(outDir, file));
  } catch {
    return undefined;
  }
}

/**
 * Each module's ledger records as its state needs them when its last version is done: those before this
 * build, then this build's replacements (recorded as its versions are built, in any order) in version order.
 */
function moduleLedgers(ledger: ModuleLedger, forcedBefore: number): { of(key: string): ModuleLedger | undefined } {
  const before = ledgersByModule({ forced: ledger.forced.slice(0, forcedBefore), removed: ledger.removed }).byModule;
  return {
    of(key) {
      const mine = ledger.forced.slice(forcedBefore).filter((f) => f.module === key);
      const earlier = before.get(key);
      if (mine.length === 0) return earlier;
      return { forced: [...(earlier?.forced ?? []), ...mine.sort(byVersion)], removed: earlier?.removed ?? [] };
    },
  };
}

/** `providers` of a detail document: every provider the module's namespace/name exists for. */
function providersOfNames(addresses: ModuleAddress[]): Map<string, string[]> {
  const byName = new Map<string, Set<string>>();
  for (const address of addresses) {
    const key = `${address.namespace}/${address.name}`;
    let set = byName.get(key);
    if (!set) byName.set(key, (set = new Set()));
    set.add(address.provider);
  }
  return new Map([...byName].map(([k, set]) => [k, [...set].sort()]));
}

// git and gzip run outside the JS thread, so a few more tasks than cores keep both busy.
const versionConcurrency = () => Math.max(2, availableParallelism() + 1);
const MODULE_CONCURRENCY = 2;
