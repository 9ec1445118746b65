import { existsSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import type { Values } from '../cli.js';
import { addressFromRepoName, DEFAULT_CONFIG_FILE, DEFAULT_TAG_PATTERN, resolveConfig, type GitSource, type ResolvedConfig } from '../config.js';
import { MirrorError } from '../errors.js';
import { addressKey, isValidName } from '../emit/paths.js';
import { publish, type PublishResult } from '../publish.js';
import { describeFolder } from '../scan/folder.js';
import { scanGitRef } from '../scan/git.js';
import type { ModuleAddress, ModuleMeta, VersionSource } from '../types.js';
import { validVersion } from '../version-order.js';

const usage = (message: string) => new MirrorError('USAGE', message, { hint: 'Run modmirror publish --help.' });

export async function runPublish(values: Values, positionals: string[] = []): Promise<number> {
  if (positionals.length > 0) throw usage(`Unexpected argument "${positionals[0]}".`);
  const str = (name: string) => values[name] as string | undefined;
  if ((str('source') === undefined) === (str('git') === undefined)) throw usage('Give the version to publish with --source PATH, or with --git REPO --ref REF.');
  if (str('git') !== undefined && str('ref') === undefined) throw usage('--git needs --ref (the tag or commit to publish).');
  const version = str('version');
  if (version !== undefined && validVersion(version) === null) throw usage(`--version "${version}" is not a semver version.`);

  const config = optionalConfig(str('config'), str('out'));
  const source = str('git') !== undefined ? await gitVersion(values, config) : await folderVersion(values, config);
  const result = await publish(source, {
    outDir: config?.outDir ?? resolve(str('out') ?? 'dist'),
    cacheDir: config?.cacheDir ?? resolve('.modmirror-cache'),
    baseUrl: str('base-url') ?? config?.baseUrl ?? '',
    imageHosts: config?.imageHosts ?? [],
    force: values['force'] === true,
    dryRun: values['dry-run'] === true,
  });
  if (values['json'] === true) console.log(JSON.stringify({ ...result, seconds: Number(result.seconds.toFixed(3)) }));
  else printHuman(result);
  return 0;
}

/** Publish reads the config when there is one (module addresses, metadata, git settings) but needs none. */
function optionalConfig(configFlag: string | undefined, out: string | undefined): ResolvedConfig | undefined {
  if (configFlag === undefined && !existsSync(DEFAULT_CONFIG_FILE)) return undefined;
  return resolveConfig({ config: configFlag, out });
}

function flagAddress(values: Values, fallback?: Partial<ModuleAddress>): ModuleAddress {
  const address = {
    namespace: (values['namespace'] as string | undefined) ?? fallback?.namespace ?? '',
    name: (values['name'] as string | undefined) ?? fallback?.name ?? '',
    provider: (values['provider'] as string | undefined) ?? fallback?.provider ?? '',
  };
  for (const [part, value] of Object.entries(address)) {
    if (value === '') throw usage(`Missing the module's ${part}: pass --${part}, or publish a source the config describes.`);
    if (!isValidName(value)) throw usage(`--${part} "${value}" is not a valid name (letters, digits, "-" and "_").`);
  }
  return address;
}

function metaFor(config: ResolvedConfig | undefined, address: ModuleAddress, own: Partial<ModuleMeta> = {}): ModuleMeta {
  return { owner: '', description: '', source: '', verified: false, ...config?.modules.get(addressKey(address)), ...own };
}

async function gitVersion(values: Values, config: ResolvedConfig | undefined): Promise<VersionSource> {
  const repoFlag = values['git'] as string;
  const remote = /^[a-z][a-z0-9+.-]*:\/\//i.test(repoFlag) || /^[^/]+@[^/]+:/.test(repoFlag);
  const repo = remote ? repoFlag : resolve(repoFlag);
  if (!remote && !existsSync(repo)) throw new MirrorError('SOURCE_NOT_FOUND', `The repository "${repo}" does not exist.`, { hint: 'Check the --git path.' });
  const configured = config?.sources.find((s): s is GitSource => s.kind === 'git' && s.repo === repo);
  const address = flagAddress(values, configured?.address ?? addressFromRepoName(repo));
  const source: GitSource = configured
    ? { ...configured, address }
    : { kind: 'git', repo, remote, address, path: '', tagPrefix: '', tagPattern: new RegExp(DEFAULT_TAG_PATTERN), meta: {} };
  const cacheDir = config?.cacheDir ?? resolve('.modmirror-cache');
  return scanGitRef(source, metaFor(config, address, source.meta), values['ref'] as string, values['version'] as string | undefined, cacheDir);
}

async function folderVersion(values: Values, config: ResolvedConfig | undefined): Promise<VersionSource> {
  const dir = resolve(values['source'] as string);
  if (!existsSync(dir)) throw new MirrorError('SOURCE_NOT_FOUND', `The folder "${dir}" does not exist.`, { hint: 'Check the --source path.' });
  // A folder in the drop layout names its own address: .../<namespace>/<name>/<provider>/<version>.
  const [version, provider, name, namespace] = dir.split(/[/\\]/).reverse();
  const fromLayout = [namespace, name, provider].every((p) => p !== undefined && isValidName(p)) ? { namespace, name, provider } : undefined;
  const address = flagAddress(values, fromLayout);
  const resolvedVersion = (values['version'] as string | undefined) ?? validVersion(basename(dir)) ?? undefined;
  if (resolvedVersion === undefined) throw usage(`The folder name "${version}" is not a version: pass --version X.Y.Z.`);
  const { publishedAt, fingerprint } = await describeFolder(dir);
  return {
    address,
    meta: metaFor(config, address),
    version: resolvedVersion,
    tag: basename(dir),
    publishedAt,
    origin: { kind: 'folder', dir },
    label: dir,
    fingerprint,
  };
}

function printHuman(r: PublishResult): void {
  for (const w of r.warnings ?? []) console.error(`warning: ${w}`);
  const what = `${r.module} ${r.version}`;
  if (r.outcome === 'unchanged') console.log(`${what} is already published with the same content (sha256 ${r.sha256}); nothing to do.`);
  else if (r.dryRun) {
    console.log(`Would ${r.outcome === 'replaced' ? 'replace' : 'publish'} ${what} (sha256 ${r.sha256}), changing ${r.changed.length} files:`);
    for (const file of r.changed) console.log(`  ${file}`);
  } else if (r.outcome === 'replaced') console.log(`Replaced ${what}: sha256 ${r.previousSha256} -> ${r.sha256} (recorded in the manifest) in ${r.seconds.toFixed(2)} s.`);
  else console.log(`Published ${what} (sha256 ${r.sha256}) in ${r.seconds.toFixed(2)} s.`);
}
