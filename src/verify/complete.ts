// `verify --complete`: whether `terraform init` of each mirrored module
// version would find every provider it requires in this mirror, for every
// platform the config names. A module version's root and submodules list
// their required providers (provider_dependencies); for each, the newest
// mirrored version matching its constraint (the one Terraform would pick from
// the network mirror's index.json) must have a package for each platform.

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Manifest, ProvidersManifest } from '../mirror/manifest.js';
import { versionDetailFile } from '../protocol/paths.js';
import { parseConstraint } from '../protocol/constraint.js';
import type { Problem } from './index.js';

interface ProviderRequirement {
  name: string;
  source: string;
  version: string;
}

/**
 * The mirrored provider addresses a required_providers `source` may mean: a
 * full HOSTNAME/NAMESPACE/TYPE is itself; NAMESPACE/TYPE is
 * registry.terraform.io's for Terraform and registry.opentofu.org's for
 * OpenTofu (either satisfies it); no source is hashicorp/NAME.
 */
export function providerCandidates(requirement: { name: string; source: string }): string[] {
  const parts = (requirement.source === '' ? `hashicorp/${requirement.name}` : requirement.source).toLowerCase().split('/');
  if (parts.length === 3) return [parts.join('/')];
  if (parts.length === 2) return [`registry.terraform.io/${parts.join('/')}`, `registry.opentofu.org/${parts.join('/')}`];
  return [];
}

export async function completenessProblems(dir: string, manifest: Manifest, platforms: string[]): Promise<Problem[]> {
  const problems: Problem[] = [];
  const providers = manifest.providers ?? {};
  for (const [key, entry] of Object.entries(manifest.modules)) {
    const [namespace = '', name = '', provider = ''] = key.split('/');
    for (const { version } of entry.versions) {
      const rel = versionDetailFile({ namespace, name, provider }, version);
      let detail: { root?: { provider_dependencies?: ProviderRequirement[] }; submodules?: { path: string; provider_dependencies?: ProviderRequirement[] }[] };
      try {
        detail = JSON.parse(await readFile(join(dir, rel), 'utf8')) as typeof detail;
      } catch {
        continue; // verify reports a missing or broken detail itself
      }
      const contents = [
        { where: 'root', requirements: detail.root?.provider_dependencies ?? [] },
        ...(detail.submodules ?? []).map((s) => ({ where: s.path, requirements: s.provider_dependencies ?? [] })),
      ];
      for (const { where, requirements } of contents) {
        for (const requirement of requirements) {
          const gap = missingFor(requirement, providers, platforms);
          if (gap)
            problems.push({
              path: rel,
              message: `${key} ${version} ${where} requires ${requirement.source || `hashicorp/${requirement.name}`}${requirement.version ? ` ${requirement.version}` : ''}: ${gap}`,
            });
        }
      }
    }
  }
  return problems;
}

function missingFor(requirement: ProviderRequirement, providers: ProvidersManifest, platforms: string[]): string | undefined {
  const candidates = providerCandidates(requirement);
  const mirrored = candidates.filter((c) => Object.hasOwn(providers, c));
  if (mirrored.length === 0) return `the mirror carries no ${candidates.join(' or ') || requirement.source}`;
  let matches: (version: string) => boolean;
  try {
    matches = requirement.version === '' ? () => true : parseConstraint(requirement.version);
  } catch {
    return `its version constraint "${requirement.version}" cannot be read`;
  }
  const gaps: string[] = [];
  for (const address of mirrored) {
    // Versions are newest first: Terraform installs the newest match.
    const chosen = providers[address]!.versions.find((v) => matches(v.version));
    if (!chosen) {
      gaps.push(`${address} has no version matching it (mirrored: ${providers[address]!.versions.map((v) => v.version).join(', ')})`);
      continue;
    }
    const have = new Set(chosen.archives.map((a) => a.platform));
    const missing = platforms.filter((p) => !have.has(p));
    if (missing.length === 0) return undefined;
    gaps.push(`${address} ${chosen.version} has no package for ${missing.join(', ')}`);
  }
  return gaps.join('; ');
}
