// `modmirror bundle`: packs a mirror into one .tar.gz with the sha256 of
// every file, to carry across an air gap. With `since` (the receiving
// mirror's manifest.json), the bundle carries what that mirror lacks: the
// archives it has stay out, and so do the other files of its versions
// (./since.ts), listed as derived so unbundle can check the receiver
// rebuilds them. Shared documents (listings, indexes, manifest) are carried whole:
// they are small, and carrying them makes the receiving mirror equal to this
// one even when only metadata changed. With a signer, BUNDLE.asc beside it
// signs it (./signature.ts).

import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, readFileSync, statSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Header, Pack, ReadEntry, type WriteEntry } from 'tar';
import { writeFileAtomicWith } from '../atomic.js';
import { MirrorError, messageOf } from '../errors.js';
import { isTruthFile, parseManifest, readManifest, type Manifest } from '../mirror/manifest.js';
import { jsonText } from '../mirror/staging.js';
import { ARCHIVE_MTIME } from '../pack/index.js';
import { problemLines, withMirrorRead } from '../mirror/transaction.js';
import { verifyMirror } from '../verify/index.js';
import { GENERATOR } from '../version.js';
import {
  archivesOf,
  BUNDLE_FORMAT,
  BUNDLE_MANIFEST,
  PROVIDER_ARCHIVE_PREFIX,
  versionsOf,
  type BundleFile,
  type BundleManifest,
  type CopiedFile,
} from './format.js';
import type { PrivateSigningKey } from '../openpgp/keys.js';
import { signatureFileOf, writeBundleSignature } from './signature.js';
import { splitSince } from './since.js';

export interface BundleOptions {
  dir: string;
  out: string;
  /** A manifest.json file: leave out the archives whose versions it lists with the same sha256, and those versions' other files (./since.ts). */
  since?: string;
  /** An unlocked private key: sign the bundle, writing BUNDLE.asc beside it. */
  signer?: PrivateSigningKey;
  /** Told what is being done, as it goes: a line for a person watching. */
  onProgress?: (line: string) => void;
}

export interface BundleResult {
  out: string;
  files: number;
  bytes: number;
  /** Versions whose archives the bundle carries. */
  versions: number;
  /** Provider packages (zips) the bundle carries. */
  providerPackages: number;
  /** Versions and provider packages left out because the base has them. */
  skipped: number;
  /** Other files left out because the receiver rebuilds them (derived). */
  derived: number;
  sha256: string;
  /** With a signer: the signature written beside the bundle, and the key that made it. */
  signature?: { file: string; keyId: string };
}

export function createBundle(options: BundleOptions): Promise<BundleResult> {
  const dir = resolve(options.dir);
  const out = resolve(options.out);
  if (out === dir || out.startsWith(dir + sep)) {
    throw new MirrorError('USAGE', `The bundle ${out} would be written inside the mirror ${dir}.`, {
      hint: 'Write it outside the mirror, e.g. --out ../mirror.tar.gz.',
    });
  }
  if (!existsSync(dirname(out))) {
    throw new MirrorError('USAGE', `The folder of --out ${out} does not exist.`, { hint: 'Create it, or choose another --out.' });
  }
  // Hold the mirror's lock so no build or publish swaps it while it is read.
  return withMirrorRead(dir, async (mirror) => {
    const manifest = readManifest(dir);
    if (!manifest) {
      throw new MirrorError('OUTPUT_FAILED', `${dir} is not a built mirror (no manifest.json).`, { hint: 'Run modmirror build first, or pass --dir.' });
    }
    const progress = options.onProgress;
    progress?.('Checking the mirror');
    await mirror.check(
      (root) => verifyMirror(root),
      (problems) =>
        new MirrorError('MIRROR_INVALID', `${dir} fails verification, so it is not bundled:\n${problemLines(problems, 20)}`, {
          hint: 'Rebuild it with modmirror build --clean, then bundle again.',
        }),
    );
    const base = options.since === undefined ? undefined : readBase(resolve(options.since));
    const { files, carried, carriedProviders, skipped } = await selectFiles(dir, manifest, base?.manifest);
    const split = base ? splitSince(dir, new Set(files), manifest, base.manifest) : undefined;
    const outside = new Set((split?.derived ?? []).map((d) => d.path));
    const inTar = files.filter((f) => !outside.has(f));
    // One file at a time: a mirror can hold more files than a process may open.
    const described: BundleFile[] = [];
    for (const rel of inTar) {
      described.push(await describe(dir, rel));
      progress?.(`Reading the mirror's files: ${described.length}/${inTar.length}`);
    }
    // A --since bundle carries each content once (a full one stays a complete tree for `tar xzf`);
    // archives stay carried, as the manifests say which archives a bundle holds.
    const { carried: inTarOnce, copies } = base
      ? carryOnce(described, new Set([...archivesOf(manifest).values()].map((a) => a.archive)))
      : { carried: described, copies: [] };
    const derived = split?.derived ?? [];
    const bundleManifest: BundleManifest = {
      format: BUNDLE_FORMAT,
      generator: GENERATOR,
      ...(base ? { base: { sha256: base.sha256, versions: versionsOf(base.manifest).size } } : {}),
      files: inTarOnce,
      ...(split ? { derived, shared: split.shared, copies } : {}),
    };
    await writeBundle(dir, out, bundleManifest, options.signer, progress);
    const bytes = (await stat(out)).size;
    return {
      out,
      files: inTarOnce.length,
      bytes,
      versions: carried,
      providerPackages: carriedProviders,
      skipped,
      derived: derived.length,
      sha256: await sha256Of(out),
      ...(options.signer ? { signature: { file: signatureFileOf(out), keyId: options.signer.public.keyId } } : {}),
    };
  });
}

/**
 * Files with the same bytes as one carried before them become copies of it,
 * but for archives and the mirror's truth (manifest.json and the module
 * states): unbundle reads those from the bundle itself.
 */
function carryOnce(files: BundleFile[], archives: Set<string>): { carried: BundleFile[]; copies: CopiedFile[] } {
  const first = new Map<string, BundleFile>();
  const carried: BundleFile[] = [];
  const copies: CopiedFile[] = [];
  for (const file of files) {
    const key = `${file.sha256}:${file.size}`;
    const from = archives.has(file.path) || isTruthFile(file.path) ? undefined : first.get(key);
    if (from) copies.push({ ...file, from: from.path });
    else {
      carried.push(file);
      if (!archives.has(file.path)) first.set(key, file);
    }
  }
  return { carried, copies };
}

/**
 * What the receiver holds: its mirror's folder, or a copy of its truth
 * (manifest.json and the state folder beside it), or the manifest.json of a
 * mirror written before each module had its state (which lists every module).
 */
function readBase(path: string): { manifest: Manifest; sha256: string } {
  const hint =
    "Pass a copy of the receiving mirror's manifest.json and state/ folder (the folder holding them), or its manifest.json alone if an older modmirror wrote it.";
  if (!existsSync(path)) throw new MirrorError('PATH_NOT_FOUND', `Cannot read the --since base ${path}: it does not exist.`, { hint });
  let manifest: Manifest | undefined;
  try {
    if (statSync(path).isDirectory()) manifest = readManifest(path);
    else {
      manifest = parseManifest(readFileSync(path, 'utf8'));
      // Its modules are in the state folder beside it; without one, the bundle carries every module's archives.
      if (manifest.format >= 3) manifest = readManifest(dirname(path));
    }
  } catch (error) {
    throw new MirrorError('USAGE', `The --since base ${path} is unusable: ${messageOf(error)}`, { hint, cause: error });
  }
  if (!manifest) throw new MirrorError('USAGE', `The --since base ${path} holds no manifest.json.`, { hint });
  return { manifest, sha256: createHash('sha256').update(jsonText(manifest)).digest('hex') };
}

/** Every file of the mirror, sorted, less the archives (module and provider) the base already has with the same sha256. */
async function selectFiles(
  dir: string,
  manifest: Manifest,
  base: Manifest | undefined,
): Promise<{ files: string[]; carried: number; carriedProviders: number; skipped: number }> {
  const all = (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)).split(sep).join('/'))
    .sort();
  const baseArchives = base ? archivesOf(base) : new Map<string, { sha256: string }>();
  const leaveOut = new Set<string>();
  let carried = 0;
  let carriedProviders = 0;
  for (const [key, v] of archivesOf(manifest)) {
    if (baseArchives.get(key)?.sha256 === v.sha256) leaveOut.add(v.archive);
    else if (key.startsWith(PROVIDER_ARCHIVE_PREFIX)) carriedProviders++;
    else carried++;
  }
  return { files: all.filter((f) => !leaveOut.has(f)), carried, carriedProviders, skipped: leaveOut.size };
}

async function describe(dir: string, rel: string): Promise<BundleFile> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(join(dir, rel)) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { path: rel, sha256: hash.digest('hex'), size };
}

async function sha256Of(file: string): Promise<string> {
  return (await describe(dirname(file), relative(dirname(file), file))).sha256;
}

/**
 * Written atomically, so an interrupted bundle never looks finished; its
 * signature is made from the written bytes and put in place just before them.
 */
async function writeBundle(
  dir: string,
  out: string,
  manifest: BundleManifest,
  signer: PrivateSigningKey | undefined,
  progress: ((line: string) => void) | undefined,
): Promise<void> {
  // Files of a mirror may be hard links of one another (or of the build cache);
  // a no-op link cache makes every entry a plain file, which unbundle requires.
  const noLinks = { get: () => undefined, set: () => undefined, has: () => false } as unknown as Map<`${number}:${number}`, string>;
  // The files' bytes as they go into the tar, against all of them: a share of the work, whatever gzip makes of it.
  const total = manifest.files.reduce((sum, file) => sum + file.size, 0);
  let written = 0;
  const onWriteEntry = (entry: WriteEntry) =>
    entry.on('end', () => {
      written += entry.stat?.size ?? 0;
      progress?.(`Writing ${basename(out)}: ${Math.floor((100 * written) / Math.max(total, 1))}% of ${manifest.files.length} files`);
    });
  const pack = new Pack({
    cwd: dir,
    gzip: true,
    portable: true,
    mtime: ARCHIVE_MTIME,
    noDirRecurse: true,
    linkCache: noLinks,
    ...(progress ? { onWriteEntry } : {}),
  });
  const body = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
  const header = new Header({ path: BUNDLE_MANIFEST, type: 'File', mode: 0o644, size: body.length, mtime: ARCHIVE_MTIME, uid: 0, gid: 0 });
  const first = new ReadEntry(header);
  first.end(body);
  pack.add(first);
  for (const file of manifest.files) pack.add(file.path);
  pack.end();
  try {
    await writeFileAtomicWith(out, async (temp) => {
      await pipeline(pack, createWriteStream(temp));
      await writeBundleSignature(temp, out, signer);
    });
  } catch (error) {
    throw new MirrorError('OUTPUT_FAILED', `Could not write the bundle ${out}: ${messageOf(error)}`, { cause: error });
  }
}
