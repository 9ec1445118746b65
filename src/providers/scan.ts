// Provider folders -> one package record per zip: its address, version and
// platform, and its sha256, h1: and zh: from the zip's own bytes (hashed once,
// cached by file stamp). Every claim an input folder makes about a zip (the
// hashes in a `terraform providers mirror` VERSION.json, the line in a
// release's SHA256SUMS) is checked against those bytes; any mismatch refuses
// the build, naming the file and what differs.

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ProviderFolder } from '../config/providers.js';
import { mapLimited } from '../concurrency.js';
import { MirrorError } from '../errors.js';
import {
  isPlatform,
  isProviderHostname,
  isProviderPart,
  parseProviderZipName,
  providerKey,
  providerSumsName,
  type ProviderAddress,
} from '../protocol/providers.js';
import { validVersion } from '../version-order.js';
import { ProviderHashCache } from './hash-cache.js';

export interface ProviderPackage {
  address: ProviderAddress;
  version: string;
  platform: string;
  /** Absolute path of the zip in its input folder. */
  file: string;
  sha256: string;
  size: number;
  h1: string;
  zh: string;
}

export interface ProviderScan {
  packages: ProviderPackage[];
  /** Zips read and hashed in this run (the rest came from the hash cache), and their bytes. */
  hashed: number;
  bytesHashed: number;
}

/** A zip found in a folder, with what the folder says about it. */
interface Candidate {
  address: ProviderAddress;
  version: string;
  platform: string;
  file: string;
  /** Hashes the folder lists for it (VERSION.json), each to be checked. */
  claimed: string[];
  /** The sha256 the release's SHA256SUMS lists for it. */
  sum?: { hex: string; file: string };
  /** Where the claims come from, for messages. */
  listedIn: string;
}

const HASH_CONCURRENCY = 4;

export async function scanProviders(folders: ProviderFolder[], cacheDir: string, options: { reuse?: boolean } = {}): Promise<ProviderScan> {
  const problems: string[] = [];
  const candidates = folders.flatMap((folder) => (folder.kind === 'mirror' ? readMirrorFolder(folder.dir, problems) : readReleaseFolder(folder, problems)));
  const cache = new ProviderHashCache(cacheDir, options.reuse !== false);
  const hashed = await mapLimited(candidates, HASH_CONCURRENCY, async (c) => {
    try {
      return { candidate: c, hashes: await cache.hashes(c.file) };
    } catch (error) {
      problems.push(`${c.file}: ${(error as Error).message.replace(`${c.file}: `, '')}`);
      return undefined;
    }
  });
  cache.save(new Set(candidates.map((c) => c.file)));

  const byKey = new Map<string, ProviderPackage>();
  for (const item of hashed) {
    if (!item) continue;
    const { candidate: c, hashes } = item;
    const sha256 = hashes.zh.slice('zh:'.length);
    let ok = true;
    for (const claim of c.claimed) {
      const [scheme] = claim.split(':');
      // Schemes other than h1:/zh: (none exist today) cannot be checked here; they are dropped, not trusted.
      const actual = scheme === 'h1' ? hashes.h1 : scheme === 'zh' ? hashes.zh : undefined;
      if (actual !== undefined && actual !== claim) {
        problems.push(`${c.listedIn}: ${c.platform} lists ${claim} for ${c.file}, but the zip's ${scheme}: is ${actual}`);
        ok = false;
      }
    }
    if (c.sum && c.sum.hex !== sha256) {
      problems.push(`${c.sum.file}: lists sha256 ${c.sum.hex} for ${c.file}, but the zip's sha256 is ${sha256}`);
      ok = false;
    }
    if (!ok) continue;
    const key = `${providerKey(c.address)}@${c.version}:${c.platform}`;
    const earlier = byKey.get(key);
    if (earlier && earlier.sha256 !== sha256) {
      problems.push(
        `${c.file}: ${providerKey(c.address)} ${c.version} ${c.platform} differs from ${earlier.file} (sha256 ${sha256} and ${earlier.sha256}); keep one of them`,
      );
      continue;
    }
    if (!earlier)
      byKey.set(key, { address: c.address, version: c.version, platform: c.platform, file: c.file, sha256, size: hashes.size, h1: hashes.h1, zh: hashes.zh });
  }
  if (problems.length > 0) {
    throw new MirrorError('PROVIDER_INVALID', `${problems.length} problem(s) in the provider folders; nothing was written:\n${problems.join('\n')}`, {
      hint: 'Fetch the named zips again (terraform providers mirror, or the release), or remove them from the folder.',
    });
  }
  return { packages: [...byKey.values()], hashed: cache.hashed, bytesHashed: cache.bytesHashed };
}

const visible = (dir: string) => readdirSync(dir, { withFileTypes: true }).filter((e) => !e.name.startsWith('.'));

/** HOSTNAME/NAMESPACE/TYPE/{index.json, VERSION.json, zips}, as `terraform providers mirror` writes it. */
function readMirrorFolder(dir: string, problems: string[]): Candidate[] {
  const candidates: Candidate[] = [];
  for (const host of visible(dir)) {
    if (!host.isDirectory()) continue;
    if (!isProviderHostname(host.name)) {
      problems.push(
        `${join(dir, host.name)}: "${host.name}" is not a registry host name; a provider folder is laid out HOSTNAME/NAMESPACE/TYPE/ as terraform providers mirror writes it`,
      );
      continue;
    }
    for (const ns of visible(join(dir, host.name))) {
      if (!ns.isDirectory()) continue;
      for (const type of visible(join(dir, host.name, ns.name))) {
        if (!type.isDirectory()) continue;
        const typeDir = join(dir, host.name, ns.name, type.name);
        if (!isProviderPart(ns.name) || !isProviderPart(type.name)) {
          problems.push(`${typeDir}: "${ns.name}/${type.name}" is not a provider namespace/type (lower-case letters, digits and "-")`);
          continue;
        }
        candidates.push(...readProviderDir(typeDir, { hostname: host.name, namespace: ns.name, type: type.name }, problems));
      }
    }
  }
  return candidates;
}

function readProviderDir(typeDir: string, address: ProviderAddress, problems: string[]): Candidate[] {
  const indexFile = join(typeDir, 'index.json');
  // An empty folder holds nothing: what a sync (or a cache's fill) leaves when the upstream's packages were refused.
  if (!existsSync(indexFile) && visible(typeDir).length === 0) return [];
  const index = readJson(indexFile, problems) as { versions?: unknown } | undefined;
  if (!index) return [];
  if (typeof index.versions !== 'object' || index.versions === null || Array.isArray(index.versions)) {
    problems.push(`${indexFile}: has no "versions" object`);
    return [];
  }
  const candidates: Candidate[] = [];
  for (const version of Object.keys(index.versions)) {
    if (validVersion(version) !== version) {
      problems.push(`${indexFile}: "${version}" is not a version such as 1.2.3`);
      continue;
    }
    const versionFile = join(typeDir, `${version}.json`);
    const doc = readJson(versionFile, problems) as { archives?: unknown } | undefined;
    if (!doc) continue;
    if (typeof doc.archives !== 'object' || doc.archives === null || Array.isArray(doc.archives)) {
      problems.push(`${versionFile}: has no "archives" object`);
      continue;
    }
    for (const [platform, value] of Object.entries(doc.archives as Record<string, unknown>)) {
      const archive = value as { url?: unknown; hashes?: unknown };
      if (!isPlatform(platform)) {
        problems.push(`${versionFile}: archives key "${platform}" is not an OS_ARCH platform such as linux_amd64`);
        continue;
      }
      // terraform providers mirror names the zip beside the document; a URL elsewhere is not a local package.
      if (typeof archive?.url !== 'string' || !/^[A-Za-z0-9._+-]+\.zip$/.test(archive.url)) {
        problems.push(`${versionFile}: archives.${platform}.url ${JSON.stringify(archive?.url)} is not the name of a zip beside it`);
        continue;
      }
      const hashes = archive.hashes ?? [];
      if (!Array.isArray(hashes) || !hashes.every((h) => typeof h === 'string')) {
        problems.push(`${versionFile}: archives.${platform}.hashes is not a list of strings`);
        continue;
      }
      const file = join(typeDir, archive.url);
      if (!existsSync(file)) {
        problems.push(`${versionFile}: archives.${platform}.url names ${archive.url}, which is not in ${typeDir}`);
        continue;
      }
      candidates.push({ address, version, platform, file, claimed: hashes, listedIn: versionFile });
    }
  }
  return candidates;
}

/** Release zips and their TYPE_VERSION_SHA256SUMS files, all of the entry's hostname and namespace. */
function readReleaseFolder(folder: Extract<ProviderFolder, { kind: 'releases' }>, problems: string[]): Candidate[] {
  const candidates: Candidate[] = [];
  const sums = new Map<string, Map<string, string> | undefined>();
  const sumsOf = (type: string, version: string) => {
    const name = providerSumsName(type, version);
    if (!sums.has(name)) sums.set(name, readSums(join(folder.dir, name), problems));
    return { name, lines: sums.get(name) };
  };
  for (const entry of visible(folder.dir)) {
    if (!entry.isFile() || !entry.name.endsWith('.zip')) continue;
    const file = join(folder.dir, entry.name);
    const parsed = parseProviderZipName(entry.name);
    if (!parsed || validVersion(parsed.version) !== parsed.version) {
      problems.push(`${file}: not named terraform-provider-TYPE_VERSION_OS_ARCH.zip`);
      continue;
    }
    const { name, lines } = sumsOf(parsed.type, parsed.version);
    if (!lines) {
      problems.push(`${file}: no ${name} beside it to check it against`);
      continue;
    }
    const hex = lines.get(entry.name);
    if (hex === undefined) {
      problems.push(`${join(folder.dir, name)}: lists no line for ${entry.name}`);
      continue;
    }
    candidates.push({
      address: { hostname: folder.hostname, namespace: folder.namespace, type: parsed.type },
      version: parsed.version,
      platform: parsed.platform,
      file,
      claimed: [],
      sum: { hex, file: join(folder.dir, name) },
      listedIn: join(folder.dir, name),
    });
  }
  return candidates;
}

/** `HEX  NAME` lines (sha256sum's format; a `*` before the name marks binary mode). Undefined when there is no file. */
function readSums(file: string, problems: string[]): Map<string, string> | undefined {
  if (!existsSync(file) || !statSync(file).isFile()) return undefined;
  const lines = new Map<string, string>();
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (line.trim() === '') return;
      const match = /^([0-9a-fA-F]{64}) [ *]?(\S.*)$/.exec(line.trimEnd());
      if (!match) problems.push(`${file}:${i + 1}: not a "SHA256  FILE" line`);
      else lines.set(match[2]!, match[1]!.toLowerCase());
    });
  return lines;
}

function readJson(file: string, problems: string[]): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as unknown;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    problems.push(`${file}: ${code === 'ENOENT' ? 'missing' : `does not parse: ${(error as Error).message}`}`);
    return undefined;
  }
}
