// Provider packages from an upstream registry into a provider folder: the
// versions asked for (named outright, required by a configuration or a
// mirrored module, pinned by a lock file), for each configured platform,
// every package checked as Terraform checks it (provider-auth.ts) before it
// is kept, and written a version at a time (provider-store.ts). A platform
// the upstream has no package for is reported, not fatal; a version already
// in the folder for a platform is not fetched again.

import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { copyFile, link, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { mapLimited } from '../concurrency.js';
import { MirrorError, messageOf } from '../errors.js';
import { providerKey, type ProviderAddress } from '../protocol/providers.js';
import { hashZipEntries } from '../providers/hash.js';
import { compareVersionsDesc, validVersion } from '../version-order.js';
import type { HttpClient } from './http.js';
import type { LockedProvider } from './lock-file.js';
import { AuthenticationError, checkArchiveChecksum, checkChecksumList, NoSigningKeyError, verifyChecksumSignature } from '../providers/signature.js';
import { packageFileName, providerTypeDir, storedArchives, storeProviderPackages, storeRelease, type SignedList } from './provider-store.js';
import { fetchBytes, listProviderVersions, packageMeta, type PackageMeta } from './provider-upstream.js';
import { removeAbandoned } from './store.js';
import type { SyncResult } from './types.js';

/** Larger than any provider release (the biggest are a few hundred MB); a bound on what an upstream can make us write. */
const MAX_PACKAGE_BYTES = 2 * 1024 * 1024 * 1024;

/** A provider wanted at some versions. */
export interface ProviderNeed {
  address: ProviderAddress;
  /** As written; '' means any release. */
  constraint: string;
  matches: (version: string) => boolean;
  /** Every match (named outright), or the newest (what terraform init picks for a requirement). */
  pick: 'every' | 'newest';
  /** The exact version and accepted hashes of a lock file; the constraint is then not consulted. */
  locked?: LockedProvider;
  /** The configuration folder (`--for`) the need comes from: its lock file's versions serve its requirements. */
  configuration?: string;
  calledFrom?: string;
  /**
   * The same packages under another origin host: a source without a host is
   * registry.terraform.io's to Terraform and registry.opentofu.org's to
   * OpenTofu, and a mirror for both tools holds both trees.
   */
  alsoAs?: ProviderAddress[];
}

export interface ProviderRun {
  http: HttpClient;
  /** The upstream's providers.v1 base; throws when it has none. */
  service: () => URL;
  into: string;
  platforms: string[];
  result: SyncResult;
  log: (line: string) => void;
  /** Keep each version's signed SHA256SUMS, its signature and the keys listed beside its packages (provider-store.ts), to serve them again. */
  keepReleases?: boolean;
}

/** Mirrors what the needs ask for, provider by provider. */
export async function mirrorProviders(run: ProviderRun, needs: ProviderNeed[]): Promise<void> {
  const byProvider = new Map<string, ProviderNeed[]>();
  for (const need of needs) byProvider.set(providerKey(need.address), [...(byProvider.get(providerKey(need.address)) ?? []), need]);
  for (const [key, group] of byProvider) {
    let listed: string[];
    try {
      listed = await listProviderVersions(run.http, run.service(), group[0]!.address, key);
    } catch (error) {
      const missing = (error as { status?: number }).status === 404 ? ': the upstream has no such provider' : '';
      fail(run, { provider: key, message: `${messageOf(error)}${missing}${from(group)}` });
      continue;
    }
    const versions = [...new Set(listed.map(validVersion).filter((v): v is string => v !== null))].sort((a, b) => compareVersionsDesc(b, a));
    for (const [version, wanted] of chooseVersions(run, key, group, versions)) {
      await mirrorVersion(run, group[0]!.address, version, wanted);
    }
  }
}

/**
 * The versions to mirror, each with the needs it serves: a lock file's exact
 * version; every match of a provider named outright; for requirements, the
 * newest match of each and the newest matching them all (what one `terraform
 * init` of them together picks), unless its configuration's lock file pins a
 * version that serves it (init then installs that one).
 */
function chooseVersions(run: ProviderRun, key: string, needs: ProviderNeed[], versions: string[]): Map<string, ProviderNeed[]> {
  const chosen = new Map<string, ProviderNeed[]>();
  const add = (version: string, need: ProviderNeed) => chosen.set(version, [...(chosen.get(version) ?? []), need]);
  const shown = versions.slice(-10).reverse().join(', ') || 'none';
  for (const need of needs.filter((n) => n.locked)) {
    const version = validVersion(need.locked!.version);
    if (version !== null && versions.includes(version)) add(version, need);
    else
      fail(run, {
        provider: key,
        version: need.locked!.version,
        message: `${key}: the lock file's version ${need.locked!.version} is not on the upstream (upstream has: ${shown})${from([need])}`,
      });
  }
  const lockedIn = (configuration: string | undefined) =>
    needs.filter((n) => n.locked && configuration !== undefined && n.configuration === configuration).map((n) => validVersion(n.locked!.version));
  const open: ProviderNeed[] = [];
  for (const need of needs.filter((n) => !n.locked)) {
    const matching = versions.filter(need.matches);
    if (matching.length === 0) {
      const wanted = need.constraint === '' ? 'no release version' : `no upstream version matches "${need.constraint}"`;
      fail(run, { provider: key, message: `${key}: ${wanted} (upstream has: ${shown})${from([need])}` });
    } else if (need.pick === 'every') {
      for (const v of matching) add(v, need);
    } else if (!lockedIn(need.configuration).some((v) => v !== null && need.matches(v))) {
      add(matching.at(-1)!, need);
      open.push(need);
    }
  }
  const together = versions.filter((v) => open.every((n) => n.matches(v))).at(-1);
  if (open.length > 1 && together !== undefined && !chosen.has(together)) for (const need of open) add(together, need);
  // Newest first: an interrupted run has already stored what init is likeliest to want.
  return new Map([...chosen].sort(([a], [b]) => compareVersionsDesc(a, b)));
}

/** One version: the platforms the folder lacks, fetched, checked and stored together. */
async function mirrorVersion(run: ProviderRun, address: ProviderAddress, version: string, needs: ProviderNeed[]): Promise<void> {
  const key = providerKey(address);
  const what = `${key} ${version}`;
  const typeDir = providerTypeDir(run.into, address);
  const locked = needs.find((n) => n.locked)?.locked;
  const calledFrom = needs.map((n) => n.calledFrom).find((c) => c !== undefined);
  const record = { provider: key, version, fetched: [] as string[], present: [] as string[], ...(calledFrom === undefined ? {} : { calledFrom }) };
  await mkdir(typeDir, { recursive: true });
  await removeAbandoned(typeDir);
  const stored = await storedArchives(typeDir, version);
  const missing = run.platforms.filter((p) => stored[p] === undefined);
  for (const platform of run.platforms.filter((p) => stored[p] !== undefined)) {
    record.present.push(platform);
    if (locked) checkLocked(stored[platform]!.hashes, locked, `${what} ${platform}`, run, key, version, platform);
  }
  run.log(
    `${what}: ${run.platforms.length - missing.length} platform(s) already here, ${missing.length} to fetch${calledFrom === undefined ? '' : ` (for ${calledFrom})`}`,
  );
  if (missing.length === 0) {
    run.result.providerVersions.push(record);
    await linkAliases(run, address, version, needs);
    return;
  }
  const scratch = join(typeDir, `.${version}.partial-${process.pid}`);
  await rm(scratch, { recursive: true, force: true });
  await mkdir(scratch, { recursive: true });
  try {
    const signedLists = new Map<string, Promise<SignedList>>();
    // Two packages at a time: one downloads while the other is hashed.
    const results = await mapLimited(missing, 2, async (platform) => {
      try {
        const meta = await packageMeta(run.http, run.service(), address, version, platform, what);
        if (meta === undefined) {
          run.result.providerUnavailable.push({ provider: key, version, platform });
          run.log(`note: ${what}: the upstream has no package for ${platform} (404): not mirrored for that platform`);
          return undefined;
        }
        const file = join(scratch, `${platform}.zip`);
        const hashes = await fetchChecked(run, meta, file, signedLists, what, platform);
        if (locked && !checkLocked(hashes, locked, `${what} ${platform}`, run, key, version, platform)) return undefined;
        return { platform, file, name: packageFileName(address, version, platform), hashes };
      } catch (error) {
        fail(run, { provider: key, version, platform, message: messageOf(error) });
        return undefined;
      }
    });
    const checked = results.filter((r) => r !== undefined);
    if (checked.length > 0) {
      // Before VERSION.json names the packages, so a version listed has its release files. Every platform names the same list.
      const signed = [...signedLists.values()][0];
      if (run.keepReleases && signed) await storeRelease(typeDir, address, version, await signed);
      await storeProviderPackages(typeDir, version, checked);
      record.fetched.push(...checked.map((c) => c.platform));
      run.log(`${what}: stored ${checked.map((c) => c.platform).join(', ')}`);
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  if (record.fetched.length + record.present.length > 0) run.result.providerVersions.push(record);
  await linkAliases(run, address, version, needs);
}

/** The version's packages hard-linked (same bytes, same hashes) into the other trees its needs name. */
async function linkAliases(run: ProviderRun, address: ProviderAddress, version: string, needs: ProviderNeed[]): Promise<void> {
  const aliases = new Map(needs.flatMap((n) => n.alsoAs ?? []).map((a) => [providerKey(a), a]));
  if (aliases.size === 0) return;
  const from = providerTypeDir(run.into, address);
  const archives = await storedArchives(from, version);
  for (const alias of aliases.values()) {
    const typeDir = providerTypeDir(run.into, alias);
    await mkdir(typeDir, { recursive: true });
    await removeAbandoned(typeDir);
    const have = await storedArchives(typeDir, version);
    const lacking = Object.entries(archives).filter(([platform]) => have[platform] === undefined);
    if (lacking.length === 0) continue;
    const scratch = join(typeDir, `.${version}.partial-${process.pid}`);
    await rm(scratch, { recursive: true, force: true });
    await mkdir(scratch, { recursive: true });
    try {
      const packages = [];
      for (const [platform, archive] of lacking) {
        const file = join(scratch, `${platform}.zip`);
        await link(join(from, archive.url), file).catch(() => copyFile(join(from, archive.url), file));
        packages.push({ platform, file, name: packageFileName(alias, version, platform), hashes: archive.hashes });
      }
      await storeProviderPackages(typeDir, version, packages);
      run.log(`${providerKey(alias)} ${version}: linked ${lacking.map(([p]) => p).join(', ')} from ${providerKey(address)}`);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }
}

/**
 * The package's checksum list and signature (once per version: every
 * platform names the same pair), then the package itself; gives its h1: and
 * zh: hashes once all of Terraform's checks have passed.
 */
async function fetchChecked(
  run: ProviderRun,
  meta: PackageMeta,
  file: string,
  signedLists: Map<string, Promise<SignedList>>,
  release: string,
  platform: string,
): Promise<string[]> {
  const what = `${release} ${platform}`;
  const listKey = JSON.stringify([meta.shasumsUrl.href, meta.shasumsSignatureUrl.href, meta.signingKeys]);
  let list = signedLists.get(listKey);
  if (list === undefined) {
    list = (async () => {
      const sums = await fetchBytes(run.http, meta.shasumsUrl, `${release} SHA256SUMS`);
      const signature = await fetchBytes(run.http, meta.shasumsSignatureUrl, `${release} SHA256SUMS signature`);
      const keyId = await refusedAs(release, () => verifyChecksumSignature(sums, signature, meta.signingKeys));
      // Once per list, whichever platform reaches it first: name the release only.
      run.log(`${release}: SHA256SUMS signed by ${keyId}`);
      return { sums, signature, keyId, keys: meta.listedKeys, protocols: meta.protocols };
    })();
    signedLists.set(listKey, list);
  }
  const document = (await list).sums;
  await refusedAs(what, async () => checkChecksumList(document, meta.filename, meta.shasum));
  const sha256 = await download(run.http, meta.downloadUrl, file, `${what} package`);
  await refusedAs(what, async () => checkArchiveChecksum(sha256, meta.shasum), 'Nothing was stored for this package; sync fetches it again on the next run.');
  let h1: string;
  try {
    h1 = await hashZipEntries(file);
  } catch (error) {
    throw new MirrorError('UPSTREAM_FAILED', `${what}: the package matches its signed checksum but is not a zip Terraform can install: ${messageOf(error)}`, {
      hint: 'The upstream signed a broken package; nothing was stored for it.',
      cause: error,
    });
  }
  // zh: is the zip's sha256, computed while it was downloaded and just checked.
  return [h1, `zh:${sha256}`];
}

/**
 * Terraform's checks (providers/signature.ts, shared with publish and
 * verify) as sync failures of one package, in Terraform's words after the
 * package's name.
 */
async function refusedAs<T>(
  what: string,
  check: () => Promise<T>,
  hint = 'Nothing was stored for this package; the upstream serves something other than what it signed.',
): Promise<T> {
  try {
    return await check();
  } catch (error) {
    if (!(error instanceof AuthenticationError)) throw error;
    const noKey = error instanceof NoSigningKeyError;
    throw new MirrorError('UPSTREAM_FAILED', `${what}: ${error.message}`, {
      hint: noKey ? 'sync keeps only signed packages; ask the upstream to publish its signing key.' : hint,
      cause: error,
    });
  }
}

/** Streams the package to `file`, hashing as it goes; a retry starts the file afresh. */
async function download(http: HttpClient, url: URL, file: string, what: string): Promise<string> {
  return http.get(url, what, async (body) => {
    const hash = createHash('sha256');
    let size = 0;
    const count = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        size += chunk.length;
        if (size > MAX_PACKAGE_BYTES)
          return done(new MirrorError('UPSTREAM_FAILED', `${what}: ${url} is larger than ${MAX_PACKAGE_BYTES / 1024 ** 3} GiB; no provider package is.`));
        hash.update(chunk);
        done(null, chunk);
      },
    });
    await pipeline(body, count, createWriteStream(file));
    return hash.digest('hex');
  });
}

/** Terraform accepts a package whose h1: or zh: is among the lock file's hashes; so does sync. */
function checkLocked(hashes: string[], locked: LockedProvider, what: string, run: ProviderRun, provider: string, version: string, platform: string): boolean {
  if (locked.hashes.length === 0 || hashes.some((h) => locked.hashes.includes(h))) return true;
  fail(run, {
    provider,
    version,
    platform,
    message: `${what}: the package doesn't match any of the checksums previously recorded in the dependency lock file (it has ${hashes.join(', ')}); refused`,
  });
  return false;
}

function from(needs: ProviderNeed[]): string {
  const callers = needs.map((n) => n.calledFrom).filter((c): c is string => c !== undefined);
  return callers.length === 0 ? '' : ` (required by ${callers.join('; ')})`;
}

function fail(run: ProviderRun, failure: SyncResult['failures'][number]): void {
  run.result.failures.push(failure);
  run.log(`error: ${failure.message}`);
}
