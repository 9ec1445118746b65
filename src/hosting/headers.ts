// The `_headers` file at the top of the tree, for hosts that read one
// (Netlify, Cloudflare Pages and their likes): content types for files
// without an extension, CORS, short cache lifetimes for what changes, and the
// download headers Terraform needs. `modmirror hosting headers` writes it;
// every later write into a mirror that has one keeps it up to date.
//
// Such hosts substitute placeholders in paths but not reliably in header
// values, so the download headers get one literal rule per version, with the
// location made by the same function as the `download` file's body.
// Cloudflare Pages reads at most 100 rules: larger mirrors there need the
// edge function in the README ("Scaling out").

import { archiveLocation, basePathOf, downloadFile, downloadsSummaryFile, versionsFile } from '../protocol/paths.js';
import type { Staging } from '../mirror/staging.js';
import type { ModuleAddress } from '../types.js';
import {
  CACHE_LONG,
  CACHE_SHORT,
  CORS_HEADERS,
  downloadHeaders,
  JSON_TYPE,
  PROVIDER_ZIP_TYPE,
  RELEASE_SIGNATURE_TYPE,
  RELEASE_SUMS_TYPE,
} from '../protocol/headers.js';
import {
  providerDownloadFile,
  providerRegistryBase,
  providerSignatureFile,
  providerSumsFile,
  providerVersionsFile,
  providerZipFile,
  type ProvidersIndex,
} from '../protocol/providers.js';

export const HEADERS_FILE = '_headers';

const PLACEHOLDERS = { namespace: ':namespace', name: ':name', provider: ':provider' };

/** From every module's versions in address order (sortRecords). */
/** The modules, in address order, with their versions: records, or states read one at a time. */
type HeaderModules = Iterable<{ address: ModuleAddress; versions: readonly { version: string }[] }>;

export async function emitHeadersFile(staging: Staging, sorted: HeaderModules, baseUrl: string, providers?: ProvidersIndex): Promise<void> {
  await staging.writeChunks(HEADERS_FILE, headersChunks(sorted, baseUrl, providers));
}

/** The file's text a rule at a time: one rule per version is 35 MB of text at 100,000 versions. */
function* headersChunks(sorted: HeaderModules, baseUrl: string, providers: ProvidersIndex | undefined): Generator<string> {
  const prefix = basePathOf(baseUrl);
  const rule = (path: string, headers: Record<string, string>) =>
    [`${prefix}${path}`, ...Object.entries(headers).map(([name, value]) => `  ${name}: ${value}`), ''].join('\n');
  const json = { 'Content-Type': JSON_TYPE, 'Cache-Control': CACHE_SHORT };
  yield [
    '# Response headers for static hosts that read _headers (Netlify, Cloudflare Pages),',
    '# written by modmirror (modmirror hosting headers). Files without an extension are JSON; Terraform reads',
    '# the download location only from X-Terraform-Get. See the README, "Static hosts".',
    '',
    rule('*', CORS_HEADERS),
    rule('.well-known/terraform.json', { 'Cache-Control': CACHE_SHORT }),
    rule(versionsFile(PLACEHOLDERS), json),
    rule(downloadsSummaryFile(PLACEHOLDERS), json),
  ].join('\n');
  for (const record of sorted) {
    for (const { version } of record.versions) {
      const location = archiveLocation(record.address, version, baseUrl);
      yield `\n${rule(downloadFile(record.address, version), { ...json, ...downloadHeaders(location) })}`;
    }
  }
  // The network mirror's JSON files end in .json, which hosts type themselves. Its zips get a
  // literal rule each (these hosts match no suffix pattern): the type, and a long cache life.
  for (const p of providers?.providers ?? []) {
    for (const v of p.versions) {
      for (const platform of v.platforms)
        yield `\n${rule(providerZipFile(providers!.path, p, v.version, platform), { 'Content-Type': PROVIDER_ZIP_TYPE, 'Cache-Control': CACHE_LONG })}`;
      if (v.key_id === undefined) continue;
      // An in-house release's SHA256SUMS and signature, and its documents (files without an extension).
      yield `\n${rule(providerSumsFile(providers!.path, p, v.version), { 'Content-Type': RELEASE_SUMS_TYPE, 'Cache-Control': CACHE_LONG })}`;
      yield `\n${rule(providerSignatureFile(providers!.path, p, v.version), { 'Content-Type': RELEASE_SIGNATURE_TYPE, 'Cache-Control': CACHE_LONG })}`;
      const base = providerRegistryBase(providers!.path, v.upstream ? p.hostname : undefined);
      for (const platform of v.platforms) yield `\n${rule(providerDownloadFile(p.namespace, p.type, v.version, platform, base), json)}`;
    }
    if (p.registry) yield `\n${rule(providerVersionsFile(p.namespace, p.type), json)}`;
    if (p.versions.some((v) => v.upstream))
      yield `\n${rule(providerVersionsFile(p.namespace, p.type, providerRegistryBase(providers!.path, p.hostname)), json)}`;
  }
}
