// `modmirror unbundle`: on the inside of the air gap, merges a bundle into
// the local mirror so that it becomes equal to the mirror the bundle was made
// from. Pass one checks every sha256 before anything is written; then, under
// the mirror's lock, a hard-linked staging copy keeps the archives the bundle
// leaves out, the files a --since bundle lists as kept and the derived ones
// rebuilt from this mirror's own (each checked against the sender's sha256
// before anything is unpacked), takes every file the bundle carries (pass
// two, hashed again) and its copies, is verified whole and swapped in. A
// bundle that would lose versions, change a published version, or needs
// archives or other files this mirror lacks (or holds otherwise) is refused.
// With trusted keys, the bundle's signature is checked first (./signature.ts),
// and pass one reads the very bytes it covers.

import { createHash } from 'node:crypto';
import { closeSync, constants, copyFileSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { mkdir, readdir, rm, rmdir } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { MirrorError } from '../errors.js';
import { readManifest } from '../mirror/manifest.js';
import type { Manifest } from '../mirror/manifest.js';
import { problemLines, withMirrorWrite, type MirrorWriteOptions } from '../mirror/transaction.js';
import { verifyMirror } from '../verify/index.js';
import { provenanceSignatureProblem } from '../emit/provenance.js';
import { PROVENANCE_SUFFIX } from '../protocol/paths.js';
import { derivedText } from './derive.js';
import { archivesOf, BUNDLE_MANIFEST, PROVIDER_ARCHIVE_PREFIX, versionsOf, type BundleFile, type BundleManifest } from './format.js';
import { verifyBundle, walkBundle, type VerifiedBundle } from './read.js';
import { readSignedBundle } from './signature.js';
import type { TrustedKey } from '../openpgp/detached.js';

export interface UnbundleOptions {
  file: string;
  outDir: string;
  /** Keys a signature beside the bundle must be by: without one of them (or with none given), nothing is written. */
  trust?: TrustedKey[];
}

export interface UnbundleResult {
  outDir: string;
  files: number;
  /** Versions the mirror did not have. */
  added: number;
  /** Provider packages the mirror did not have. */
  addedProviderPackages: number;
  /** Versions replaced by a `publish --force` recorded in the bundle's manifest. */
  replaced: number;
  versions: number;
  modules: number;
  /** With trusted keys: the key that signed the bundle. */
  signedBy?: { keyId: string; userId: string };
}

export async function unbundle(options: UnbundleOptions): Promise<UnbundleResult> {
  const file = resolve(options.file);
  const outDir = resolve(options.outDir);
  if (!existsSync(file)) throw new MirrorError('USAGE', `The bundle ${file} does not exist.`, { hint: 'Check the path of the bundle you copied in.' });
  // With trusted keys, the signature is checked on the very bytes this one read of the bundle checks.
  const { signature, read: bundle } =
    options.trust === undefined
      ? { signature: undefined, read: await verifyBundle(file) }
      : await readSignedBundle(file, options.trust, (raw) => verifyBundle(file, raw));
  await mkdir(dirname(outDir), { recursive: true });
  const write: MirrorWriteOptions = {
    start: 'copy',
    // A bundle may carry replacements and removals its sender made on purpose: each is recorded in its manifest.
    allow: { replace: true, remove: true },
    check: (root) => verifyMirror(root),
    failure: (problems) =>
      new MirrorError(
        'BUNDLE_INVALID',
        `After merging ${file}, the mirror fails verification, so ${outDir} is left as it was:\n${problemLines(problems, 20)}`,
        {
          hint: 'Make the bundle again from a mirror that modmirror verify accepts.',
        },
      ),
  };
  return withMirrorWrite(outDir, write, async (tx) => {
    const plan = planMerge(readManifest(outDir), bundle, file, outDir);
    await tx.stage(async (staging) => {
      // A copy of the mirror, whole: what the bundle does not carry is removed from it.
      const root = staging.root!;
      for (const path of takeOutsideFiles(outDir, root, bundle.manifest, file)) plan.keep.add(path);
      await removeAllBut(root, plan.keep);
      await writeEntries(file, root, bundle.manifest);
      if (options.trust) await checkProvenanceSignatures(root, bundle.manifest, options.trust, file);
      writeCopies(root, bundle.manifest);
      await removeEmptyFolders(root);
    });
    const versions = versionsOf(bundle.mirrorManifest);
    return {
      outDir,
      files: bundle.manifest.files.length,
      added: plan.added,
      addedProviderPackages: plan.addedProviders,
      replaced: plan.replaced,
      versions: versions.size,
      modules: Object.keys(bundle.mirrorManifest.modules).length,
      ...(signature ? { signedBy: { keyId: signature.keyId, userId: signature.userId } } : {}),
    };
  });
}

/**
 * With trusted keys, each signed provenance the bundle carries must be by one
 * of them too: a signed bundle of someone else's signed statements is refused.
 */
async function checkProvenanceSignatures(root: string, manifest: BundleManifest, trusted: TrustedKey[], file: string): Promise<void> {
  const problems: string[] = [];
  for (const { path } of manifest.files) {
    if (!path.endsWith(PROVENANCE_SUFFIX)) continue;
    const problem = await provenanceSignatureProblem(readFileSync(join(root, path), 'utf8'), trusted);
    if (problem) problems.push(`${path}: ${problem}`);
  }
  if (problems.length === 0) return;
  throw new MirrorError(
    'BUNDLE_INVALID',
    `The bundle ${file} carries provenance whose signature does not verify, so nothing was changed:\n${problems
      .slice(0, 10)
      .map((p) => `  ${p}`)
      .join('\n')}`,
    { hint: 'Sign the provenance with a key unbundle --trust names (build or publish --sign-key), or trust the key that signed it.' },
  );
}

interface MergePlan {
  /** Files of the current mirror to keep: archives the bundle relies on but does not carry. */
  keep: Set<string>;
  added: number;
  addedProviders: number;
  replaced: number;
}

/** The checks that protect the receiving mirror; every refusal leaves it untouched and says why. */
function planMerge(inside: Manifest | undefined, bundle: VerifiedBundle, file: string, outDir: string): MergePlan {
  // Module versions and provider packages alike: none may be lost or changed, each is carried or kept.
  const next = archivesOf(bundle.mirrorManifest);
  const have = inside ? archivesOf(inside) : new Map<string, { sha256: string; archive: string }>();
  const carried = new Set(bundle.manifest.files.map((f) => f.path));
  const list = (keys: string[]) => `${keys.slice(0, 10).join(', ')}${keys.length > 10 ? `, ... (${keys.length})` : ''}`;

  // A removal made on purpose outside (build --prune) is in the bundled ledger, and goes here too.
  const removed = new Set(
    (bundle.mirrorManifest.removed ?? []).flatMap((r) =>
      r.module !== undefined
        ? [`${r.module}@${r.version}`]
        : Object.keys(r.archives ?? {}).map((platform) => `${PROVIDER_ARCHIVE_PREFIX}${r.provider}@${r.version}:${platform}`),
    ),
  );
  const lost = [...have.keys()].filter((key) => !next.has(key) && !removed.has(key));
  if (lost.length > 0) {
    throw new MirrorError(
      'BUNDLE_CONFLICT',
      `Unbundling ${file} would remove ${lost.length} version(s) that ${outDir} has and the bundled mirror lacks: ${list(lost)}. Nothing was changed.`,
      {
        hint: 'Add those versions to the outside mirror and bundle again; if they should go, remove them there with build --prune (recorded, and carried by the bundle).',
      },
    );
  }
  const forced = new Set((bundle.mirrorManifest.forced ?? []).map((f) => `${f.module}@${f.version}:${f.sha256}`));
  const changed = [...next].filter(([key, v]) => have.has(key) && have.get(key)!.sha256 !== v.sha256);
  const unrecorded = changed.filter(([key, v]) => !forced.has(`${key}:${v.sha256}`)).map(([key]) => key);
  if (unrecorded.length > 0) {
    throw new MirrorError(
      'BUNDLE_CONFLICT',
      `The bundle ${file} holds different content for ${unrecorded.length} version(s) ${outDir} already has: ${list(unrecorded)}. Published versions are immutable. Nothing was changed.`,
      {
        hint: 'Publish changed content as a new version outside; a replacement made there with publish --force is recorded in its manifest and accepted here.',
      },
    );
  }
  const keep = new Set<string>();
  const lacking: string[] = [];
  for (const [key, v] of next) {
    if (carried.has(v.archive)) continue;
    if (have.get(key)?.sha256 === v.sha256 && existsSync(join(outDir, v.archive))) keep.add(v.archive);
    else lacking.push(key);
  }
  if (lacking.length > 0) {
    throw new MirrorError(
      'BUNDLE_CONFLICT',
      `The bundle ${file} was made --since a manifest${baseNote(bundle.manifest)} that lists versions ${outDir} lacks, so it leaves out their archives: ${list(lacking)}. Nothing was changed.`,
      {
        hint: "Make the bundle --since this mirror's own manifest.json, or a full bundle without --since.",
      },
    );
  }
  const added = [...next.keys()].filter((key) => !have.has(key));
  const addedProviders = added.filter((key) => key.startsWith(PROVIDER_ARCHIVE_PREFIX)).length;
  return { keep, added: added.length - addedProviders, addedProviders, replaced: changed.length };
}

function baseNote(manifest: BundleManifest): string {
  return manifest.base ? ` (sha256 ${manifest.base.sha256.slice(0, 12)}..., ${manifest.base.versions} versions)` : '';
}

/**
 * The files a --since bundle leaves out besides archives, taken before the
 * carried files are unpacked: each kept one must be here byte for byte, and
 * each derived one, rebuilt once from this mirror's own copy, must have the
 * sender's sha256 and is written into the staging copy. Any mismatch refuses
 * the bundle (the staging copy is discarded). Returns the paths to keep.
 */
function takeOutsideFiles(outDir: string, root: string, manifest: BundleManifest, file: string): string[] {
  const problems: string[] = [];
  const keep: string[] = [];
  for (const kept of manifest.kept ?? []) {
    const checked = matching(outDir, kept, (own) => own);
    if ('problem' in checked) problems.push(`${kept.path} ${checked.problem}`);
    else keep.push(kept.path);
  }
  for (const derived of manifest.derived ?? []) {
    const checked = matching(outDir, derived, (own) => derivedText(own.toString('utf8'), derived, manifest.shared?.[derived.module]));
    if ('problem' in checked) {
      problems.push(`${derived.path} ${checked.problem}`);
      continue;
    }
    const target = join(root, ...derived.path.split('/'));
    mkdirSync(dirname(target), { recursive: true });
    // Never through the staging copy's hard link to the live mirror: the old file goes first.
    rmSync(target, { force: true });
    writeFileSync(target, checked.made, { flag: 'wx', mode: 0o644 });
    keep.push(derived.path);
  }
  if (problems.length === 0) return keep;
  throw new MirrorError(
    'BUNDLE_CONFLICT',
    `The bundle ${file} was made --since a manifest${baseNote(manifest)}, and leaves out files ${outDir} should have but does not: ${problems.slice(0, 5).join('; ')}${problems.length > 5 ? `; ... (${problems.length})` : ''}. Nothing was changed.`,
    {
      hint: "Make a full bundle (without --since), or a --since bundle from this mirror's current manifest.json.",
    },
  );
}

/** What `make` gives from this mirror's file, if it has `expected`'s sha256; else why not. */
function matching(
  outDir: string,
  expected: BundleFile,
  make: (own: Buffer) => string | Buffer | { problem: string },
): { made: string | Buffer } | { problem: string } {
  const path = join(outDir, ...expected.path.split('/'));
  if (!existsSync(path)) return { problem: 'is missing' };
  const made = make(readFileSync(path));
  if (typeof made === 'object' && !Buffer.isBuffer(made)) return made;
  const sha256 = createHash('sha256').update(made).digest('hex');
  return sha256 === expected.sha256 ? { made } : { problem: `differs (sha256 ${sha256.slice(0, 12)}..., the sender's is ${expected.sha256.slice(0, 12)}...)` };
}

/** Each copy from the file the bundle carried with its bytes (checked against its sha256 as it was written). */
function writeCopies(root: string, manifest: BundleManifest): void {
  for (const copy of manifest.copies ?? []) {
    const target = join(root, ...copy.path.split('/'));
    mkdirSync(dirname(target), { recursive: true });
    // Never through a hard link of the live mirror: the old file goes first.
    rmSync(target, { force: true });
    copyFileSync(join(root, ...copy.from.split('/')), target, constants.COPYFILE_EXCL);
  }
}

/** Clears the staging copy but for `keep`; unlinking a hard link never touches the live mirror. */
async function removeAllBut(root: string, keep: Set<string>): Promise<void> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  for (const entry of entries) {
    if (entry.isDirectory()) continue;
    const rel = relative(root, join(entry.parentPath, entry.name)).split(sep).join('/');
    if (!keep.has(rel)) await rm(join(root, rel), { force: true });
  }
}

/** Pass two: writes every listed file, hashing it again in case the bundle changed since pass one. */
async function writeEntries(file: string, root: string, manifest: BundleManifest): Promise<void> {
  const expected = new Map(manifest.files.map((f) => [f.path, f]));
  const written = new Set<string>();
  const changed = (why: string) =>
    new MirrorError('BUNDLE_INVALID', `The bundle ${file} changed while it was read (${why}). Nothing was changed.`, {
      hint: 'Leave the bundle alone while unbundle runs, then run it again.',
    });
  let openFd: number | undefined;
  const walk = walkBundle(file, (header) => {
    if (header.path === BUNDLE_MANIFEST) return { data: () => {}, end: () => {} };
    const listed = expected.get(header.path);
    if (!listed || header.type !== 'File' || written.has(header.path)) throw changed(`unexpected entry ${header.path}`);
    written.add(header.path);
    const target = join(root, ...header.path.split('/'));
    let fd: number;
    try {
      mkdirSync(dirname(target), { recursive: true });
      rmSync(target, { force: true });
      // Written synchronously as the bytes arrive: nothing piles up in memory, and the flag refuses to follow a link.
      fd = openSync(target, 'wx', 0o644);
    } catch (error) {
      // Only the staging copy was touched (a name too long for this file system, a file where another entry needs a folder).
      throw new MirrorError(
        'BUNDLE_INVALID',
        `The bundle ${file} holds ${header.path}, which cannot be written here (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}). Nothing was changed.`,
        {
          hint: 'Make the bundle again from a mirror that modmirror verify accepts, on a file system that takes its file names.',
          cause: error,
        },
      );
    }
    openFd = fd;
    const hash = createHash('sha256');
    return {
      data: (chunk) => {
        hash.update(chunk);
        writeSync(fd, chunk);
      },
      end: () => {
        closeSync(fd);
        openFd = undefined;
        if (hash.digest('hex') !== listed.sha256) throw changed(`${header.path} no longer matches its sha256`);
      },
    };
  });
  try {
    await walk;
  } finally {
    if (openFd !== undefined) closeSync(openFd);
  }
  if (written.size !== expected.size) throw changed('files are missing');
}

async function removeEmptyFolders(dir: string): Promise<boolean> {
  const entries = await readdir(dir, { withFileTypes: true });
  let empty = true;
  for (const entry of entries) {
    if (entry.isDirectory() && (await removeEmptyFolders(join(dir, entry.name)))) await rmdir(join(dir, entry.name));
    else empty = false;
  }
  return empty;
}
