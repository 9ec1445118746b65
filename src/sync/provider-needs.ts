// From what a configuration or module says to the providers sync fetches: a
// required_providers entry (its source, else the local name in hashicorp's
// namespace; its version constraint) or a lock file's pinned version. Like
// module calls, only addresses whose host this upstream stands in for (or is)
// are fetched; the others are reported.

import { messageOf } from '../errors.js';
import { providerKey, type ProviderAddress } from '../protocol/providers.js';
import type { ProviderRequirement } from '../types.js';
import { parseConstraint } from '../protocol/constraint.js';
import type { LockedProvider } from './lock-file.js';
import { isBuiltInProvider, providerFromSource } from '../protocol/provider-address.js';
import type { ProviderNeed } from './providers.js';
import type { SyncResult } from './types.js';

/** `configuration`: the `--for` folder the requirement is in, none for a module's. */
export function requirementNeed(
  p: ProviderRequirement,
  calledFrom: string,
  hosts: Set<string>,
  result: SyncResult,
  log: (line: string) => void,
  configuration?: string,
): ProviderNeed | undefined {
  const written = p.source || p.name;
  const address = providerFromSource(p.source, p.name);
  if (address === undefined) {
    result.notMirrored.push({ source: written, version: p.version, calledFrom, reason: 'other', message: 'not a provider registry address' });
    return undefined;
  }
  if (!served(address, written, p.version, calledFrom, hosts, result)) return undefined;
  try {
    const alsoAs = hostless(p) ? [...hosts].filter((h) => h !== address.hostname && OPENTOFU_HOST === h).map((hostname) => ({ ...address, hostname })) : [];
    return {
      address,
      constraint: p.version,
      matches: p.version === '' ? () => true : parseConstraint(p.version),
      pick: 'newest',
      calledFrom,
      ...(configuration === undefined ? {} : { configuration }),
      ...(alsoAs.length === 0 ? {} : { alsoAs }),
    };
  } catch (error) {
    const message = `${calledFrom}: provider ${providerKey(address)}: ${messageOf(error)}`;
    result.failures.push({ provider: providerKey(address), calledFrom, message });
    log(`error: ${message}`);
    return undefined;
  }
}

export function lockedNeed(
  key: string,
  locked: LockedProvider,
  lockFile: string,
  hosts: Set<string>,
  result: SyncResult,
  configuration: string,
): ProviderNeed | undefined {
  const [hostname = '', namespace = '', type = ''] = key.split('/');
  const address = { hostname, namespace, type };
  if (!served(address, key, `= ${locked.version}`, lockFile, hosts, result)) return undefined;
  return { address, constraint: `= ${locked.version}`, matches: (v) => v === locked.version, pick: 'newest', locked, calledFrom: lockFile, configuration };
}

/** OpenTofu's default registry: where a source without a host points for OpenTofu. */
const OPENTOFU_HOST = 'registry.opentofu.org';

function hostless(p: ProviderRequirement): boolean {
  return (p.source || p.name).split('/').length < 3;
}

function served(address: ProviderAddress, written: string, version: string, calledFrom: string, hosts: Set<string>, result: SyncResult): boolean {
  if (isBuiltInProvider(address)) return false;
  if (hosts.has(address.hostname)) return true;
  result.notMirrored.push({
    source: written,
    version,
    calledFrom,
    reason: 'other-host',
    message: `other host: ${address.hostname} is not a registry this upstream stands in for (${[...hosts].join(', ')})`,
  });
  return false;
}
