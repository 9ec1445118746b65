// Config stage: mirror.config.yaml (or CLI flags alone) -> ResolvedConfig.
// Every problem is collected and reported with file:line, the key, the bad
// value and what was expected, before any work starts.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { LineCounter, parseDocument, type Document } from 'yaml';
import { MirrorError } from '../errors.js';
import type { ModuleAddress, ModuleMeta, SizeLimits } from '../types.js';
import { addressKey } from '../protocol/paths.js';
import { resolveSyncEntry, validateSyncEntries, type SyncEntry } from './sync.js';
import { DEFAULT_LIMITS, resolveLimits, validateLimits, type UserLimits } from './limits.js';
import { resolveUpstream, validateUpstream, type ResolvedUpstream, type UserUpstream } from './upstream.js';
import { DEFAULT_PLATFORMS, DEFAULT_PROVIDERS_PATH } from '../protocol/providers.js';
import { Checker, isAbsoluteHttpUrl, show, type KeyPath, type Problem } from './check.js';
import { checkResolvedSources, resolveSource, validateModuleMeta, validateSources, type ResolvedSource, type UserSource } from './sources.js';
import {
  checkResolvedProviderFolders,
  resolveProviderFolder,
  validatePlatforms,
  validateProviderFolders,
  validateProvidersPath,
  type ProviderFolder,
  type UserProviderFolder,
} from './providers.js';
import { resolveSigning, validateSigning, validateTrust, type SigningConfig, type TrustFile, type UserSigning } from './signing.js';

export const DEFAULT_CONFIG_FILE = 'mirror.config.yaml';
const DEFAULT_OUT = 'dist';
const DEFAULT_CACHE_DIR = '.modmirror-cache';

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
  signing?: UserSigning;
  /** The key that signs each version's provenance (build and publish; --sign-key overrides it). */
  provenance?: UserSigning;
  /** Who may read the registry `modmirror serve` answers: anyone (public), or token holders (private). */
  access?: Access;
  /** How large a version's files may be: a version over a bound fails alone. */
  limits?: UserLimits;
  /** Armored public key files whose signatures unbundle accepts on a bundle (and requires: an unsigned bundle is refused). */
  trust?: string[];
  /** The registry `modmirror serve` fills the mirror from on a miss. */
  upstream?: UserUpstream;
}

export type Access = 'public' | 'private';
export const ACCESS_MODES: Access[] = ['public', 'private'];

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
  let where = (path: KeyPath) => `(command line): ${formatPath(path)}`;
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
    ...(user.signing ? { signing: resolveSigning(user.signing, base) } : {}),
    ...(user.provenance ? { provenance: resolveSigning(user.provenance, base) } : {}),
    access: user.access ?? 'public',
    limits: resolveLimits(user.limits),
    trust: (user.trust ?? []).map((file, i) => ({ file: resolve(base, file), at: where(['trust', i]) })),
    upstream: resolveUpstream(user.upstream, base),
  };
  const describe = (problem: Problem) => `${where(problem.path)}: ${problem.message}`;
  if (options.sourcesMustExist !== false) checkResolved(resolved, describe);
  return resolved;
}

// ---- validation ------------------------------------------------------------

function loadUserConfig(file: string): { user: UserConfig; where: (path: KeyPath) => string } {
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
  const lineOf = (path: KeyPath) => lineIn(doc, lineCounter, path);
  const where = (path: KeyPath) => `${file}:${lineOf(path)}: ${formatPath(path)}`;
  // In the file's order, as the person fixing them reads it.
  const problems = validateUserConfig(value)
    .map((problem) => ({ line: lineOf(problem.path), text: `${where(problem.path)}: ${problem.message}` }))
    .sort((a, b) => a.line - b.line);
  if (problems.length > 0) {
    throw new MirrorError('CONFIG_INVALID', `${problems.length} problem(s) in the config:\n${problems.map((p) => p.text).join('\n')}`, {
      hint: 'See the commented mirror.config.yaml in the modmirror repository for every key.',
    });
  }
  return { user: value as UserConfig, where };
}

/** The line a key is on, or its nearest parent's when the key is not there. */
function lineIn(doc: Document, lineCounter: LineCounter, path: KeyPath): number {
  for (let depth = path.length; depth >= 0; depth--) {
    const node = doc.getIn(path.slice(0, depth), true) as { range?: [number, number, number] } | undefined;
    if (node && typeof node === 'object' && node.range) return lineCounter.linePos(node.range[0]).line;
  }
  return 1;
}

function formatPath(path: KeyPath): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('') || '(root)';
}

/** Every problem of the config file's value: the top-level keys here, each section's in its own file. */
function validateUserConfig(value: unknown): Problem[] {
  const check = new Checker();
  if (!check.mapping(value, [], 'expected a mapping of keys (out, baseUrl, sources, modules)')) return check.problems;
  const config = value;
  check.knownKeys(config, TOP_KEYS, []);
  for (const key of ['out', 'cacheDir', 'baseUrl']) check.optionalString(config, key, []);
  if (typeof config['baseUrl'] === 'string' && config['baseUrl'] !== '') {
    check.expect(
      isAbsoluteHttpUrl(config['baseUrl']),
      ['baseUrl'],
      `expected an absolute http(s) URL such as https://registry.example.com/, got ${show(config['baseUrl'])}`,
    );
  }
  if ('access' in config)
    check.expect(ACCESS_MODES.includes(config['access'] as Access), ['access'], `expected public or private, got ${show(config['access'])}`);
  if ('browse' in config && check.mapping(config['browse'], ['browse'], 'expected a mapping with imageHosts')) {
    const browse = config['browse'];
    check.knownKeys(browse, ['imageHosts'], ['browse']);
    if ('imageHosts' in browse) {
      const origin = 'an http(s) origin such as https://img.example.com';
      check.stringList(browse['imageHosts'], ['browse', 'imageHosts'], {
        list: 'origins such as https://img.example.com',
        item: origin,
        mayBeEmpty: true,
        check: (host) => (URL.canParse(host) && /^https?:$/.test(new URL(host).protocol) ? undefined : `expected ${origin}, got ${show(host)}`),
      });
    }
  }
  const sections: [string, (value: unknown) => Problem[]][] = [
    ['sources', validateSources],
    ['modules', validateModuleMeta],
    ['providers', (providers) => validateProviderFolders(providers, config['baseUrl'])],
    ['platforms', validatePlatforms],
    ['providersPath', validateProvidersPath],
    ['signing', (signing) => validateSigning('signing', signing)],
    ['provenance', (provenance) => validateSigning('provenance', provenance)],
    ['trust', validateTrust],
    ['sync', validateSyncEntries],
    ['limits', validateLimits],
    ['upstream', validateUpstream],
  ];
  for (const [key, validate] of sections) if (key in config) check.problems.push(...validate(config[key]));
  return check.problems;
}

/** Checks that need resolved paths: sources exist, git addresses are complete and unique. */
function checkResolved(config: ResolvedConfig, describe: (problem: Problem) => string): void {
  const problems = [...checkResolvedSources(config.sources), ...checkResolvedProviderFolders(config.providerFolders)];
  if (config.sources.length === 0 && config.providerFolders.length === 0) {
    problems.push({ path: ['sources'], message: 'no module sources; add "- folder: modules" or "- git: REPO"' });
  }
  if (problems.length > 0) {
    throw new MirrorError('CONFIG_INVALID', `${problems.length} problem(s) in the config:\n${problems.map(describe).join('\n')}`, {
      hint: 'Fix each key shown, then build again.',
    });
  }
}
