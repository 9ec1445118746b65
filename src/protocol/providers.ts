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
