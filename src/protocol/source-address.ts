// What a module call's `source` names, read the way Terraform reads it
// (internal/addrs.ParseModuleSource with terraform-registry-address): a local
// path, a registry address `[HOST/]NAMESPACE/NAME/PROVIDER[//SUBDIR]`, or
// anything else, which go-getter fetches directly (git, URLs, buckets). Only
// registry addresses can come from a mirror; the rest is reported.

import type { ModuleAddress } from '../types.js';

/** Where Terraform looks up a registry address written without a host. */
export const DEFAULT_REGISTRY_HOST = 'registry.terraform.io';
/** The public registries a mirror stands in for by default: Terraform's, and OpenTofu's for its default addresses. */
export const PUBLIC_REGISTRY_HOSTS = ['registry.terraform.io', 'registry.opentofu.org'];

export type ModuleSource =
  | { kind: 'registry'; host: string; address: ModuleAddress; subdir: string }
  | { kind: 'local'; path: string }
  /** Fetched by go-getter from where it says; `getter` says how, for the report. */
  | { kind: 'remote'; getter: 'git' | 'url' | 'other' };

const LOCAL_PREFIXES = ['./', '../', '.\\', '..\\'];
// terraform-registry-address: namespace and name; the provider ("target system") is lower case only.
const REGISTRY_NAME = /^[0-9A-Za-z](?:[0-9A-Za-z_-]{0,62}[0-9A-Za-z])?$/;
const TARGET_SYSTEM = /^[0-9a-z]{1,64}$/;
// Reserved for version control shorthands (`github.com/org/repo`), never registry hosts.
const VCS_HOSTS = new Set(['github.com', 'bitbucket.org']);

export function parseModuleSource(source: string): ModuleSource {
  if (LOCAL_PREFIXES.some((p) => source.startsWith(p))) return { kind: 'local', path: source.replace(/\\/g, '/') };
  return parseRegistryAddress(source) ?? { kind: 'remote', getter: remoteGetter(source) };
}

/**
 * As in Terraform, an address is a registry address exactly when it parses as
 * one; anything that does not falls through to go-getter.
 */
function parseRegistryAddress(source: string): ModuleSource | undefined {
  const at = source.indexOf('//');
  const pkg = at === -1 ? source : source.slice(0, at);
  const subdir = at === -1 ? '' : source.slice(at + 2).replace(/^\/+|\/+$/g, '');
  if (subdir.split('/').includes('..')) return undefined;
  const parts = pkg.split('/');
  if (parts.length !== 3 && parts.length !== 4) return undefined;
  const host = parts.length === 4 ? normalizeHost(parts.shift()!) : DEFAULT_REGISTRY_HOST;
  if (host === undefined || VCS_HOSTS.has(host)) return undefined;
  const [namespace = '', name = '', provider = ''] = parts;
  if (!REGISTRY_NAME.test(namespace) || !REGISTRY_NAME.test(name) || !TARGET_SYSTEM.test(provider)) return undefined;
  return { kind: 'registry', host, address: { namespace, name, provider }, subdir };
}

/**
 * A host as svchost compares it: lower case, without the default port 443.
 * Terraform refuses a module host without a dot (`localhost:8080`), so such
 * an address is not a registry address.
 */
export function normalizeHost(text: string): string | undefined {
  const m = /^([A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(text);
  if (!m || !m[1]!.includes('.') || m[1]!.startsWith('.') || m[1]!.includes('..')) return undefined;
  const host = m[1]!.toLowerCase().replace(/\.$/, '');
  return m[2] === undefined || m[2] === '443' ? host : `${host}:${m[2]}`;
}

function remoteGetter(source: string): 'git' | 'url' | 'other' {
  if (/^git::/i.test(source) || /^[^/:@]+@[^/:]+:/.test(source) || /^(github\.com|bitbucket\.org)\//i.test(source) || /\.git($|[/?])/.test(source))
    return 'git';
  if (/^[a-z0-9]+::/i.test(source) || /^[a-z][a-z0-9+.-]*:\/\//i.test(source)) return 'url';
  return 'other';
}

/**
 * The hosts an upstream answers for: the public registries it stands in for,
 * and its own host (a call may name the upstream directly). A call to any
 * other host belongs to another registry.
 */
export function servedHosts(upstream: URL, standsInFor: string[]): Set<string> {
  const hosts = new Set<string>();
  for (const h of standsInFor) {
    const n = normalizeHost(h);
    if (n !== undefined) hosts.add(n);
  }
  // A URL's `host` drops its scheme's default port: an upstream at http://reg.example.com/ is
  // taken for `reg.example.com/...` calls, the address a CLI host block would send to it.
  const ownHost = normalizeHost(upstream.host);
  if (ownHost !== undefined) hosts.add(ownHost);
  return hosts;
}
