// The providers one folder requires, as Terraform works them out
// (configs.Config.addProviderRequirements) and terraform-config-inspect
// reports them (tfconfig/load.go, Module.init): every local name declared in
// `required_providers` or configured by a `provider` block, plus the one each
// resource and data source uses (its `provider` argument's, else its type's
// prefix up to the first `_`) where no declaration names it. Such an implied
// provider has no source and no version constraint: it is `hashicorp/NAME` on
// the default registry host, which is how every reader of the listing
// (verify --complete, sync, the browse page) resolves an empty source.

import type { ProviderRequirement } from '../types.js';
import type { ProviderDecl, ResourceDecl } from './declarations.js';

/** `declared` by local name, after override files are merged; `resources` holds data sources too. */
export function requiredProviders(declared: Map<string, ProviderDecl>, resources: ResourceDecl[]): ProviderRequirement[] {
  const all = new Map(declared);
  for (const r of resources) {
    const name = r.provider ?? impliedLocalName(r.type);
    if (!all.has(name)) all.set(name, { name, versions: [] });
  }
  return [...all.values()]
    .filter((p) => !isBuiltIn(p))
    .map(providerRequirement)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** terraform-config-inspect's resourceTypeDefaultProviderName: `aws` of `aws_s3_bucket`. */
export function impliedLocalName(type: string): string {
  const under = type.indexOf('_');
  return under === -1 ? type : type.slice(0, under);
}

/**
 * Terraform gives an undeclared `terraform` (`terraform_remote_state`) the
 * provider built into the CLI, terraform.io/builtin/terraform, which nobody
 * installs, so it is no requirement. terraform-config-inspect lists it.
 */
function isBuiltIn(p: ProviderDecl): boolean {
  return p.name === 'terraform' && (p.source === undefined || p.source.toLowerCase() === 'terraform.io/builtin/terraform');
}

function providerRequirement(p: ProviderDecl): ProviderRequirement {
  const source = p.source ?? '';
  const parts = source.split('/');
  const namespace = parts.length >= 2 ? parts[parts.length - 2]! : '';
  return { name: p.name, namespace, source, version: p.versions.join(', ') };
}
