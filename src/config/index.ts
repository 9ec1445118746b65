// Config stage: mirror.config.yaml (or CLI flags alone) -> ResolvedConfig.
// Every problem is collected and reported with file:line, the key, the bad
// value and what was expected, before any work starts.

import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { LineCounter, parseDocument, type Document } from 'yaml';
import { MirrorError } from '../errors.js';
import type { ModuleAddress, ModuleMeta, SizeLimits } from '../types.js';
import { addressKey, isValidName } from '../protocol/paths.js';
import { resolveSyncEntry, validateSyncEntries, type SyncEntry } from './sync.js';
import { DEFAULT_LIMITS, resolveLimits, validateLimits, type UserLimits } from './limits.js';
import { resolveUpstream, validateUpstream, type ResolvedUpstream, type UserUpstream } from './upstream.js';
import { DEFAULT_PLATFORMS, DEFAULT_PROVIDER_HOSTNAME, DEFAULT_PROVIDERS_PATH, isPlatform, isProviderHostname, isProviderPart } from '../protocol/providers.js';

export const DEFAULT_CONFIG_FILE = 'mirror.config.yaml';
const DEFAULT_OUT = 'dist';
const DEFAULT_CACHE_DIR = '.modmirror-cache';
export const DEFAULT_TAG_PATTERN = String.raw`^v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)$`;

/** What a user may write. */
export interface UserConfig {
  out?: string;
  baseUrl?: string;
  cacheDir?: string;
  sources?: UserSource[];
  modules?: Record<string, Partial<ModuleMeta>>;
  browse?: { imageHosts?: string[] };
  sync?: SyncEntry[];
  providers?: UserProviderFolder[];
  platforms?: string[];
  providersPath?: string;
  /** The site's key for signing in-house provider releases that come unsigned. */
  signing?: { key: string; passphraseEnv?: string };
  /** The key that signs each version's provenance (build and publish; --sign-key overrides it). */
  provenance?: { key: string; passphraseEnv?: string };
  /** Who may read the registry `modmirror serve` answers: anyone (public), or token holders (private). */
  access?: Access;
  /** How large a version's files may be: a version over a bound fails alone. */
  limits?: UserLimits;
  /** Armored public key files whose signatures unbundle accepts on a bundle (and requires: an unsigned bundle is refused). */
  trust?: string[];
  /** The registry `modmirror serve` fills the mirror from on a miss. */
  upstream?: UserUpstream;
}

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

export type Access = 'public' | 'private';
export const ACCESS_MODES: Access[] = ['public', 'private'];

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

/** The key that signs unsigned in-house releases: an armored private key file; its passphrase comes from the environment. */
export interface SigningConfig {
  keyFile: string;
  /** The environment variable holding the passphrase (MODMIRROR_SIGNING_PASSPHRASE unless the config names another). */
  passphraseEnv: string;
}

export const DEFAULT_PASSPHRASE_ENV = 'MODMIRROR_SIGNING_PASSPHRASE';

/** A `trust:` entry: an armored public key file, and where the config names it (`FILE:LINE: trust[0]`), for messages about it. */
export interface TrustFile {
  file: string;
  at: string;
}

/** Config after resolution: every path absolute, every default filled. */
export interface ResolvedConfig {
  configFile: string | undefined;
  outDir: string;
  /** Absolute base URL ending in `/`, or '' for relative locations. */
  baseUrl: string;
  cacheDir: string;
  sources: ResolvedSource[];
  /** Metadata by `namespace/name/provider`. */
  modules: Map<string, Partial<ModuleMeta>>;
  /** Origins whose images the browse page may show in READMEs; none by default. */
  imageHosts: string[];
  /** Upstream registries `modmirror sync` fills the module folder from (`into` and `for` absolute). */
  sync: SyncEntry[];
  /** Provider folders the build mirrors (sync writes into the first `mirror` one). */
  providerFolders: ProviderFolder[];
  /** os_arch platforms the mirror is meant to serve (sync fetches them, verify --complete checks them). */
  platforms: string[];
  /** The network mirror's folder in the mirror's tree, relative, no leading or trailing slash. */
  providersPath: string;
  signing?: SigningConfig;
  /** The key that signs each version's provenance, when the config names one. */
  provenance?: SigningConfig;
  access: Access;
  /** Bounds in bytes on one file and on all of a version's files. */
  limits: SizeLimits;
  /** The keys unbundle requires a bundle's signature to be by (none: signatures are not checked). */
  trust: TrustFile[];
  /** serve --upstream's settings from the config (its flags override them). */
  upstream: ResolvedUpstream;
}

export interface ConfigOverrides {
  config?: string;
  modules?: string;
  out?: string;
  baseUrl?: string;
}

const TOP_KEYS = [
  'out',
  'baseUrl',
  'cacheDir',
  'sources',
  'modules',
  'browse',
  'sync',
  'providers',
  'platforms',
  'providersPath',
  'signing',
  'provenance',
  'access',
  'limits',
  'trust',
  'upstream',
];
const PROVIDER_FOLDER_KEYS = ['folder', 'hostname', 'namespace', 'registry', 'keys'];
const META_KEYS = ['owner', 'description', 'source', 'verified'];
const GIT_KEYS = ['git', 'namespace', 'name', 'provider', 'path', 'tagPrefix', 'tagPattern', ...META_KEYS];

/** An absolute http(s) URL, as `baseUrl` and `--base-url` must be. */
export function isAbsoluteHttpUrl(value: string): boolean {
  return /^https?:\/\/[^/]+/.test(value);
}

/** The one base-URL rule: '' (relative locations) or an absolute URL ending in `/`. */
export function normalizeBaseUrl(value: string): string {
  return value === '' || value.endsWith('/') ? value : `${value}/`;
}

/** A `--base-url` flag, checked and normalized; `undefined` when not given. */
export function baseUrlFlag(value: string | undefined, command: string): string | undefined {
  if (value === undefined) return undefined;
  if (value !== '' && !isAbsoluteHttpUrl(value)) {
    throw new MirrorError('USAGE', `Invalid --base-url "${value}": expected an absolute http(s) URL such as https://registry.example.com/.`, {
      hint: `Run modmirror ${command} --help.`,
    });
  }
  return normalizeBaseUrl(value);
}

/** A clone URL (`https://...`, `ssh://...`, `git@host:path`) rather than a local path. */
export function isRemoteRepository(repo: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(repo) || /^[^/]+@[^/]+:/.test(repo);
}

/** A module's metadata: the defaults, then the config's `modules:` entry, then the source's own keys. */
export function moduleMeta(config: Pick<ResolvedConfig, 'modules'> | undefined, address: ModuleAddress, own: Partial<ModuleMeta> = {}): ModuleMeta {
  return { owner: '', description: '', source: '', verified: false, ...config?.modules.get(addressKey(address)), ...own };
}

/**
 * The config for a command that reads a mirror rather than builds one (serve,
 * verify, bundle, unbundle, hosting, publish): the config file when there is
 * one (for `out`, `baseUrl`, module metadata), else the defaults. Its sources
 * are not required to exist here: a mirror is often served or carried far
 * from the repositories it was built from.
 */
export function resolveMirrorConfig(overrides: Omit<ConfigOverrides, 'modules'>, cwd = process.cwd()): ResolvedConfig {
  if (overrides.config !== undefined || existsSync(resolve(cwd, DEFAULT_CONFIG_FILE))) {
    return resolveConfig(overrides, cwd, { sourcesMustExist: false });
  }
  return {
    configFile: undefined,
    outDir: resolve(cwd, overrides.out ?? DEFAULT_OUT),
    baseUrl: normalizeBaseUrl(overrides.baseUrl ?? ''),
    cacheDir: resolve(cwd, DEFAULT_CACHE_DIR),
    sources: [],
    modules: new Map(),
    imageHosts: [],
    sync: [],
    providerFolders: [],
    platforms: [...DEFAULT_PLATFORMS],
    providersPath: DEFAULT_PROVIDERS_PATH,
    access: 'public',
    limits: { ...DEFAULT_LIMITS },
    trust: [],
    upstream: resolveUpstream(undefined, cwd),
  };
}

export function resolveConfig(overrides: ConfigOverrides, cwd = process.cwd(), options: { sourcesMustExist?: boolean } = {}): ResolvedConfig {
  const explicit = overrides.config !== undefined;
  const configPath = resolve(cwd, overrides.config ?? DEFAULT_CONFIG_FILE);
  const useFile = explicit || (overrides.modules === undefined && existsSync(configPath));
  let user: UserConfig = {};
  let base = cwd;
  let where = (path: Problem['path']) => `(command line): ${formatPath(path)}`;
  if (useFile) {
    if (!existsSync(configPath)) {
      throw new MirrorError('CONFIG_NOT_FOUND', `The config file "${configPath}" does not exist.`, {
        hint: explicit ? 'Check the --config path.' : `Create ${DEFAULT_CONFIG_FILE}, or pass --modules DIR to build a folder of modules without one.`,
      });
    }
    ({ user, where } = loadUserConfig(configPath));
    base = dirname(configPath);
  } else if (overrides.modules === undefined) {
    throw new MirrorError('CONFIG_NOT_FOUND', `No ${DEFAULT_CONFIG_FILE} in ${cwd}.`, {
      hint: 'Pass --config FILE, or --modules DIR to build a folder laid out as <namespace>/<name>/<provider>/<version>/.',
    });
  }
  if (overrides.modules !== undefined && !existsSync(resolve(cwd, overrides.modules))) {
    throw new MirrorError('SOURCE_NOT_FOUND', `The folder "${resolve(cwd, overrides.modules)}" (--modules) does not exist.`, {
      hint: '--modules takes a folder laid out as <namespace>/<name>/<provider>/<version>/.',
    });
  }
  const sources: UserSource[] = overrides.modules !== undefined ? [{ folder: resolve(cwd, overrides.modules) }] : (user.sources ?? []);
  const baseUrl = overrides.baseUrl ?? user.baseUrl ?? '';
  const resolved: ResolvedConfig = {
    configFile: useFile ? configPath : undefined,
    outDir: overrides.out !== undefined ? resolve(cwd, overrides.out) : resolve(base, user.out ?? DEFAULT_OUT),
    baseUrl: normalizeBaseUrl(baseUrl),
    cacheDir: resolve(base, user.cacheDir ?? DEFAULT_CACHE_DIR),
    sources: sources.map((s) => resolveSource(s, base)),
    modules: new Map(Object.entries(user.modules ?? {})),
    imageHosts: user.browse?.imageHosts ?? [],
    sync: (user.sync ?? []).map((s) => resolveSyncEntry(s, base)),
    providerFolders: (user.providers ?? []).map((p) => resolveProviderFolder(p, base, normalizeBaseUrl(baseUrl))),
    platforms: user.platforms ?? [...DEFAULT_PLATFORMS],
    providersPath: (user.providersPath ?? DEFAULT_PROVIDERS_PATH).replace(/^\/+|\/+$/g, ''),
    ...(user.signing ? { signing: { keyFile: resolve(base, user.signing.key), passphraseEnv: user.signing.passphraseEnv ?? DEFAULT_PASSPHRASE_ENV } } : {}),
    ...(user.provenance
      ? { provenance: { keyFile: resolve(base, user.provenance.key), passphraseEnv: user.provenance.passphraseEnv ?? DEFAULT_PASSPHRASE_ENV } }
      : {}),
    access: user.access ?? 'public',
    limits: resolveLimits(user.limits),
    trust: (user.trust ?? []).map((file, i) => ({ file: resolve(base, file), at: where(['trust', i]) })),
    upstream: resolveUpstream(user.upstream, base),
  };
  const describe = (problem: Problem) => `${where(problem.path)}: ${problem.message}`;
  if (options.sourcesMustExist !== false) checkResolved(resolved, describe);
  return resolved;
}

function resolveSource(source: UserSource, base: string): ResolvedSource {
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

function resolveProviderFolder(entry: UserProviderFolder, base: string, baseUrl: string): ProviderFolder {
  const dir = resolve(base, entry.folder);
  if (entry.namespace === undefined) return { kind: 'mirror', dir };
  if (entry.registry !== true)
    return { kind: 'releases', dir, hostname: (entry.hostname ?? DEFAULT_PROVIDER_HOSTNAME).toLowerCase(), namespace: entry.namespace };
  // In-house providers are addressed by the mirror's own host name (validation requires one of the two).
  const hostname = (entry.hostname ?? (baseUrl === '' ? '' : new URL(baseUrl).host)).toLowerCase();
  return { kind: 'releases', dir, hostname, namespace: entry.namespace, registry: { keys: (entry.keys ?? []).map((k) => resolve(base, k)) } };
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

function pickMeta(source: Partial<ModuleMeta>): Partial<ModuleMeta> {
  const meta: Partial<ModuleMeta> = {};
  if (source.owner !== undefined) meta.owner = source.owner;
  if (source.description !== undefined) meta.description = source.description;
  if (source.source !== undefined) meta.source = source.source;
  if (source.verified !== undefined) meta.verified = source.verified;
  return meta;
}

// ---- validation ------------------------------------------------------------

interface Problem {
  path: (string | number)[];
  message: string;
}

function loadUserConfig(file: string): { user: UserConfig; where: (path: Problem['path']) => string } {
  const text = readFileSync(file, 'utf8');
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const lines = doc.errors.map((e) => {
      const pos = lineCounter.linePos(e.pos[0]);
      return `${file}:${pos.line}:${pos.col}: ${e.message.split('\n')[0]}`;
    });
    throw new MirrorError('CONFIG_INVALID', `The config file is not valid YAML:\n${lines.join('\n')}`, { hint: 'Fix the YAML syntax at the line shown.' });
  }
  const value = (doc.toJS() ?? {}) as unknown;
  const where = (path: Problem['path']) => whereIn(file, doc, lineCounter, path);
  const describe = (problem: Problem) => `${where(problem.path)}: ${problem.message}`;
  const problems = validateUserConfig(value);
  if (problems.length > 0) {
    throw new MirrorError('CONFIG_INVALID', `${problems.length} problem(s) in the config:\n${problems.map(describe).join('\n')}`, {
      hint: 'See the commented mirror.config.yaml in the modmirror repository for every key.',
    });
  }
  return { user: value as UserConfig, where };
}

/** `FILE:LINE: key.path`: where a key is in the config file. */
function whereIn(file: string, doc: Document, lineCounter: LineCounter, path: Problem['path']): string {
  // Point at the key itself when it exists, else at its parent.
  let line = 1;
  for (let depth = path.length; depth >= 0; depth--) {
    const node = doc.getIn(path.slice(0, depth), true) as { range?: [number, number, number] } | undefined;
    if (node && typeof node === 'object' && node.range) {
      line = lineCounter.linePos(node.range[0]).line;
      break;
    }
  }
  return `${file}:${line}: ${formatPath(path)}`;
}

function formatPath(path: (string | number)[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('') || '(root)';
}

const show = (v: unknown) => JSON.stringify(v) ?? String(v);

function validateUserConfig(value: unknown): Problem[] {
  const problems: Problem[] = [];
  const expect = (cond: boolean, path: (string | number)[], message: string) => {
    if (!cond) problems.push({ path, message });
    return cond;
  };
  const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  const unknownKeys = (obj: Record<string, unknown>, allowed: string[], path: (string | number)[]) => {
    for (const key of Object.keys(obj)) expect(allowed.includes(key), [...path, key], `unknown key; expected one of ${allowed.join(', ')}`);
  };
  const optionalString = (obj: Record<string, unknown>, key: string, path: (string | number)[]) => {
    if (key in obj) expect(typeof obj[key] === 'string', [...path, key], `expected a string, got ${show(obj[key])}`);
  };
  const metaChecks = (obj: Record<string, unknown>, path: (string | number)[]) => {
    for (const key of ['owner', 'description', 'source']) optionalString(obj, key, path);
    if ('verified' in obj) expect(typeof obj['verified'] === 'boolean', [...path, 'verified'], `expected true or false, got ${show(obj['verified'])}`);
  };

  if (!expect(isRecord(value), [], 'expected a mapping of keys (out, baseUrl, sources, modules)')) return problems;
  const config = value as Record<string, unknown>;
  unknownKeys(config, TOP_KEYS, []);
  optionalString(config, 'out', []);
  optionalString(config, 'cacheDir', []);
  optionalString(config, 'baseUrl', []);
  if (typeof config['baseUrl'] === 'string' && config['baseUrl'] !== '') {
    expect(
      isAbsoluteHttpUrl(config['baseUrl']),
      ['baseUrl'],
      `expected an absolute http(s) URL such as https://registry.example.com/, got ${show(config['baseUrl'])}`,
    );
  }
  if ('sources' in config && expect(Array.isArray(config['sources']), ['sources'], 'expected a list of sources (- folder: DIR, or - git: REPO)')) {
    (config['sources'] as unknown[]).forEach((source, i) => {
      const path = ['sources', i];
      if (!expect(isRecord(source), path, 'expected a mapping with a "folder" or a "git" key')) return;
      const s = source as Record<string, unknown>;
      if ('folder' in s) {
        unknownKeys(s, ['folder'], path);
        expect(typeof s['folder'] === 'string' && s['folder'] !== '', [...path, 'folder'], `expected a folder path, got ${show(s['folder'])}`);
      } else if ('git' in s) {
        unknownKeys(s, GIT_KEYS, path);
        expect(typeof s['git'] === 'string' && s['git'] !== '', [...path, 'git'], `expected a repository path or clone URL, got ${show(s['git'])}`);
        for (const key of ['namespace', 'name', 'provider', 'path', 'tagPrefix', 'tagPattern']) optionalString(s, key, path);
        metaChecks(s, path);
        if (typeof s['tagPattern'] === 'string') {
          try {
            new RegExp(s['tagPattern']);
          } catch (error) {
            problems.push({ path: [...path, 'tagPattern'], message: `not a valid regular expression: ${(error as Error).message}` });
          }
        }
      } else {
        problems.push({ path, message: 'expected a "folder" or a "git" key' });
      }
    });
  }
  if ('access' in config) expect(ACCESS_MODES.includes(config['access'] as Access), ['access'], `expected public or private, got ${show(config['access'])}`);
  if ('browse' in config && expect(isRecord(config['browse']), ['browse'], 'expected a mapping with imageHosts')) {
    const browse = config['browse'] as Record<string, unknown>;
    unknownKeys(browse, ['imageHosts'], ['browse']);
    if (
      'imageHosts' in browse &&
      expect(Array.isArray(browse['imageHosts']), ['browse', 'imageHosts'], 'expected a list of origins such as https://img.example.com')
    ) {
      (browse['imageHosts'] as unknown[]).forEach((host, i) => {
        let ok: boolean;
        try {
          ok = typeof host === 'string' && /^https?:$/.test(new URL(host).protocol);
        } catch {
          ok = false;
        }
        expect(ok, ['browse', 'imageHosts', i], `expected an http(s) origin such as https://img.example.com, got ${show(host)}`);
      });
    }
  }
  if ('sync' in config) problems.push(...validateSyncEntries(config['sync']));
  if ('limits' in config) problems.push(...validateLimits(config['limits']));
  if ('upstream' in config) problems.push(...validateUpstream(config['upstream']));
  if ('trust' in config && expect(Array.isArray(config['trust']), ['trust'], 'expected a list of armored public key files')) {
    (config['trust'] as unknown[]).forEach((k, i) =>
      expect(typeof k === 'string' && k !== '', ['trust', i], `expected an armored public key file, got ${show(k)}`),
    );
  }
  if ('providers' in config && expect(Array.isArray(config['providers']), ['providers'], 'expected a list of provider folders (- folder: DIR)')) {
    (config['providers'] as unknown[]).forEach((entry, i) => {
      const path = ['providers', i];
      if (!expect(isRecord(entry), path, 'expected a mapping with a "folder" key')) return;
      const p = entry as Record<string, unknown>;
      unknownKeys(p, PROVIDER_FOLDER_KEYS, path);
      expect(typeof p['folder'] === 'string' && p['folder'] !== '', [...path, 'folder'], `expected a folder path, got ${show(p['folder'])}`);
      if ('namespace' in p) {
        expect(
          typeof p['namespace'] === 'string' && isProviderPart(p['namespace']),
          [...path, 'namespace'],
          `expected a provider namespace such as hashicorp (lower-case letters, digits and "-"), got ${show(p['namespace'])}`,
        );
      }
      for (const key of ['registry', 'keys']) {
        if (key in p) expect('namespace' in p, [...path, key], `${key} belongs to a folder of release zips, which also needs "namespace"`);
      }
      if ('registry' in p) expect(typeof p['registry'] === 'boolean', [...path, 'registry'], `expected true or false, got ${show(p['registry'])}`);
      if ('keys' in p) {
        if (expect(Array.isArray(p['keys']), [...path, 'keys'], 'expected a list of armored public key files')) {
          (p['keys'] as unknown[]).forEach((k, j) =>
            expect(typeof k === 'string' && k !== '', [...path, 'keys', j], `expected a key file path, got ${show(k)}`),
          );
        }
        expect(p['registry'] === true, [...path, 'keys'], 'keys check the signatures of in-house releases; set registry: true too');
      }
      if (p['registry'] === true && !('hostname' in p)) {
        const baseUrl = config['baseUrl'];
        expect(
          typeof baseUrl === 'string' && isAbsoluteHttpUrl(baseUrl),
          [...path, 'registry'],
          "in-house providers are addressed HOSTNAME/NAMESPACE/TYPE by the mirror's host name: set hostname (e.g. registry.example.com) or baseUrl",
        );
      }
      if ('hostname' in p) {
        if (expect('namespace' in p, [...path, 'hostname'], 'a hostname belongs to a folder of release zips, which also needs "namespace"')) {
          expect(
            typeof p['hostname'] === 'string' && isProviderHostname(p['hostname'].toLowerCase()),
            [...path, 'hostname'],
            `expected a registry host name such as registry.terraform.io, got ${show(p['hostname'])}`,
          );
        }
      }
    });
  }
  if (
    'platforms' in config &&
    expect(
      Array.isArray(config['platforms']) && (config['platforms'] as unknown[]).length > 0,
      ['platforms'],
      'expected a list of OS_ARCH platforms such as [linux_amd64, darwin_arm64]',
    )
  ) {
    (config['platforms'] as unknown[]).forEach((platform, i) => {
      expect(typeof platform === 'string' && isPlatform(platform), ['platforms', i], `expected an OS_ARCH platform such as linux_amd64, got ${show(platform)}`);
    });
  }
  // signing: signs in-house provider releases, provenance: each version's provenance; both name a key alike.
  for (const entry of ['signing', 'provenance'] as const) {
    if (!(entry in config) || !expect(isRecord(config[entry]), [entry], 'expected a mapping with key (an armored private key file) and passphraseEnv'))
      continue;
    const signing = config[entry] as Record<string, unknown>;
    unknownKeys(signing, ['key', 'passphraseEnv'], [entry]);
    expect(typeof signing['key'] === 'string' && signing['key'] !== '', [entry, 'key'], `expected an armored private key file, got ${show(signing['key'])}`);
    if ('passphraseEnv' in signing) {
      expect(
        typeof signing['passphraseEnv'] === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(signing['passphraseEnv']),
        [entry, 'passphraseEnv'],
        `expected an environment variable name, got ${show(signing['passphraseEnv'])}`,
      );
    }
  }
  if ('providersPath' in config) {
    const value = config['providersPath'];
    const segments = typeof value === 'string' ? value.replace(/^\/+|\/+$/g, '').split('/') : [];
    expect(
      segments.length > 0 &&
        segments.every((s) => /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/.test(s) && s !== '..' && !s.startsWith('.')) &&
        !['v1', 'v2', '.well-known'].includes(segments[0]!),
      ['providersPath'],
      `expected a folder path inside the mirror such as providers (not under v1/, v2/ or .well-known/), got ${show(value)}`,
    );
  }
  if ('modules' in config && expect(isRecord(config['modules']), ['modules'], 'expected a mapping of NAMESPACE/NAME/PROVIDER to metadata')) {
    for (const [key, meta] of Object.entries(config['modules'] as Record<string, unknown>)) {
      const path = ['modules', key];
      const parts = key.split('/');
      expect(parts.length === 3 && parts.every(isValidName), path, 'expected a module address NAMESPACE/NAME/PROVIDER');
      if (expect(isRecord(meta), path, 'expected a mapping with owner, description, source or verified')) {
        unknownKeys(meta as Record<string, unknown>, META_KEYS, path);
        metaChecks(meta as Record<string, unknown>, path);
      }
    }
  }
  return problems;
}

/** Checks that need resolved paths: sources exist, git addresses are complete and unique. */
function checkResolved(config: ResolvedConfig, describe: (problem: Problem) => string): void {
  const problems: Problem[] = [];
  const seen = new Map<string, number>();
  config.sources.forEach((source, i) => {
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
  config.providerFolders.forEach((folder, i) => {
    if (!existsSync(folder.dir) || !statSync(folder.dir).isDirectory()) {
      problems.push({ path: ['providers', i, 'folder'], message: `the folder "${folder.dir}" does not exist` });
    }
    if (folder.kind === 'releases') {
      folder.registry?.keys.forEach((key, j) => {
        if (!existsSync(key)) problems.push({ path: ['providers', i, 'keys', j], message: `the key file "${key}" does not exist` });
      });
    }
  });
  if (config.sources.length === 0 && config.providerFolders.length === 0) {
    problems.push({ path: ['sources'], message: 'no module sources; add "- folder: modules" or "- git: REPO"' });
  }
  if (problems.length > 0) {
    throw new MirrorError('CONFIG_INVALID', `${problems.length} problem(s) in the config:\n${problems.map(describe).join('\n')}`, {
      hint: 'Fix each key shown, then build again.',
    });
  }
}
