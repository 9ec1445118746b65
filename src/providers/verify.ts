// `verify` of the provider network mirror: every provider the manifest lists
// has an index.json of exactly its versions, a VERSION.json per version whose
// archives, relative urls and hashes are the manifest's, and zips whose
// sizes (and, when hashing, zh: from the bytes and h1: from the entries)
// match. Each problem names the file it is about.

import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { readFile } from 'node:fs/promises';
import type { Manifest, ProviderVersion } from '../mirror/manifest.js';
import {
  DEFAULT_PROVIDERS_PATH,
  parseProviderKey,
  PROVIDERS_INDEX_FILE,
  providerDownloadFile,
  providerIndexFile,
  providerRegistryBase,
  providerVersionFile,
  providerVersionsDocument,
  providerVersionsFile,
  providerZipName,
  type ProviderAddress,
} from '../protocol/providers.js';
import { keyStatus, type SigningKey } from '../openpgp/keys.js';
import { AuthenticationError, checkChecksumList, verifyChecksumSignature } from './signature.js';
import { hashZipEntries } from './hash.js';
import { providersIndexOf, registryBaseOf } from './emit.js';

type Json = Record<string, unknown>;

export interface ProviderVerifyContext {
  /** Where each file of the mirror is. */
  at: (rel: string) => string;
  json: (rel: string) => Promise<Json | undefined>;
  problem: (path: string, message: string) => void;
  hashArchives: boolean;
  /** The URL path the tree is served under (`/`, or the baseUrl's path): download documents' absolute URLs start with it. */
  basePath?: string;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export async function verifyProviders(manifest: Manifest, ctx: ProviderVerifyContext): Promise<void> {
  const { json, problem } = ctx;
  const path = manifest.providers_path ?? DEFAULT_PROVIDERS_PATH;
  const entries = manifest.providers ?? {};
  if (typeof entries !== 'object' || entries === null || Array.isArray(entries)) {
    problem('manifest.json', 'providers is not an object');
    return;
  }
  for (const [key, entry] of Object.entries(entries)) {
    const address = parseProviderKey(key);
    const versions = entry.versions.map((v) => v.version);
    const indexRel = providerIndexFile(path, address);
    const index = await json(indexRel);
    if (index && !same(Object.keys((index['versions'] as Json | undefined) ?? {}).sort(), [...versions].sort())) {
      problem(
        indexRel,
        `lists versions ${JSON.stringify(Object.keys((index['versions'] as Json | undefined) ?? {}))}, the manifest ${JSON.stringify(versions)}`,
      );
    }
    for (const v of entry.versions) {
      const versionRel = providerVersionFile(path, address, v.version);
      const doc = await json(versionRel);
      const archives = (doc?.['archives'] as Record<string, { url?: unknown; hashes?: unknown }> | undefined) ?? {};
      if (doc && !same(Object.keys(archives).sort(), v.archives.map((a) => a.platform).sort())) {
        problem(versionRel, `lists platforms ${JSON.stringify(Object.keys(archives))}, the manifest ${JSON.stringify(v.archives.map((a) => a.platform))}`);
      }
      for (const a of v.archives) {
        const listed = archives[a.platform];
        if (doc && listed) {
          // Resolve as Terraform does: the url against the document's own URL.
          const resolved =
            typeof listed.url === 'string' ? decodeURIComponent(new URL(listed.url, `http://mirror/${versionRel}`).pathname.slice(1)) : undefined;
          if (resolved !== a.archive)
            problem(versionRel, `archives.${a.platform}.url ${JSON.stringify(listed.url)} resolves to ${resolved}, the manifest says ${a.archive}`);
          if (!same(listed.hashes, a.hashes))
            problem(versionRel, `archives.${a.platform}.hashes ${JSON.stringify(listed.hashes)} differ from the manifest's ${JSON.stringify(a.hashes)}`);
        }
        await verifyZip(a, ctx);
      }
      if (v.registry) await verifyRelease(path, address, v, ctx);
    }
    // In-house versions and an upstream's each have their versions document, where their download documents are.
    for (const upstream of [false, true]) {
      const listed = entry.versions.filter((v) => v.registry && (v.registry.upstream === true) === upstream);
      if (listed.length === 0) continue;
      const rel = providerVersionsFile(address.namespace, address.type, providerRegistryBase(path, upstream ? address.hostname : undefined));
      const expected = providerVersionsDocument(
        listed.map((v) => ({ version: v.version, protocols: v.registry!.protocols, platforms: v.archives.map((a) => a.platform) })),
      );
      const doc = await json(rel);
      if (doc && !same(doc, expected)) problem(rel, 'does not list the versions, protocols and platforms of the manifest');
    }
  }
  // A mirror built before providers has no providers index; one with providers needs it (serve reads it).
  if (Object.keys(entries).length === 0 && !existsSync(ctx.at(PROVIDERS_INDEX_FILE))) return;
  const index = await json(PROVIDERS_INDEX_FILE);
  if (index && !same(index, providersIndexOf(path, entries)))
    problem(PROVIDERS_INDEX_FILE, 'does not list the providers, versions and platforms of the manifest');
}

async function verifyZip(a: { archive: string; sha256: string; size: number; hashes: string[] }, ctx: ProviderVerifyContext): Promise<void> {
  const file = ctx.at(a.archive);
  let size: number;
  try {
    size = (await stat(file)).size;
  } catch {
    ctx.problem(a.archive, 'missing: the manifest lists this provider package');
    return;
  }
  if (size !== a.size) ctx.problem(a.archive, `size ${size} differs from the manifest's ${a.size}`);
  if (!ctx.hashArchives) return;
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  const sha256 = hash.digest('hex');
  if (sha256 !== a.sha256) ctx.problem(a.archive, `sha256 ${sha256} differs from the manifest's ${a.sha256}`);
  const zh = a.hashes.find((h) => h.startsWith('zh:'));
  if (zh !== `zh:${sha256}`) ctx.problem(a.archive, `zh: from its bytes is zh:${sha256}, the manifest lists ${zh}`);
  const h1 = a.hashes.find((h) => h.startsWith('h1:'));
  let actual: string;
  try {
    actual = await hashZipEntries(file);
  } catch (error) {
    ctx.problem(a.archive, (error as Error).message.replace(`${file}: `, ''));
    return;
  }
  if (h1 !== actual) ctx.problem(a.archive, `h1: from its entries is ${actual}, the manifest lists ${h1}`);
}

/**
 * An in-house release as Terraform will check it: each platform's download
 * document (its URLs resolved against it, as Terraform resolves them) names
 * the zip, the SHA256SUMS and the signature the manifest lists; the
 * SHA256SUMS line for the zip is its shasum; the signature is by the key the
 * document lists, and that key is neither expired nor revoked.
 */
async function verifyRelease(path: string, address: ProviderAddress, v: ProviderVersion, ctx: ProviderVerifyContext): Promise<void> {
  const registry = v.registry!;
  const sums = await readChecked(registry.shasums, ctx);
  const signature = await readChecked(registry.signature, ctx);
  const keys = new Map<string, SigningKey>();
  for (const a of v.archives) {
    const rel = providerDownloadFile(address.namespace, address.type, v.version, a.platform, registryBaseOf(path, address, registry));
    const doc = await ctx.json(rel);
    if (!doc) continue;
    const resolve = (field: string) => {
      const url = doc[field];
      const basePath = ctx.basePath ?? '/';
      return typeof url === 'string'
        ? decodeURIComponent(new URL(url, new URL(`${basePath}${rel}`, 'http://mirror/')).pathname).slice(basePath.length)
        : undefined;
    };
    const [os, arch] = a.platform.split('_');
    const filename = providerZipName(address.type, v.version, a.platform);
    const expectations: [string, unknown, unknown][] = [
      ['os', doc['os'], os],
      ['arch', doc['arch'], arch],
      ['filename', doc['filename'], filename],
      ['shasum', doc['shasum'], a.sha256],
      ['protocols', doc['protocols'], registry.protocols],
      ['download_url', resolve('download_url'), a.archive],
      ['shasums_url', resolve('shasums_url'), registry.shasums.file],
      ['shasums_signature_url', resolve('shasums_signature_url'), registry.signature.file],
    ];
    for (const [field, actual, expected] of expectations) {
      if (!same(actual, expected)) ctx.problem(rel, `${field} is ${JSON.stringify(actual)}, the manifest says ${JSON.stringify(expected)}`);
    }
    const listed = ((doc['signing_keys'] as Json | undefined)?.['gpg_public_keys'] as { key_id?: unknown; ascii_armor?: unknown }[] | undefined) ?? [];
    const key = listed.find((k) => k.key_id === registry.key_id);
    if (!key || typeof key.ascii_armor !== 'string') {
      ctx.problem(rel, `signing_keys lists no key ${registry.key_id}, the key the manifest says signed ${registry.shasums.file}`);
      continue;
    }
    keys.set(registry.key_id, { keyId: registry.key_id, asciiArmor: key.ascii_armor });
    if (sums) {
      try {
        checkChecksumList(sums, filename, a.sha256);
      } catch (error) {
        ctx.problem(registry.shasums.file, (error as Error).message);
      }
    }
  }
  const key = keys.get(registry.key_id);
  if (!sums || !signature || !key) return;
  try {
    await verifyChecksumSignature(sums, signature, [key]);
  } catch (error) {
    ctx.problem(registry.signature.file, error instanceof AuthenticationError ? error.message : (error as Error).message);
  }
}

async function readChecked(file: { file: string; sha256: string }, ctx: ProviderVerifyContext): Promise<Buffer | undefined> {
  let data: Buffer;
  try {
    data = await readFile(ctx.at(file.file));
  } catch {
    ctx.problem(file.file, 'missing: the manifest lists this release file');
    return undefined;
  }
  const sha256 = createHash('sha256').update(data).digest('hex');
  if (sha256 !== file.sha256) ctx.problem(file.file, `sha256 ${sha256} differs from the manifest's ${file.sha256}`);
  return data;
}

/**
 * Signing keys of in-house releases that are expired or revoked now: not a
 * fault of the mirror (the releases were signed while the key was good, and
 * stay installable), but time to sign new versions with another key.
 */
export async function signingKeyWarnings(dir: string, manifest: Manifest, now = new Date()): Promise<string[]> {
  const warnings: string[] = [];
  const seen = new Set<string>();
  for (const [key, entry] of Object.entries(manifest.providers ?? {})) {
    const address = parseProviderKey(key);
    for (const v of entry.versions) {
      // An upstream's key is the upstream's to renew; its releases stay installable as they are.
      if (!v.registry || v.registry.upstream || seen.has(v.registry.key_id) || v.archives.length === 0) continue;
      seen.add(v.registry.key_id);
      const rel = providerDownloadFile(address.namespace, address.type, v.version, v.archives[0]!.platform);
      let listed: { key_id?: unknown; ascii_armor?: unknown }[];
      try {
        listed =
          (JSON.parse(await readFile(join(dir, rel), 'utf8')) as { signing_keys?: { gpg_public_keys?: typeof listed } }).signing_keys?.gpg_public_keys ?? [];
      } catch {
        continue; // verify reports the document itself
      }
      const armor = listed.find((k) => k.key_id === v.registry!.key_id)?.ascii_armor;
      if (typeof armor !== 'string') continue;
      const status = await keyStatus({ keyId: v.registry.key_id, asciiArmor: armor }, now).catch((error: Error) => error.message);
      if (status)
        warnings.push(
          `${rel}: signing ${status}; the versions it signed stay installable, but sign new ones with a current key (keys: lists both while they overlap)`,
        );
    }
  }
  return warnings;
}
