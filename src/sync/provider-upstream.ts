// The provider registry protocol (`providers.v1`), the part a sync needs,
// read as Terraform's registry client reads it (internal/getproviders
// registry_client.go): `versions` lists versions, `download/OS/ARCH` gives
// one package's metadata, and a 404 there means "no package for this
// platform". URLs in the metadata may be relative to the document.

import { MirrorError } from '../errors.js';
import type { ProviderAddress } from '../protocol/providers.js';
import type { SigningKey } from '../openpgp/keys.js';
import { UpstreamStatusError, type HttpClient } from './http.js';

export type { SigningKey };

export interface PackageMeta {
  platform: string;
  filename: string;
  downloadUrl: URL;
  shasumsUrl: URL;
  shasumsSignatureUrl: URL;
  /** Lower-case hex sha256 of the zip, as the registry states it. */
  shasum: string;
  signingKeys: SigningKey[];
  /** The signing keys as the document lists them (with trust_signature, source, ...), for a cache that serves them again. */
  listedKeys: Record<string, unknown>[];
  /** The plugin protocol versions the document names (empty when it names none). */
  protocols: string[];
}

const path = (a: ProviderAddress) => `${encodeURIComponent(a.namespace)}/${encodeURIComponent(a.type)}`;

/** One version as a providers.v1 versions document lists it. */
export interface ListedProviderVersion {
  version: string;
  protocols: string[];
  platforms: { os: string; arch: string }[];
}

/** Every version the upstream lists for a provider. */
export async function listProviderVersions(http: HttpClient, providers: URL, address: ProviderAddress, what: string): Promise<string[]> {
  return (await listProviderRegistryVersions(http, providers, address, what)).map((v) => v.version);
}

/** Every version the upstream lists for a provider, with its protocols and platforms (an entry without a version string left out). */
export async function listProviderRegistryVersions(http: HttpClient, providers: URL, address: ProviderAddress, what: string): Promise<ListedProviderVersion[]> {
  const url = new URL(`${path(address)}/versions`, providers);
  const { value } = await http.json(url, `${what} versions`);
  const versions = (value as { versions?: unknown } | undefined)?.versions;
  if (!Array.isArray(versions)) {
    throw new MirrorError('UPSTREAM_FAILED', `${url} is not a provider versions document (no "versions" list).`, {
      hint: 'Check that --from is a Terraform provider registry (providers.v1).',
    });
  }
  const strings = (list: unknown) => (Array.isArray(list) ? list.filter((x): x is string => typeof x === 'string') : []);
  return versions
    .map((v) => (v ?? {}) as { version?: unknown; protocols?: unknown; platforms?: unknown })
    .filter((v): v is typeof v & { version: string } => typeof v.version === 'string')
    .map((v) => ({
      version: v.version,
      protocols: strings(v.protocols),
      platforms: (Array.isArray(v.platforms) ? v.platforms : [])
        .map((p) => (p ?? {}) as { os?: unknown; arch?: unknown })
        .filter((p): p is { os: string; arch: string } => typeof p.os === 'string' && typeof p.arch === 'string')
        .map((p) => ({ os: p.os, arch: p.arch })),
    }));
}

/** The providers.v1 download document of one platform's package. */
export function providerDownloadUrl(providers: URL, address: ProviderAddress, version: string, platform: string): URL {
  const [os, arch] = platform.split('_') as [string, string];
  return new URL(`${path(address)}/${encodeURIComponent(version)}/download/${encodeURIComponent(os)}/${encodeURIComponent(arch)}`, providers);
}

/** One platform's package metadata; undefined when the upstream has no package for that platform (404). */
export async function packageMeta(
  http: HttpClient,
  providers: URL,
  address: ProviderAddress,
  version: string,
  platform: string,
  what: string,
): Promise<PackageMeta | undefined> {
  const url = providerDownloadUrl(providers, address, version, platform);
  let value: unknown;
  try {
    ({ value } = await http.json(url, `${what} ${platform} download`));
  } catch (error) {
    if (error instanceof UpstreamStatusError && error.status === 404) return undefined;
    throw error;
  }
  const body = (value ?? {}) as Record<string, unknown>;
  const invalid = (why: string) =>
    new MirrorError('UPSTREAM_FAILED', `${what} ${platform}: registry response ${why} (${url}).`, {
      hint: 'The upstream does not speak the provider registry protocol for this package.',
    });
  const link = (key: string, label: string) => {
    const text = body[key];
    let resolved: URL;
    try {
      if (typeof text !== 'string' || text === '') throw new Error('missing');
      resolved = new URL(text, url);
    } catch {
      throw invalid(`includes invalid ${label}`);
    }
    if (resolved.protocol !== 'http:' && resolved.protocol !== 'https:') throw invalid(`includes invalid ${label}: must use http or https scheme`);
    return resolved;
  };
  const shasum = typeof body['shasum'] === 'string' ? body['shasum'].toLowerCase() : '';
  if (!/^[0-9a-f]{64}$/.test(shasum)) throw invalid(`includes invalid SHA256 hash ${JSON.stringify(body['shasum'])}`);
  if (typeof body['filename'] !== 'string' || body['filename'] === '') throw invalid('names no filename');
  const keyList = (body['signing_keys'] as { gpg_public_keys?: unknown } | undefined)?.gpg_public_keys;
  const listedKeys = (Array.isArray(keyList) ? keyList : []).map((k) => k as Record<string, unknown>).filter((k) => typeof k?.['ascii_armor'] === 'string');
  const signingKeys = listedKeys.map((k) => ({ keyId: typeof k['key_id'] === 'string' ? k['key_id'] : '', asciiArmor: k['ascii_armor'] as string }));
  const protocols = Array.isArray(body['protocols']) ? body['protocols'].filter((p): p is string => typeof p === 'string' && /^\d+(\.\d+)?$/.test(p)) : [];
  return {
    platform,
    filename: body['filename'],
    downloadUrl: link('download_url', 'download URL'),
    shasumsUrl: link('shasums_url', 'SHASUMS URL'),
    shasumsSignatureUrl: link('shasums_signature_url', 'SHASUMS signature URL'),
    shasum,
    signingKeys,
    listedKeys,
    protocols,
  };
}

/** A small file (SHA256SUMS, its signature) whole, with the client's retries. */
export async function fetchBytes(http: HttpClient, url: URL, what: string, max = 4 * 1024 * 1024): Promise<Buffer> {
  return http.get(url, what, async (body) => {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > max) throw new MirrorError('UPSTREAM_FAILED', `${what}: ${url} sent more than ${max} bytes.`);
      chunks.push(chunk);
    }
    return Buffer.concat(chunks);
  });
}
