// The config's `sources:` (folders of modules, and git repositories whose
// tags are versions) and `modules:` (each module's metadata): what may be
// written, checked key by key, and what it resolves to.

import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ModuleAddress, ModuleMeta } from '../types.js';
import { addressKey, isValidName } from '../protocol/paths.js';
import { Checker, show, type KeyPath, type Problem } from './check.js';

export const DEFAULT_TAG_PATTERN = String.raw`^v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)$`;

export type UserSource =
  | { folder: string }
  | ({ git: string; namespace?: string; name?: string; provider?: string; path?: string; tagPrefix?: string; tagPattern?: string } & Partial<ModuleMeta>);

export interface FolderSource {
  kind: 'folder';
  dir: string;
}

export interface GitSource {
  kind: 'git';
  /** Absolute path of a local repository, or a clone URL. */
  repo: string;
  remote: boolean;
  address: ModuleAddress;
  /** Subfolder of the repository that holds the module ('' for the root). */
  path: string;
  tagPrefix: string;
  tagPattern: RegExp;
  meta: Partial<ModuleMeta>;
}

export type ResolvedSource = FolderSource | GitSource;

const META_KEYS = ['owner', 'description', 'source', 'verified'];
const GIT_KEYS = ['git', 'namespace', 'name', 'provider', 'path', 'tagPrefix', 'tagPattern', ...META_KEYS];

/** Every problem of a `sources:` value. */
export function validateSources(value: unknown): Problem[] {
  const check = new Checker();
  if (!check.expect(Array.isArray(value), ['sources'], 'expected a list of sources (- folder: DIR, or - git: REPO)')) return check.problems;
  (value as unknown[]).forEach((source, i) => {
    const path = ['sources', i];
    if (!check.mapping(source, path, 'expected a mapping with a "folder" or a "git" key')) return;
    if ('folder' in source) {
      check.knownKeys(source, ['folder'], path);
      check.expect(
        typeof source['folder'] === 'string' && source['folder'] !== '',
        [...path, 'folder'],
        `expected a folder path, got ${show(source['folder'])}`,
      );
    } else if ('git' in source) {
      check.knownKeys(source, GIT_KEYS, path);
      check.expect(
        typeof source['git'] === 'string' && source['git'] !== '',
        [...path, 'git'],
        `expected a repository path or clone URL, got ${show(source['git'])}`,
      );
      for (const key of ['namespace', 'name', 'provider', 'path', 'tagPrefix', 'tagPattern']) check.optionalString(source, key, path);
      checkMeta(check, source, path);
      if (typeof source['tagPattern'] === 'string') {
        try {
          new RegExp(source['tagPattern']);
        } catch (error) {
          check.problems.push({ path: [...path, 'tagPattern'], message: `not a valid regular expression: ${(error as Error).message}` });
        }
      }
    } else {
      check.problems.push({ path, message: 'expected a "folder" or a "git" key' });
    }
  });
  return check.problems;
}

/** Every problem of a `modules:` value: NAMESPACE/NAME/PROVIDER to its metadata. */
export function validateModuleMeta(value: unknown): Problem[] {
  const check = new Checker();
  if (!check.mapping(value, ['modules'], 'expected a mapping of NAMESPACE/NAME/PROVIDER to metadata')) return check.problems;
  for (const [key, meta] of Object.entries(value)) {
    const path = ['modules', key];
    const parts = key.split('/');
    check.expect(parts.length === 3 && parts.every(isValidName), path, 'expected a module address NAMESPACE/NAME/PROVIDER');
    if (check.mapping(meta, path, 'expected a mapping with owner, description, source or verified')) {
      check.knownKeys(meta, META_KEYS, path);
      checkMeta(check, meta, path);
    }
  }
  return check.problems;
}

function checkMeta(check: Checker, obj: Record<string, unknown>, path: KeyPath): void {
  for (const key of ['owner', 'description', 'source']) check.optionalString(obj, key, path);
  check.optionalBoolean(obj, 'verified', path);
}

/** A clone URL (`https://...`, `ssh://...`, `git@host:path`) rather than a local path. */
export function isRemoteRepository(repo: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(repo) || /^[^/]+@[^/]+:/.test(repo);
}

/** The public registry's naming: `terraform-<provider>-<name>`. */
export function addressFromRepoName(repo: string): { provider: string; name: string } | undefined {
  const base = repo
    .replace(/\/+$/, '')
    .split(/[/:]/)
    .pop()!
    .replace(/\.git$/, '');
  const match = /^terraform-([a-z0-9]+)-(.+)$/.exec(base);
  return match ? { provider: match[1]!, name: match[2]! } : undefined;
}

/** A source with its paths made absolute against `base` (the config file's folder). */
export function resolveSource(source: UserSource, base: string): ResolvedSource {
  if ('folder' in source) return { kind: 'folder', dir: resolve(base, source.folder) };
  const remote = isRemoteRepository(source.git);
  const repo = remote ? source.git : resolve(base, source.git);
  const derived = addressFromRepoName(repo);
  return {
    kind: 'git',
    repo,
    remote,
    address: {
      namespace: source.namespace ?? '',
      name: source.name ?? derived?.name ?? '',
      provider: source.provider ?? derived?.provider ?? '',
    },
    path: (source.path ?? '').replace(/^\/+|\/+$/g, ''),
    tagPrefix: source.tagPrefix ?? '',
    tagPattern: new RegExp(source.tagPattern ?? DEFAULT_TAG_PATTERN),
    meta: pickMeta(source),
  };
}

function pickMeta(source: Partial<ModuleMeta>): Partial<ModuleMeta> {
  const meta: Partial<ModuleMeta> = {};
  if (source.owner !== undefined) meta.owner = source.owner;
  if (source.description !== undefined) meta.description = source.description;
  if (source.source !== undefined) meta.source = source.source;
  if (source.verified !== undefined) meta.verified = source.verified;
  return meta;
}

/** What only resolved sources show: folders and repositories that are not there, incomplete or repeated module addresses. */
export function checkResolvedSources(sources: ResolvedSource[]): Problem[] {
  const problems: Problem[] = [];
  const seen = new Map<string, number>();
  sources.forEach((source, i) => {
    const path = ['sources', i];
    if (source.kind === 'folder') {
      if (!existsSync(source.dir) || !statSync(source.dir).isDirectory()) {
        problems.push({ path: [...path, 'folder'], message: `the folder "${source.dir}" does not exist` });
      }
      return;
    }
    if (!source.remote && !existsSync(source.repo)) {
      problems.push({ path: [...path, 'git'], message: `the repository "${source.repo}" does not exist` });
    }
    for (const part of ['namespace', 'name', 'provider'] as const) {
      const value = source.address[part];
      if (value === '') {
        const how = part === 'namespace' ? 'set it' : 'set it, or name the repository terraform-<provider>-<name>';
        problems.push({ path: [...path, part], message: `missing; ${how}` });
      } else if (!isValidName(value)) {
        problems.push({ path: [...path, part], message: `${show(value)} is not a valid name (letters, digits, "-" and "_")` });
      }
    }
    const key = addressKey(source.address);
    const first = seen.get(key);
    if (first !== undefined) {
      problems.push({ path, message: `duplicate module address ${key}, already given by sources[${first}]; give each source its own namespace/name/provider` });
    } else seen.set(key, i);
  });
  return problems;
}
