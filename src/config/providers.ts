// The config's provider keys: `providers:` (folders of providers the build
// mirrors, and folders of in-house release zips), `platforms:` and
// `providersPath:`: what may be written, checked key by key, and what it
// resolves to.

import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { DEFAULT_PROVIDER_HOSTNAME, isPlatform, isProviderHostname, isProviderPart } from '../protocol/providers.js';
import { Checker, isAbsoluteHttpUrl, show, type Problem } from './check.js';

/** A provider folder: the `terraform providers mirror` layout, or (with `namespace`) a folder of release zips. */
export interface UserProviderFolder {
  folder: string;
  hostname?: string;
  namespace?: string;
  /** A folder of in-house releases: published over the provider registry protocol, signatures checked. */
  registry?: boolean;
  /** Armored public key files whose signatures its releases may carry. */
  keys?: string[];
}

/**
 * A folder of providers. `mirror`: laid out as `terraform providers mirror`
 * writes it (HOSTNAME/NAMESPACE/TYPE/...). `releases`: release zips
 * (terraform-provider-TYPE_VERSION_OS_ARCH.zip) with their SHA256SUMS files,
 * all of one origin registry and namespace.
 */
export type ProviderFolder =
  | { kind: 'mirror'; dir: string }
  | {
      kind: 'releases';
      dir: string;
      hostname: string;
      namespace: string;
      /** In-house releases (`registry: true`): also served over providers.v1, each signed by one of `keys` (absolute files). */
      registry?: { keys: string[] };
    };

const PROVIDER_FOLDER_KEYS = ['folder', 'hostname', 'namespace', 'registry', 'keys'];

/**
 * Every problem of a `providers:` value. `baseUrl` is the config's: in-house providers are
 * addressed by the mirror's host name, so they need it or a hostname of their own.
 */
export function validateProviderFolders(value: unknown, baseUrl: unknown): Problem[] {
  const check = new Checker();
  if (!check.expect(Array.isArray(value), ['providers'], 'expected a list of provider folders (- folder: DIR)')) return check.problems;
  (value as unknown[]).forEach((entry, i) => {
    const path = ['providers', i];
    if (!check.mapping(entry, path, 'expected a mapping with a "folder" key')) return;
    check.knownKeys(entry, PROVIDER_FOLDER_KEYS, path);
    check.expect(typeof entry['folder'] === 'string' && entry['folder'] !== '', [...path, 'folder'], `expected a folder path, got ${show(entry['folder'])}`);
    if ('namespace' in entry) {
      check.expect(
        typeof entry['namespace'] === 'string' && isProviderPart(entry['namespace']),
        [...path, 'namespace'],
        `expected a provider namespace such as hashicorp (lower-case letters, digits and "-"), got ${show(entry['namespace'])}`,
      );
    }
    for (const key of ['registry', 'keys']) {
      if (key in entry) check.expect('namespace' in entry, [...path, key], `${key} belongs to a folder of release zips, which also needs "namespace"`);
    }
    check.optionalBoolean(entry, 'registry', path);
    if ('keys' in entry) {
      check.stringList(entry['keys'], [...path, 'keys'], { list: 'armored public key files', item: 'a key file path', mayBeEmpty: true });
      check.expect(entry['registry'] === true, [...path, 'keys'], 'keys check the signatures of in-house releases; set registry: true too');
    }
    if (entry['registry'] === true && !('hostname' in entry)) {
      check.expect(
        typeof baseUrl === 'string' && isAbsoluteHttpUrl(baseUrl),
        [...path, 'registry'],
        "in-house providers are addressed HOSTNAME/NAMESPACE/TYPE by the mirror's host name: set hostname (e.g. registry.example.com) or baseUrl",
      );
    }
    if ('hostname' in entry) {
      if (check.expect('namespace' in entry, [...path, 'hostname'], 'a hostname belongs to a folder of release zips, which also needs "namespace"')) {
        check.expect(
          typeof entry['hostname'] === 'string' && isProviderHostname(entry['hostname'].toLowerCase()),
          [...path, 'hostname'],
          `expected a registry host name such as registry.terraform.io, got ${show(entry['hostname'])}`,
        );
      }
    }
  });
  return check.problems;
}

/** Every problem of a `platforms:` value. */
export function validatePlatforms(value: unknown): Problem[] {
  const check = new Checker();
  check.stringList(value, ['platforms'], {
    list: 'OS_ARCH platforms such as [linux_amd64, darwin_arm64]',
    item: 'an OS_ARCH platform such as linux_amd64',
    check: (platform) => (isPlatform(platform) ? undefined : `expected an OS_ARCH platform such as linux_amd64, got ${show(platform)}`),
  });
  return check.problems;
}

/** Every problem of a `providersPath:` value: a folder inside the mirror, clear of the registry's own paths. */
export function validateProvidersPath(value: unknown): Problem[] {
  const check = new Checker();
  const segments = typeof value === 'string' ? value.replace(/^\/+|\/+$/g, '').split('/') : [];
  check.expect(
    segments.length > 0 &&
      segments.every((s) => /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/.test(s) && s !== '..' && !s.startsWith('.')) &&
      !['v1', 'v2', '.well-known'].includes(segments[0]!),
    ['providersPath'],
    `expected a folder path inside the mirror such as providers (not under v1/, v2/ or .well-known/), got ${show(value)}`,
  );
  return check.problems;
}

/** A provider folder with its paths made absolute against `base`; in-house ones take the host name of `baseUrl` when they name none. */
export function resolveProviderFolder(entry: UserProviderFolder, base: string, baseUrl: string): ProviderFolder {
  const dir = resolve(base, entry.folder);
  if (entry.namespace === undefined) return { kind: 'mirror', dir };
  if (entry.registry !== true)
    return { kind: 'releases', dir, hostname: (entry.hostname ?? DEFAULT_PROVIDER_HOSTNAME).toLowerCase(), namespace: entry.namespace };
  // Validation requires one of the two.
  const hostname = (entry.hostname ?? (baseUrl === '' ? '' : new URL(baseUrl).host)).toLowerCase();
  return { kind: 'releases', dir, hostname, namespace: entry.namespace, registry: { keys: (entry.keys ?? []).map((k) => resolve(base, k)) } };
}

/** What only resolved folders show: folders and key files that are not there. */
export function checkResolvedProviderFolders(folders: ProviderFolder[]): Problem[] {
  const problems: Problem[] = [];
  folders.forEach((folder, i) => {
    if (!existsSync(folder.dir) || !statSync(folder.dir).isDirectory()) {
      problems.push({ path: ['providers', i, 'folder'], message: `the folder "${folder.dir}" does not exist` });
    }
    if (folder.kind === 'releases') {
      folder.registry?.keys.forEach((key, j) => {
        if (!existsSync(key)) problems.push({ path: ['providers', i, 'keys', j], message: `the key file "${key}" does not exist` });
      });
    }
  });
  return problems;
}
