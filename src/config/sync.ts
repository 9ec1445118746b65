// The config's `sync:` list: upstream registries `modmirror sync` copies
// from, checked key by key like the rest of mirror.config.yaml (index.ts
// reports each problem with its file:line).

import { resolve } from 'node:path';
import { parseModuleSpec } from '../protocol/constraint.js';
import { normalizeHost } from '../protocol/source-address.js';
import { parseProviderSpec } from '../protocol/provider-address.js';
import { isPlatform } from '../protocol/providers.js';
import { Checker, show, type ListSpec, type Problem } from './check.js';

/** One upstream as written in the config. */
export interface SyncEntry {
  from: string;
  into?: string;
  tokenEnv?: string;
  /** NAMESPACE/NAME/PROVIDER[@CONSTRAINT]: every matching version is copied. */
  modules?: string[];
  /** Terraform configuration folders whose module calls are copied (as `--for`). */
  for?: string[];
  /** false: copy only what `modules`/`for` name, not what those modules call. */
  dependencies?: boolean;
  /** Which versions of a called module: the newest match (default) or every match. */
  dependencyVersions?: 'newest' | 'every';
  /** Public registry hosts this upstream answers for (default registry.terraform.io and registry.opentofu.org). */
  standsInFor?: string[];
  /** HOST/NAMESPACE/TYPE[@CONSTRAINT] (NAMESPACE/TYPE: the upstream's own host): every matching version is copied. */
  providers?: string[];
  /** OS_ARCH platforms whose provider packages are copied (default: the config's top-level platforms). */
  platforms?: string[];
}

const KEYS = ['from', 'into', 'tokenEnv', 'modules', 'providers', 'platforms', 'for', 'dependencies', 'dependencyVersions', 'standsInFor'];

/** Every problem of a `sync:` value, with the key path it is at. */
export function validateSyncEntries(value: unknown): Problem[] {
  const check = new Checker();
  const parsed = (parse: (spec: string) => unknown) => (spec: string) => {
    try {
      parse(spec);
      return undefined;
    } catch (error) {
      return (error as Error).message;
    }
  };
  if (!check.expect(Array.isArray(value), ['sync'], 'expected a list of upstreams (- from: URL, modules: [...])')) return check.problems;
  (value as unknown[]).forEach((entry, i) => {
    const path = ['sync', i];
    if (!check.mapping(entry, path, 'expected a mapping with "from" and "modules" (or "for")')) return;
    check.knownKeys(entry, KEYS, path);
    check.expect(
      typeof entry['from'] === 'string' && /^https?:\/\/[^/]+/.test(entry['from']),
      [...path, 'from'],
      `expected the upstream registry's http(s) URL, got ${show(entry['from'])}`,
    );
    for (const key of ['into', 'tokenEnv']) check.optionalString(entry, key, path);
    check.expect(
      'modules' in entry || 'for' in entry || 'providers' in entry,
      [...path, 'modules'],
      'expected a list of NAMESPACE/NAME/PROVIDER[@CONSTRAINT] (or "providers": HOST/NAMESPACE/TYPE[@CONSTRAINT], or "for": configuration folders)',
    );
    const list = (key: string, spec: ListSpec) => {
      if (key in entry) check.stringList(entry[key], [...path, key], spec);
    };
    const module = 'NAMESPACE/NAME/PROVIDER[@CONSTRAINT]';
    list('modules', { list: module, item: module, check: parsed(parseModuleSpec) });
    const upstreamHost = typeof entry['from'] === 'string' && URL.canParse(entry['from']) ? normalizeHost(new URL(entry['from']).host) : undefined;
    const provider = 'HOST/NAMESPACE/TYPE[@CONSTRAINT]';
    list('providers', { list: provider, item: provider, check: parsed((spec) => parseProviderSpec(spec, upstreamHost ?? 'upstream.invalid')) });
    list('platforms', {
      list: 'OS_ARCH platforms',
      item: 'OS_ARCH platform',
      check: (p) => (isPlatform(p) ? undefined : `"${p}" is not an OS_ARCH platform such as linux_amd64`),
    });
    list('for', { list: 'Terraform configuration folders', item: 'Terraform configuration folder' });
    list('standsInFor', {
      list: 'registry host names',
      item: 'registry host name',
      check: (host) => (normalizeHost(host) === undefined ? `"${host}" is not a registry host name such as registry.terraform.io` : undefined),
    });
    check.optionalBoolean(entry, 'dependencies', path);
    if ('dependencyVersions' in entry)
      check.expect(
        entry['dependencyVersions'] === 'newest' || entry['dependencyVersions'] === 'every',
        [...path, 'dependencyVersions'],
        `expected "newest" or "every", got ${show(entry['dependencyVersions'])}`,
      );
  });
  return check.problems;
}

/** Paths made absolute against the config file's folder. */
export function resolveSyncEntry(entry: SyncEntry, base: string): SyncEntry {
  return {
    ...entry,
    ...(entry.into === undefined ? {} : { into: resolve(base, entry.into) }),
    ...(entry.for === undefined ? {} : { for: entry.for.map((dir) => resolve(base, dir)) }),
  };
}
