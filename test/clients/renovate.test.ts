// Renovate against a modmirror registry. Renovate cannot run here (no
// network to install it), so each test sends exactly the requests Renovate
// 44.39.2 sends (renovatebot/renovate c2dd4f856f) for a registry that is not
// registry.terraform.io, app.terraform.io or registry.opentofu.org, and reads
// the answers as it does:
//
// - terraform-module datasource (lib/modules/datasource/terraform-module/
//   index.ts queryModuleRegistry, base.ts, utils.ts createSDBackendURL):
//   GET https://HOST/.well-known/terraform.json, then
//   GET {modules.v1}NAMESPACE/NAME/PROVIDER/versions; reads
//   modules[0].versions[].version (a non-empty list) and modules[0].source,
//   kept as the source URL only when it is an http(s) URL. No homepage and no
//   release dates for such a registry.
// - terraform-provider datasource (terraform-provider/index.ts
//   queryProviderRegistry): discovery, then GET
//   {providers.v1}NAMESPACE/TYPE/versions; reads versions[].version.
// - the lock file update (manager/terraform/lockfile/hash.ts createHashes,
//   the datasource's getBuilds and getZipHashes): discovery,
//   {providers.v1}NAMESPACE/TYPE/versions for the version's platforms, then
//   {providers.v1}NAMESPACE/TYPE/VERSION/download/OS/ARCH for each; fetches
//   shasums_url as text (each line's first field is a zh: hash) and
//   download_url as a stream (its files' Go dirhash is the h1: hash). Both
//   URLs are requested as written: Renovate's http layer refuses a relative
//   URL ("Invalid URL"), so they resolve only in a mirror built with a baseUrl.
//
// A relative modules.v1 or providers.v1 is joined to the registry URL with
// url-join (not resolved against the discovery document's URL). Every request
// carries `user-agent: Renovate/VERSION (https://github.com/renovatebot/renovate)`
// (the userAgent option's default) and got 14's `accept-encoding: gzip,
// deflate, br, zstd` (Node 24 has brotli and zstd); JSON requests add
// `accept: application/json`.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientRequest } from '../http-client.js';
import { goH1 } from '../providers/zips.js';
import { VERSIONS } from './install.js';
import { BOT_HOSTS, lockHashesOf, PROVIDER_RELEASES, startBotMirror, type BotMirror } from './update-bots.js';

const RENOVATE = '44.39.2';
const HEADERS = { 'user-agent': `Renovate/${RENOVATE} (https://github.com/renovatebot/renovate)`, 'accept-encoding': 'gzip, deflate, br, zstd' };

let mirror: BotMirror;
beforeAll(async () => {
  mirror = await startBotMirror('mm-renovate-');
}, 300_000);
afterAll(async () => {
  await mirror?.stop();
});

/** Renovate's http layer: an absolute http(s) URL or "Invalid URL" (http.ts resolveUrl, no baseUrl for these datasources). */
function resolveUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`Invalid URL: ${url}`);
  }
  if (!['http:', 'https:'].includes(parsed.protocol)) throw new Error(`Invalid URL: ${url}`);
  return parsed.href;
}

async function get(url: string, accept?: string): Promise<ReturnType<typeof clientRequest>> {
  const res = await clientRequest(resolveUrl(url), { headers: { ...HEADERS, ...(accept ? { accept } : {}) }, dispatcher: mirror.dispatcher });
  // got undoes gzip, deflate, br and zstd; the registry sends gzip or nothing.
  expect([undefined, 'gzip'], url).toContain(res.wireEncoding);
  expect(res.status, url).toBe(200);
  return res;
}

/** http.getJson: got parses the body as JSON whatever its type; the registry's say application/json all the same. */
async function getJson(url: string): Promise<any> {
  const res = await get(url, 'application/json');
  expect(res.headers['content-type'], url).toMatch(/^application\/json/);
  return res.json();
}

/** url-join 5, as util/url.ts joinUrlParts calls it: empty parts dropped, a part's inner slashes trimmed, joined with '/'. */
function joinUrlParts(...parts: string[]): string {
  const kept = parts.filter((p) => p !== '');
  return kept
    .map((p, i) => (i > 0 ? p.replace(/^\/+/, '') : p))
    .map((p, i) => (i < kept.length - 1 ? p.replace(/\/+$/, '') : p.replace(/\/+$/, '/')))
    .join('/');
}

const isHttpUrl = (value: unknown): boolean => {
  try {
    return typeof value === 'string' && ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
};

/** terraform-module/utils.ts createSDBackendURL. */
function createSDBackendURL(registryUrl: string, service: string | undefined, subPath: string): string {
  const full = joinUrlParts(service ?? '', subPath);
  return isHttpUrl(full) ? full : joinUrlParts(registryUrl, full);
}

/** base.ts: `${ensureTrailingSlash(registryUrl)}.well-known/terraform.json`. */
const discover = async (registryUrl: string) => (await getJson(`${registryUrl.replace(/\/?$/, '/')}.well-known/terraform.json`)) as Record<string, string>;

/** The registry URL Renovate derives from a source `HOST/NS/NAME/PROVIDER` (getRegistryRepository): https:// and the host. */
const registryOf = (url: string) => `https://${new URL(url).host}`;

/** terraform-module queryModuleRegistry, with ProtocolModuleResponse's checks. */
async function moduleReleases(registryUrl: string, repository: string) {
  const discovery = await discover(registryUrl);
  const url = createSDBackendURL(registryUrl, discovery['modules.v1'], `${repository}/versions`);
  const body = await getJson(url);
  expect(Array.isArray(body.modules) && body.modules.length > 0, 'a non-empty modules list').toBe(true);
  const [module] = body.modules as { versions: { version: unknown }[]; source?: unknown }[];
  const versions = module!.versions.filter((v) => typeof v.version === 'string');
  expect(versions.length, 'a non-empty versions list').toBeGreaterThan(0);
  return { url, releases: versions.map((v) => v.version as string), sourceUrl: isHttpUrl(module!.source) ? module!.source : undefined };
}

/** terraform-provider queryProviderRegistry. */
async function providerReleases(registryUrl: string, repository: string) {
  const discovery = await discover(registryUrl);
  const url = createSDBackendURL(registryUrl, discovery['providers.v1'], `${repository}/versions`);
  const body = await getJson(url);
  return { url, releases: (body.versions as { version: unknown }[]).filter((v) => typeof v.version === 'string').map((v) => v.version as string) };
}

/** lockfile/hash.ts createHashes over the datasource's getBuilds: the hashes Renovate writes into .terraform.lock.hcl. */
async function lockFileHashes(registryUrl: string, repository: string, version: string, scratch: string): Promise<{ hashes: string[]; urls: string[] }> {
  const discovery = await discover(registryUrl);
  const backendUrl = createSDBackendURL(registryUrl, discovery['providers.v1'], repository);
  const versions = (await getJson(`${backendUrl}/versions`)) as { versions: { version: string; platforms: { os: string; arch: string }[] }[] };
  const builds = versions.versions.find((v) => v.version === version);
  expect(builds, `${version} in the versions list`).toBeDefined();
  const urls: string[] = [];
  const downloads: { download_url: string; shasums_url?: string; filename: string; os: string; arch: string }[] = [];
  for (const platform of builds!.platforms) {
    const url = `${backendUrl}/${version}/download/${platform.os}/${platform.arch}`;
    urls.push(url);
    const doc = await getJson(url);
    for (const field of ['os', 'arch', 'filename', 'download_url']) expect(typeof doc[field], `${url} ${field}`).toBe('string');
    downloads.push(doc);
  }
  const zh: string[] = [];
  for (const shasumsUrl of [...new Set(downloads.map((d) => d.shasums_url).filter((u) => u !== undefined))]) {
    // getText, then each line's first field; Renovate logs a failure here and goes on without zh: hashes.
    let text: string;
    try {
      text = (await get(shasumsUrl)).text;
    } catch (error) {
      if (!/Invalid URL/.test((error as Error).message)) throw error;
      continue;
    }
    zh.push(
      ...text
        .trimEnd()
        .split('\n')
        .map((line) => line.split(/\s/)[0]!),
    );
  }
  const h1: string[] = [];
  for (const d of downloads) {
    // http.stream(build.url): the same resolveUrl, so a relative download_url fails the whole update.
    const zip = await get(d.download_url);
    expect(zip.wireEncoding, d.download_url).toBeUndefined();
    const file = join(scratch, `${d.os}_${d.arch}.zip`);
    writeFileSync(file, zip.body);
    // hashOfZipContent computes Go's dirhash Hash1 of the zip's files (its comment says so): goH1 is that.
    h1.push(await goH1(file));
  }
  return { hashes: [...new Set([...h1.map((h) => (h.startsWith('h1:') ? h : `h1:${h}`)), ...zh.map((h) => `zh:${h}`)])].sort(), urls };
}

describe.each(BOT_HOSTS.map((name, index) => [name, index] as const))('Renovate 44.39.2 against %s', (_name, index) => {
  const host = () => mirror.hosts[index]!;

  it('terraform-module datasource: discovery, then the versions document; every version, and no source link', async () => {
    const { url, releases, sourceUrl } = await moduleReleases(registryOf(host().url), 'acme/hello/null');
    expect(url, host().name).toBe(`${host().url}v1/modules/acme/hello/null/versions`);
    expect([...releases].sort()).toEqual([...VERSIONS].sort());
    // The versions document's `source` is the module's address, as the public registry's is: Renovate links no source.
    expect(sourceUrl).toBeUndefined();
  });

  it('terraform-provider datasource: discovery, then the in-house provider versions', async () => {
    const { url, releases } = await providerReleases(registryOf(host().url), 'acme/widgets');
    expect(url).toBe(`${host().url}v1/providers/acme/widgets/versions`);
    expect([...releases].sort()).toEqual(Object.keys(PROVIDER_RELEASES).sort());
  });
});

describe('Renovate 44.39.2 updating .terraform.lock.hcl for an in-house provider', () => {
  for (const index of [2, 3]) {
    it(`gets every platform's h1: and zh: hash, as terraform init records them, from ${BOT_HOSTS[index]}`, async () => {
      const host = mirror.hosts[index]!;
      for (const version of Object.keys(PROVIDER_RELEASES)) {
        const { hashes, urls } = await lockFileHashes(registryOf(host.url), 'acme/widgets', version, mirror.dir);
        expect(urls).toEqual(PROVIDER_RELEASES[version]!.map((p) => `${host.url}v1/providers/acme/widgets/${version}/download/${p.replace('_', '/')}`));
        // Terraform's own hashes are all there; Renovate adds zh: of every SHA256SUMS line (the release manifest's too), which is harmless.
        const expected = lockHashesOf(host.dist, version);
        expect(hashes).toEqual(expect.arrayContaining(expected));
        expect(hashes.filter((h) => h.startsWith('h1:'))).toEqual(expected.filter((h) => h.startsWith('h1:')));
      }
    });
  }

  it('fails with "Invalid URL" on a mirror built without a baseUrl, whose download documents hold relative URLs', async () => {
    for (const index of [0, 1]) {
      await expect(lockFileHashes(registryOf(mirror.hosts[index]!.url), 'acme/widgets', '1.0.0', mirror.dir)).rejects.toThrow(/Invalid URL: \.\.\//);
    }
  });
});
