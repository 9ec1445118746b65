// Provider addresses as `sync` meets them: `--provider HOST/NS/TYPE@CONSTRAINT`
// (short `NS/TYPE` is a provider of the upstream's own host), and a
// required_providers `source`, read the way Terraform reads it
// (terraform-registry-address ParseProviderSource: `TYPE` and `NS/TYPE` are on
// registry.terraform.io, a bare `TYPE` in namespace hashicorp).

import { MirrorError } from '../errors.js';
import { DEFAULT_PROVIDER_HOSTNAME, isProviderPart, providerKey, type ProviderAddress } from './providers.js';
import { parseConstraint } from './constraint.js';
import { normalizeHost } from './source-address.js';

export interface ProviderSpec {
  address: ProviderAddress;
  /** As written; '' for every version. */
  constraint: string;
  matches: (version: string) => boolean;
}

/** `--provider` / a `sync:` entry's `providers:` item; `upstreamHost` fills a short `NS/TYPE`. */
export function parseProviderSpec(text: string, upstreamHost: string | undefined): ProviderSpec {
  const at = text.indexOf('@');
  const path = at === -1 ? text : text.slice(0, at);
  const constraint = at === -1 ? '' : text.slice(at + 1).trim();
  const invalid = (why: string) =>
    new MirrorError('USAGE', `Invalid provider "${text}": ${why}.`, {
      hint: 'Write HOST/NAMESPACE/TYPE[@CONSTRAINT], e.g. registry.terraform.io/hashicorp/aws@"~> 5.0" (NAMESPACE/TYPE: a provider of the upstream\'s own host).',
    });
  const parts = path.split('/');
  if (parts.length !== 2 && parts.length !== 3) throw invalid('expected HOST/NAMESPACE/TYPE or NAMESPACE/TYPE');
  const withHost = parts.length === 3;
  const host = withHost ? normalizeHost(parts.shift()!) : upstreamHost;
  if (host === undefined) throw invalid(withHost ? 'the host is not a registry host name' : "a short NAMESPACE/TYPE needs the upstream's URL");
  const [namespace = '', type = ''] = parts.map((p) => p.toLowerCase());
  if (!isProviderPart(namespace) || !isProviderPart(type)) throw invalid('namespace and type are letters, digits and "-"');
  if (at !== -1 && constraint === '') throw invalid('nothing follows "@"; leave it out to copy every version');
  return { address: { hostname: host, namespace, type }, constraint, matches: constraint === '' ? () => true : parseConstraint(constraint) };
}

/**
 * A required_providers entry's address: its `source`, else its local name in
 * the hashicorp namespace (Terraform's implied source). Undefined for what is
 * not a registry provider address.
 */
export function providerFromSource(source: string, localName: string): ProviderAddress | undefined {
  const parts = (source === '' ? localName : source).split('/');
  if (parts.length < 1 || parts.length > 3) return undefined;
  const hostname = parts.length === 3 ? normalizeHost(parts.shift()!) : DEFAULT_PROVIDER_HOSTNAME;
  if (hostname === undefined) return undefined;
  const [namespace, type] = (parts.length === 1 ? ['hashicorp', parts[0]!] : parts).map((p) => p.toLowerCase());
  if (!isProviderPart(namespace!) || !isProviderPart(type!)) return undefined;
  return { hostname, namespace: namespace!, type: type! };
}

/** Terraform's built-in provider (`terraform.io/builtin/terraform`) is part of the CLI, never fetched. */
export function isBuiltInProvider(address: ProviderAddress): boolean {
  return address.hostname === 'terraform.io' && address.namespace === 'builtin';
}

export { providerKey };
