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
import type { Manifest } from '../manifest.js';
import { DEFAULT_PROVIDERS_PATH, parseProviderKey, PROVIDERS_INDEX_FILE, providerIndexFile, providerVersionFile } from '../protocol/providers.js';
import { hashZipEntries } from './hash.js';
import { providersIndexOf } from './emit.js';

type Json = Record<string, unknown>;

export interface ProviderVerifyContext {
  dir: string;
  json: (rel: string) => Promise<Json | undefined>;
  problem: (path: string, message: string) => void;
  hashArchives: boolean;
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
      problem(indexRel, `lists versions ${JSON.stringify(Object.keys((index['versions'] as Json | undefined) ?? {}))}, the manifest ${JSON.stringify(versions)}`);
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
          const resolved = typeof listed.url === 'string' ? decodeURIComponent(new URL(listed.url, `http://mirror/${versionRel}`).pathname.slice(1)) : undefined;
          if (resolved !== a.archive) problem(versionRel, `archives.${a.platform}.url ${JSON.stringify(listed.url)} resolves to ${resolved}, the manifest says ${a.archive}`);
          if (!same(listed.hashes, a.hashes)) problem(versionRel, `archives.${a.platform}.hashes ${JSON.stringify(listed.hashes)} differ from the manifest's ${JSON.stringify(a.hashes)}`);
        }
        await verifyZip(a, ctx);
      }
    }
  }
  // A mirror built before providers has no providers index; one with providers needs it (serve reads it).
  if (Object.keys(entries).length === 0 && !existsSync(join(ctx.dir, PROVIDERS_INDEX_FILE))) return;
  const index = await json(PROVIDERS_INDEX_FILE);
  if (index && !same(index, providersIndexOf(path, entries))) problem(PROVIDERS_INDEX_FILE, 'does not list the providers, versions and platforms of the manifest');
}

async function verifyZip(a: { archive: string; sha256: string; size: number; hashes: string[] }, ctx: ProviderVerifyContext): Promise<void> {
  const file = join(ctx.dir, a.archive);
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
