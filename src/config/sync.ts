// The config's `sync:` list: upstream registries `modmirror sync` copies
// from, checked key by key like the rest of mirror.config.yaml (index.ts
// reports each problem with its file:line).

import { resolve } from 'node:path';
import { parseModuleSpec } from '../protocol/constraint.js';
import { normalizeHost } from '../protocol/source-address.js';
import { parseProviderSpec } from '../protocol/provider-address.js';
import { isPlatform } from '../protocol/providers.js';

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
export function validateSyncEntries(value: unknown): { path: (string | number)[]; message: string }[] {
  const problems: { path: (string | number)[]; message: string }[] = [];
  const expect = (cond: boolean, path: (string | number)[], message: string) => {
    if (!cond) problems.push({ path, message });
    return cond;
  };
  const show = (v: unknown) => JSON.stringify(v) ?? String(v);
  const stringList = (e: Record<string, unknown>, key: string, path: (string | number)[], what: string, check: (s: string) => string | undefined) => {
    if (!(key in e)) return;
    if (!expect(Array.isArray(e[key]) && (e[key] as unknown[]).length > 0, [...path, key], `expected a list of ${what}`)) return;
    (e[key] as unknown[]).forEach((item, j) => {
      if (!expect(typeof item === 'string' && item !== '', [...path, key, j], `expected ${what.replace(/s$/, '')}, got ${show(item)}`)) return;
      const problem = check(item as string);
      if (problem !== undefined) problems.push({ path: [...path, key, j], message: problem });
    });
  };

  if (!expect(Array.isArray(value), ['sync'], 'expected a list of upstreams (- from: URL, modules: [...])')) return problems;
  (value as unknown[]).forEach((entry, i) => {
    const path = ['sync', i];
    if (!expect(typeof entry === 'object' && entry !== null && !Array.isArray(entry), path, 'expected a mapping with "from" and "modules" (or "for")')) return;
    const e = entry as Record<string, unknown>;
    for (const key of Object.keys(e)) expect(KEYS.includes(key), [...path, key], `unknown key; expected one of ${KEYS.join(', ')}`);
    expect(
      typeof e['from'] === 'string' && /^https?:\/\/[^/]+/.test(e['from']),
      [...path, 'from'],
      `expected the upstream registry's http(s) URL, got ${show(e['from'])}`,
    );
    for (const key of ['into', 'tokenEnv']) if (key in e) expect(typeof e[key] === 'string', [...path, key], `expected a string, got ${show(e[key])}`);
    expect(
      'modules' in e || 'for' in e || 'providers' in e,
      [...path, 'modules'],
      'expected a list of NAMESPACE/NAME/PROVIDER[@CONSTRAINT] (or "providers": HOST/NAMESPACE/TYPE[@CONSTRAINT], or "for": configuration folders)',
    );
    stringList(e, 'modules', path, 'NAMESPACE/NAME/PROVIDER[@CONSTRAINT]', (spec) => {
      try {
        parseModuleSpec(spec);
        return undefined;
      } catch (error) {
        return (error as Error).message;
      }
    });
    const upstreamHost = typeof e['from'] === 'string' && URL.canParse(e['from']) ? normalizeHost(new URL(e['from']).host) : undefined;
    stringList(e, 'providers', path, 'HOST/NAMESPACE/TYPE[@CONSTRAINT]', (spec) => {
      try {
        parseProviderSpec(spec, upstreamHost ?? 'upstream.invalid');
        return undefined;
      } catch (error) {
        return (error as Error).message;
      }
    });
    stringList(e, 'platforms', path, 'OS_ARCH platforms', (p) => (isPlatform(p) ? undefined : `"${p}" is not an OS_ARCH platform such as linux_amd64`));
    stringList(e, 'for', path, 'Terraform configuration folders', () => undefined);
    stringList(e, 'standsInFor', path, 'registry host names', (host) =>
      normalizeHost(host) === undefined ? `"${host}" is not a registry host name such as registry.terraform.io` : undefined,
    );
    if ('dependencies' in e)
      expect(typeof e['dependencies'] === 'boolean', [...path, 'dependencies'], `expected true or false, got ${show(e['dependencies'])}`);
    if ('dependencyVersions' in e)
      expect(
        e['dependencyVersions'] === 'newest' || e['dependencyVersions'] === 'every',
        [...path, 'dependencyVersions'],
        `expected "newest" or "every", got ${show(e['dependencyVersions'])}`,
      );
  });
  return problems;
}

/** Paths made absolute against the config file's folder. */
export function resolveSyncEntry(entry: SyncEntry, base: string): SyncEntry {
  return {
    ...entry,
    ...(entry.into === undefined ? {} : { into: resolve(base, entry.into) }),
    ...(entry.for === undefined ? {} : { for: entry.for.map((dir) => resolve(base, dir)) }),
  };
}
