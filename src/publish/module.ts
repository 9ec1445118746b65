// `modmirror publish`: one new version into an existing mirror, rewriting
// only what it changes (its module's documents, the listings that show it,
// the search index, the manifest) with the same functions a build uses, in a
// hard-linked staging copy swapped in whole. Same content again is a no-op;
// different content for a published version is refused unless forced.

import { buildVersion, closeVersionCaches, createVersionCaches, type VersionBuild } from '../builder/version.js';
import type { Deprecations } from '../mirror/deprecations.js';
import { MirrorError } from '../errors.js';
import { moduleFamily, readModuleVersions, type OpenedMirror } from '../mirror/read.js';
import { emitModule, type DetailListener } from '../emit/index.js';
import { carriedProviders, type ModuleRecord } from '../mirror/manifest.js';
import { ledgerOf, requester } from '../mirror/ledger.js';
import { writeMirrorIndexes } from '../emit/indexes.js';
import { writeProvenance } from '../emit/provenance.js';
import type { PrivateSigningKey } from '../openpgp/keys.js';
import { addressKey, archiveFile } from '../protocol/paths.js';
import type { Staging } from '../mirror/staging.js';
import type { GitReaders } from '../scan/git-objects.js';
import type { MirrorWrite } from '../mirror/transaction.js';
import type { BuiltVersion, SizeLimits, VersionSource } from '../types.js';
import { compareVersionsDesc } from '../version-order.js';
import { WrittenDetails, type VerifyOptions } from '../verify/index.js';
import { GENERATOR } from '../version.js';
import { withPartialWrite } from './write.js';

export interface PublishOptions {
  outDir: string;
  cacheDir: string;
  /** Base URL for a new mirror; an existing mirror keeps its own. */
  baseUrl: string;
  /** As the config's browse.imageHosts, so published pages match a build's. */
  imageHosts: string[];
  force?: boolean;
  /** Start a new mirror when `outDir` holds none; without it, a missing mirror is refused (a typo must not start one). */
  newMirror?: boolean;
  dryRun?: boolean;
  /** The config's `limits` (the defaults when not given). */
  limits?: SizeLimits;
  /** False: keep nothing in the build cache (a source no build reads again, such as an API upload's temporary folder). */
  remember?: boolean;
  /**
   * Take the version from the build cache when it is there: a publish into a bucket doing its change
   * again after losing a race to another writer, which built and stored this very version a moment ago.
   */
  reuseBuilt?: boolean;
  /** False when the mirror's archives are stand-ins of their size (a bucket's mirror fetched for a write): they are checked by size. */
  hashArchives?: boolean;
  /** False: a file no parser reads is a warning, as in a build, rather than a refusal (a version cached from an upstream). Default true. */
  strict?: boolean;
  /** The git readers the source was scanned with, so the version is read through the same `git cat-file`; closed by publish. */
  git?: GitReaders;
  /** Signs the version's provenance (unsigned without). */
  signer?: PrivateSigningKey;
}

export interface PublishResult {
  module: string;
  version: string;
  sha256: string;
  /** published: new version; unchanged: already there with the same content; replaced: --force over different content; would-*: the same, on a dry run. */
  outcome: 'published' | 'unchanged' | 'replaced' | 'would-publish' | 'would-replace';
  previousSha256?: string;
  /** Symlinks left out of the version (outside the module, loops), each named; absent when none. */
  warnings?: string[];
  /** Files written (or, with dryRun, that would be). */
  changed: string[];
  dryRun: boolean;
  seconds: number;
}

export function publish(source: VersionSource, options: PublishOptions): Promise<PublishResult> {
  // Only the modules this version rewrote, and the indexes, are checked: they are known once written.
  // Their details were checked as they were written (WrittenDetails), so verify looks at their sizes.
  const check: VerifyOptions = { modules: [], written: new WrittenDetails(), hashArchives: options.hashArchives !== false };
  const write = {
    ...options,
    what: 'publishing',
    check: () => check,
    allow: { replace: options.force === true },
    // The module, and its name's other providers, whose details list the providers.
    modules: (dir: string) => moduleFamily(dir, source.address),
  };
  return withPartialWrite(write, (tx, mirror) => publishLocked(tx, mirror, source, options, check));
}

async function publishLocked(
  tx: MirrorWrite,
  mirror: OpenedMirror,
  source: VersionSource,
  options: PublishOptions,
  check: VerifyOptions,
): Promise<PublishResult> {
  const started = performance.now();
  const caches = createVersionCaches(options.cacheDir, { ...(options.git ? { git: options.git } : {}), ...(options.limits ? { limits: options.limits } : {}) });
  let version: VersionBuild;
  try {
    // Publish stays strict (a release pipeline wants its own module's syntax errors to fail it) and builds afresh.
    version = await buildVersion(source, caches, { reuse: options.reuseBuilt === true, strict: options.strict !== false });
  } catch (error) {
    // The build's hint speaks of the other versions it built: a publish has one, and changed nothing.
    if (error instanceof MirrorError && error.code === 'HCL_SYNTAX')
      throw new MirrorError('HCL_SYNTAX', error.message, { hint: 'Fix the syntax error, then publish again; nothing was published.', cause: error });
    throw error;
  } finally {
    await closeVersionCaches(caches);
  }
  try {
    return await publishBuilt(tx, mirror, source, version, options, check, started);
  } finally {
    await version.discard();
  }
}

/** The version packed: refused, or staged into the mirror and stored in the cache. */
async function publishBuilt(
  tx: MirrorWrite,
  mirror: OpenedMirror,
  source: VersionSource,
  version: VersionBuild,
  options: PublishOptions,
  check: VerifyOptions,
  started: number,
): Promise<PublishResult> {
  const { built } = version;
  const key = addressKey(source.address);
  const { manifest } = mirror;
  // Packed now, or (reuseBuilt) taken from the build cache, where store() names its file.
  const archive = built.archive;
  const warnings = version.warnings.map((w) => `${source.label}: ${w}`);
  const result = (done: 'published' | 'unchanged' | 'replaced', changed: string[], previousSha256?: string): PublishResult => ({
    module: key,
    version: source.version,
    sha256: archive.sha256,
    outcome: options.dryRun && done !== 'unchanged' ? (done === 'replaced' ? 'would-replace' : 'would-publish') : done,
    ...(previousSha256 ? { previousSha256 } : {}),
    ...(warnings.length > 0 ? { warnings } : {}),
    changed,
    dryRun: options.dryRun === true,
    seconds: (performance.now() - started) / 1000,
  });

  const existing = manifest.modules[key]?.versions.find((v) => v.version === source.version);
  if (existing?.sha256 === archive.sha256) return result('unchanged', []);
  if (existing && !options.force) {
    throw new MirrorError(
      'VERSION_CONFLICT',
      `${key} ${source.version} is already published with different content:\n  published: sha256 ${existing.sha256}\n  this one:  sha256 ${archive.sha256}`,
      {
        hint: 'Published versions are immutable: publish a new version number, or pass --force to replace it (recorded in the manifest).',
      },
    );
  }

  const ledger = ledgerOf(manifest);
  if (existing)
    ledger.forced.push({
      module: key,
      version: source.version,
      previous_sha256: existing.sha256,
      sha256: archive.sha256,
      at: new Date().toISOString(),
      by: requester(),
    });

  // A dry run's staging records the files that would change; a real one the files it changed.
  const changed = await tx.stage(async (staging) => {
    const baseUrl = mirror.baseUrl ?? options.baseUrl;
    const { deprecations } = mirror;
    const archiveRel = archiveFile(source.address, source.version);
    const packed = version.packed;
    if (packed && 'data' in packed) await staging.write(archiveRel, packed.data);
    else await staging.linkFrom(packed ? packed.file : await version.store(), archiveRel);
    // A new or replaced version: its provenance is new too.
    await writeProvenance(staging, mirror.dir, source, archiveRel, archive.sha256, false, options.signer);
    const rewritten = await emitAffected(staging, mirror, built, { baseUrl, deprecations, onDetail: check.written!.add });
    const records = mergeRecords(mirror.records(), rewritten);
    // The provider files are in the staging copy as they were; the manifest keeps listing them.
    const providers = carriedProviders(manifest);
    await writeMirrorIndexes(staging, records, {
      baseUrl,
      imageHosts: options.imageHosts,
      generator: GENERATOR,
      ledger,
      deprecations,
      only: [{ namespace: source.address.namespace, name: source.address.name }],
      providers,
      ...(mirror.live ? { live: mirror.live } : {}),
    });
    check.modules = rewritten.map((r) => addressKey(r.address));
    return staging.changed ?? [];
  });
  // The next incremental build finds this version already done.
  if (!options.dryRun && options.remember !== false) await version.store();
  return result(existing ? 'replaced' : 'published', changed, existing?.sha256);
}

/**
 * The module gets the new version; modules of the same namespace/name for
 * other providers are rewritten too, since their details list the providers.
 */
async function emitAffected(
  staging: Staging,
  mirror: OpenedMirror,
  built: BuiltVersion,
  options: { baseUrl: string; deprecations: Deprecations; onDetail: DetailListener },
): Promise<ModuleRecord[]> {
  const { namespace, name, provider } = built.source.address;
  const siblings = mirror.providersOf(namespace, name);
  const providers = [...new Set([...siblings, provider])].sort();
  const newProvider = !siblings.includes(provider);
  const records: ModuleRecord[] = [];
  for (const p of providers) {
    if (p !== provider && !newProvider) continue;
    const address = { namespace, name, provider: p };
    let versions = await readModuleVersions(mirror.dir, mirror.manifest, address);
    if (p === provider) {
      versions = [...versions.filter((v) => v.source.version !== built.source.version), built].sort((a, b) =>
        compareVersionsDesc(a.source.version, b.source.version),
      );
    }
    const record = await emitModule(staging, versions, providers, {
      baseUrl: options.baseUrl,
      deprecations: options.deprecations[addressKey(address)],
      onDetail: options.onDetail,
    });
    if (record) records.push(record);
  }
  return records;
}

function mergeRecords(existing: ModuleRecord[], rewritten: ModuleRecord[]): ModuleRecord[] {
  const byKey = new Map(existing.map((r) => [addressKey(r.address), r]));
  for (const r of rewritten) byKey.set(addressKey(r.address), r);
  return [...byKey.values()];
}
