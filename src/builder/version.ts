// One version's pipeline, shared by build and publish: read its files,
// extract the documentation, pack the archive, keep both in the version
// cache. A build takes unchanged versions from the cache and stores each new
// one at once; publish builds afresh and stores only after its mirror is
// swapped in, so a refused or dry-run publish leaves the cache as it was.

import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { filesIdentity, gitIdentity, VersionCache, type ReadmeReader } from './cache.js';
import {
  createExtractCache,
  descriptionFromReadme,
  extractDocumentation,
  fileId,
  isReadByExtraction,
  syntaxError,
  type ExtractCache,
} from '../extract/index.js';
import { MirrorError } from '../errors.js';
import { inlinePacker, threadPacker, type Packer } from '../pack/thread.js';
import { readVersionFiles } from '../scan/files.js';
import { GitReaders } from '../scan/git-objects.js';
import { DEFAULT_LIMITS } from '../config/limits.js';
import { readLarge } from '../scan/large.js';
import { isHeld, type BuiltVersion, type PackedArchive, type SizeLimits, type SourceFile, type VersionFile, type VersionSource } from '../types.js';

/** What versions built one after another share: git readers, parsed files, the version cache, the packer. */
export interface VersionCaches {
  git: GitReaders;
  /** One module's parsed files (forModule): its versions share most files, other modules rarely any. */
  parsed: ExtractCache;
  versions: VersionCache;
  packer: Packer;
  /** The config's `limits`: a version over them fails alone. */
  limits: SizeLimits;
}

/**
 * `packThread`: pack in a worker thread (a build of many versions), not on this one (a publish's one version).
 * `git`: readers already started (publish looked its ref up through them); closed with the caches.
 */
export function createVersionCaches(cacheDir: string, options: { packThread?: boolean; git?: GitReaders; limits?: SizeLimits } = {}): VersionCaches {
  const versions = new VersionCache(join(cacheDir, 'versions'));
  const packer = options.packThread ? threadPacker(versions.spoolDir) : inlinePacker(versions.spoolDir);
  return { git: options.git ?? new GitReaders(), parsed: createExtractCache(), versions, packer, limits: options.limits ?? DEFAULT_LIMITS };
}

/**
 * The caches for one module's versions, with a parse cache of their own. A
 * build-wide one held the last 4 MB of source parsed, whichever module it came
 * from: at 100,000 versions of distinct files, ~15 MB of parsed files that V8
 * kept in its old generation, and grew that generation for, while nothing read
 * them again.
 */
export function forModule(caches: VersionCaches): VersionCaches {
  return { ...caches, parsed: createExtractCache() };
}

/** Ends the git readers and the packing thread. */
export async function closeVersionCaches(caches: VersionCaches): Promise<void> {
  caches.git.closeAll();
  await caches.packer.close();
}

export interface BuildVersionOptions {
  /** Take the version from the cache when it is there (false for `build --clean` and for publish). */
  reuse: boolean;
  /** Fail on a file no parser could read, rather than mirror the rest of the version. */
  strict: boolean;
}

export interface VersionBuild {
  built: BuiltVersion;
  /** `file:line:column: message` for each file no parser could read (never with `strict`). */
  problems: string[];
  /** Links left out, without the version's label. */
  warnings: string[];
  /** True when everything came from an earlier build's cache entry (not one this build stored for a version of the same content). */
  cached: boolean;
  /** The archive when it was packed now (its bytes, or a file in the cache's spool); undefined for a cache hit. */
  packed: PackedArchive | undefined;
  /** Puts the version into the cache (once) and returns its archive's path there. */
  store(): Promise<string>;
  /** Removes an archive packed into a file and never stored (a dry run, a refused publish). */
  discard(): Promise<void>;
}

export async function buildVersion(source: VersionSource, caches: VersionCaches, options: BuildVersionOptions): Promise<VersionBuild> {
  // A git version's identity is its tree id, known without reading; a folder's is the digest of its files.
  let read = source.origin.kind === 'git' ? undefined : await readVersionFiles(source, caches.git, caches.limits);
  const identity = gitIdentity(source) ?? filesIdentity(read!.files);
  const cached = options.reuse ? await caches.versions.get(identity, readmeReader(source, caches, read?.files)) : undefined;
  if (cached) {
    if (options.strict && cached.problems.length > 0) throw syntaxError(cached.problems);
    const built = builtVersion(source, cached.content, { sha256: cached.sha256, size: cached.size });
    const store = async () => cached.archivePath;
    return {
      built,
      problems: cached.problems,
      warnings: [...cached.warnings, ...rootWarnings(built)],
      cached: cached.earlier,
      packed: undefined,
      store,
      discard: async () => {},
    };
  }
  read ??= await readVersionFiles(source, caches.git, caches.limits);
  // An empty archive installs as an empty module, and the next apply plans to destroy what the module managed.
  if (read.files.length === 0) throw emptyVersion(source.label, read.found);
  const { content, problems, readmes } = extractDocumentation(await extractionFiles(read.files), caches.parsed);
  if (options.strict && problems.length > 0) throw syntaxError(problems);
  const archive = await caches.packer.pack(read.files);
  const warnings = read.warnings;
  const built = builtVersion(source, content, { sha256: archive.sha256, size: archive.size });
  let stored: Promise<string> | undefined;
  return {
    built,
    problems,
    warnings: [...warnings, ...rootWarnings(built)],
    cached: false,
    packed: archive,
    store: () => (stored ??= caches.versions.put(identity, { content, problems, warnings }, readmes, archive)),
    discard: async () => {
      if (stored === undefined && 'file' in archive) await rm(archive.file, { force: true });
    },
  };
}

/** A version whose archive would hold nothing: a folder with no files, or every file left out. */
function emptyVersion(label: string, found: number): MirrorError {
  if (found === 0) {
    return new MirrorError('VERSION_READ_FAILED', `${label} holds no files: its archive would be empty.`, {
      hint: "Give the module's files (its .tf files at the root); an empty archive is never published.",
    });
  }
  return new MirrorError(
    'VERSION_READ_FAILED',
    `${label} has ${found} file(s) but none would be in its archive: .terraformignore or links that leave the module leave out every one.`,
    { hint: 'Check its .terraformignore and its symbolic links; an empty archive is never published.' },
  );
}

/** The files extraction reads, held: a large .tf file or README is read whole here (within the per-file bound); other large files are left to the packer. */
async function extractionFiles(files: VersionFile[]): Promise<SourceFile[]> {
  const held = await Promise.all(
    files.map(async (f) =>
      isHeld(f) ? f : isReadByExtraction(f.path) ? { path: f.path, mode: f.mode, data: await readLarge(f.source), id: f.id } : undefined,
    ),
  );
  return held.filter((f): f is SourceFile => f !== undefined);
}

/** Said of every build of such a version, from the cache too: its content tells, so the cache need not. */
function rootWarnings(built: BuiltVersion): string[] {
  if (!built.content.root.empty) return [];
  return ['holds no .tf or .tf.json file at its root: mirrored all the same, though Terraform will find no configuration in it'];
}

/**
 * A cache hit's READMEs, from the version's source: a git version's by object
 * id (git checks the content is the one named), a folder version's from the
 * files already read to find its entry (whose address is their digest).
 */
function readmeReader(source: VersionSource, caches: VersionCaches, files: VersionFile[] | undefined): ReadmeReader {
  const { origin } = source;
  return async ({ path, id }) => {
    if (origin.kind === 'git') {
      const { type, data } = await caches.git.get(origin.gitDir).read(id);
      if (type !== 'blob') throw new Error(`${id} is a ${type}`);
      return (data ?? (await readLarge({ kind: 'git', gitDir: origin.gitDir, oid: id }))).toString('utf8');
    }
    const file = files?.find((f) => f.path === path);
    if (file === undefined || (isHeld(file) ? fileId(file) : file.id) !== id) throw new Error(`${path} is not the README the cache names`);
    return (isHeld(file) ? file.data : await readLarge(file.source)).toString('utf8');
  };
}

/** The one description rule: the module's own metadata, else the README's first paragraph. */
function builtVersion(source: VersionSource, content: BuiltVersion['content'], archive: BuiltVersion['archive']): BuiltVersion {
  return { source, content, archive, description: source.meta.description || descriptionFromReadme(content.root.readme) };
}
