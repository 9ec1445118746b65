// The provider network mirror protocol (Terraform 0.13.2+, OpenTofu) as pure
// functions: provider addresses, platform names and where each document lives
// under the mirror's providers folder.
//
//   {base}HOSTNAME/NAMESPACE/TYPE/index.json    {"versions": {"1.2.3": {}}}
//   {base}HOSTNAME/NAMESPACE/TYPE/VERSION.json  {"archives": {"os_arch": {"url", "hashes"}}}
//
// The zips sit beside the JSON files so a `url` that is the file name resolves
// against the JSON's own URL (Terraform's http_mirror_source.go resolves it so).

/** Where the network mirror sits in the mirror's tree unless the config says otherwise. */
export const DEFAULT_PROVIDERS_PATH = 'providers';
export const DEFAULT_PLATFORMS = ['linux_amd64'];
export const DEFAULT_PROVIDER_HOSTNAME = 'registry.terraform.io';

export interface ProviderAddress {
  /** The provider's origin registry, e.g. registry.terraform.io or registry.opentofu.org. */
  hostname: string;
  namespace: string;
  type: string;
}

// Terraform's provider address parts: letters, digits and dashes, no leading or
// trailing dash; compared in lower case, so a mirror keeps them lower case.
const PART = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
const HOSTNAME = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*(?::[0-9]{1,5})?$/;
const PLATFORM = /^[a-z0-9]+_[a-z0-9]+$/;

export function isProviderPart(value: string): boolean {
  return PART.test(value);
}

export function isProviderHostname(value: string): boolean {
  return HOSTNAME.test(value);
}

/** An os_arch pair such as linux_amd64, as the network mirror keys archives. */
export function isPlatform(value: string): boolean {
  return PLATFORM.test(value);
}

export function providerKey(a: ProviderAddress): string {
  return `${a.hostname}/${a.namespace}/${a.type}`;
}

/** The release name of a provider package, which `terraform providers mirror` also uses. */
export function providerZipName(type: string, version: string, platform: string): string {
  return `terraform-provider-${type}_${version}_${platform}.zip`;
}

/** A release's checksum file beside its zips. */
export function providerSumsName(type: string, version: string): string {
  return `terraform-provider-${type}_${version}_SHA256SUMS`;
}

/** terraform-provider-TYPE_VERSION_OS_ARCH.zip: a type has no "_", a semver version neither. */
export function parseProviderZipName(name: string): { type: string; version: string; platform: string } | undefined {
  const match = /^terraform-provider-([a-z0-9-]+)_([^_/]+)_([a-z0-9]+_[a-z0-9]+)\.zip$/.exec(name);
  return match ? { type: match[1]!, version: match[2]!, platform: match[3]! } : undefined;
}

/** The folder of one provider under the mirror's providers folder (`path`, no slashes around it). */
export function providerDir(path: string, a: ProviderAddress): string {
  return `${path}/${providerKey(a)}/`;
}

/** GET {base}HOSTNAME/NAMESPACE/TYPE/index.json */
export function providerIndexFile(path: string, a: ProviderAddress): string {
  return `${providerDir(path, a)}index.json`;
}

/** GET {base}HOSTNAME/NAMESPACE/TYPE/VERSION.json */
export function providerVersionFile(path: string, a: ProviderAddress, version: string): string {
  return `${providerDir(path, a)}${version}.json`;
}

export function providerZipFile(path: string, a: ProviderAddress, version: string, platform: string): string {
  return `${providerDir(path, a)}${providerZipName(a.type, version, platform)}`;
}

/** index.json: the versions, each an empty object (the protocol reserves the values). */
export function providerIndexDocument(versions: string[]): { versions: Record<string, Record<string, never>> } {
  return { versions: Object.fromEntries(versions.map((v) => [v, {}])) };
}

/**
 * VERSION.json: each platform's zip by its file name, which resolves against
 * the document's own URL to the zip beside it, with its h1: and zh: hashes.
 */
export function providerVersionDocument(archives: { platform: string; url: string; hashes: string[] }[]): {
  archives: Record<string, { url: string; hashes: string[] }>;
} {
  return { archives: Object.fromEntries(archives.map((a) => [a.platform, { url: a.url, hashes: a.hashes }])) };
}

/** The compact index the server and the browse page read (the manifest is too large to load for them). */
export const PROVIDERS_INDEX_FILE = 'providers-index.json';

export interface ProvidersIndex {
  /** The network mirror's folder in the tree. */
  path: string;
  providers: {
    hostname: string;
    namespace: string;
    type: string;
    /** In-house: also served over providers.v1 at NAMESPACE/TYPE, each version signed by the key `key_id` names. */
    registry?: true;
    /** `key_id`: served over providers.v1 with its SHA256SUMS signed by that key; `upstream`: an upstream's release, under {path}/HOSTNAME/. */
    versions: { version: string; platforms: string[]; key_id?: string; upstream?: true }[];
  }[];
}

export function parseProviderKey(key: string): ProviderAddress {
  const [hostname = '', namespace = '', type = ''] = key.split('/');
  return { hostname, namespace, type };
}

// The provider registry protocol (`providers.v1`, Terraform 0.13+, OpenTofu)
// for in-house providers, as static files: a path with no children is a file
// with no extension, as for modules.
//
//   {providers.v1}NAMESPACE/TYPE/versions                        {"versions": [{version, protocols, platforms}]}
//   {providers.v1}NAMESPACE/TYPE/VERSION/download/OS/ARCH        {filename, download_url, shasums_url, ...}
//
// Terraform resolves download_url, shasums_url and shasums_signature_url
// against the download document's own URL (registry_client.go), so without a
// baseUrl they are written relative, to the zips, SHA256SUMS and .sig in the
// network mirror's folder: the tree works under any host and base path. With
// one they are absolute under it, as module download locations are: Renovate's
// lock file update requests them as written and refuses a relative URL.

export const PROVIDERS_V1_BASE = 'v1/providers/';
/** What a release that says nothing about it speaks (GoReleaser's manifest names it otherwise). */
export const DEFAULT_PROVIDER_PROTOCOLS = ['5.0'];

/** `providers.v1` for service discovery: absolute under `baseUrl`, else a path. */
export function providersServiceUrl(baseUrl: string): string {
  return baseUrl === '' ? `/${PROVIDERS_V1_BASE}` : `${baseUrl}${PROVIDERS_V1_BASE}`;
}

/**
 * Where a provider's providers.v1 documents sit in the tree: an in-house
 * provider's under the mirror's own `v1/providers/`; an upstream's
 * (`serve --upstream`) under its network mirror folder's HOSTNAME, `{path}/HOSTNAME/`,
 * the URL a CLI configuration's host block for that HOSTNAME names. A host
 * name has no place in a NAMESPACE, so neither can take the other's paths.
 */
export function providerRegistryBase(path: string, upstreamHostname?: string): string {
  return upstreamHostname === undefined ? PROVIDERS_V1_BASE : `${path}/${upstreamHostname}/`;
}

export function providerRegistryDir(namespace: string, type: string, base = PROVIDERS_V1_BASE): string {
  return `${base}${namespace}/${type}/`;
}

/** GET {providers.v1}NAMESPACE/TYPE/versions */
export function providerVersionsFile(namespace: string, type: string, base = PROVIDERS_V1_BASE): string {
  return `${providerRegistryDir(namespace, type, base)}versions`;
}

/** GET {providers.v1}NAMESPACE/TYPE/VERSION/download/OS/ARCH */
export function providerDownloadFile(namespace: string, type: string, version: string, platform: string, base = PROVIDERS_V1_BASE): string {
  const [os, arch] = platform.split('_');
  return `${providerRegistryDir(namespace, type, base)}${version}/download/${os}/${arch}`;
}

/** The release's detached signature of its checksum list. */
export function providerSignatureName(type: string, version: string): string {
  return `${providerSumsName(type, version)}.sig`;
}

/** GoReleaser's terraform-provider-TYPE_VERSION_manifest.json: `metadata.protocol_versions`. */
export function providerReleaseManifestName(type: string, version: string): string {
  return `terraform-provider-${type}_${version}_manifest.json`;
}

export function providerSumsFile(path: string, a: ProviderAddress, version: string): string {
  return `${providerDir(path, a)}${providerSumsName(a.type, version)}`;
}

export function providerSignatureFile(path: string, a: ProviderAddress, version: string): string {
  return `${providerDir(path, a)}${providerSignatureName(a.type, version)}`;
}

// ':' stays as it is (a host name with a port, never in the first segment of a relative URL, which is '..' or
// a file of the same folder): Terraform requests such paths unencoded, and so do static hosts' file names.
const urlSegment = (s: string) => (s === '..' ? s : encodeURIComponent(s).replace(/%3A/g, ':'));

/** A URL from one file of the tree to another, relative, so it resolves under any host and base path. */
export function relativeUrl(fromFile: string, toFile: string): string {
  const from = fromFile.split('/').slice(0, -1);
  const to = toFile.split('/');
  let common = 0;
  while (common < from.length && common < to.length - 1 && from[common] === to[common]) common++;
  return [...from.slice(common).map(() => '..'), ...to.slice(common)].map(urlSegment).join('/');
}

/** A URL from one file of the tree to another: absolute under `baseUrl` (ending in '/') when there is one, else relative. */
export function treeUrl(fromFile: string, toFile: string, baseUrl: string): string {
  return baseUrl === '' ? relativeUrl(fromFile, toFile) : `${baseUrl}${toFile.split('/').map(urlSegment).join('/')}`;
}

/** A download document's URLs (`self` is its own path): absolute under the baseUrl, else relative to the document. */
export function providerDownloadUrls(self: string, files: { zip: string; sums: string; signature: string }, baseUrl: string) {
  return {
    download_url: treeUrl(self, files.zip, baseUrl),
    shasums_url: treeUrl(self, files.sums, baseUrl),
    shasums_signature_url: treeUrl(self, files.signature, baseUrl),
  };
}

export function providerVersionsDocument(versions: { version: string; protocols: string[]; platforms: string[] }[]) {
  return {
    versions: versions.map((v) => ({
      version: v.version,
      protocols: v.protocols,
      platforms: v.platforms.map((p) => ({ os: p.split('_')[0]!, arch: p.split('_')[1]! })),
    })),
  };
}

export interface ProviderDownloadInput {
  path: string;
  address: ProviderAddress;
  version: string;
  platform: string;
  protocols: string[];
  sha256: string;
  key: { keyId: string; asciiArmor: string };
  /** The signing keys as the upstream listed them (an upstream's release); else the one key. */
  listedKeys?: Record<string, unknown>[];
  /** Where the document sits (providerRegistryBase); default the mirror's own providers.v1. */
  base?: string;
  /** The mirror's baseUrl, or '' for URLs relative to the document. */
  baseUrl: string;
}

/** The download document of one platform; every URL absolute under the baseUrl, else relative to the document itself. */
export function providerDownloadDocument(d: ProviderDownloadInput) {
  const self = providerDownloadFile(d.address.namespace, d.address.type, d.version, d.platform, d.base);
  const [os, arch] = d.platform.split('_');
  return {
    protocols: d.protocols,
    os,
    arch,
    filename: providerZipName(d.address.type, d.version, d.platform),
    ...providerDownloadUrls(
      self,
      {
        zip: providerZipFile(d.path, d.address, d.version, d.platform),
        sums: providerSumsFile(d.path, d.address, d.version),
        signature: providerSignatureFile(d.path, d.address, d.version),
      },
      d.baseUrl,
    ),
    shasum: d.sha256,
    signing_keys: { gpg_public_keys: d.listedKeys ?? [{ key_id: d.key.keyId, ascii_armor: d.key.asciiArmor }] },
  };
}
