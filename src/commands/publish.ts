import { existsSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { baseUrlFlag, moduleMeta, resolveMirrorConfig, type ResolvedConfig } from '../config/index.js';
import type { ProviderFolder } from '../config/providers.js';
import { DEFAULT_PASSPHRASE_ENV } from '../config/signing.js';
import { addressFromRepoName, DEFAULT_TAG_PATTERN, isRemoteRepository, type GitSource } from '../config/sources.js';
import { isProviderHostname, isProviderPart } from '../protocol/providers.js';
import type { ProviderPublishResult } from '../publish/provider.js';
import { MirrorError } from '../errors.js';
import { isValidName } from '../protocol/paths.js';
import type { StorePublishResult } from '../store/index.js';
import { describeFolder } from '../scan/folder.js';
import { scanGitRef } from '../scan/git.js';
import { GitReaders } from '../scan/git-objects.js';
import type { ModuleAddress, VersionSource } from '../types.js';
import { validVersion } from '../version-order.js';
import { printJson, usageError } from './args.js';
import { mirrorFlag, openMirror } from './mirror-flag.js';
import { provenanceSigningKey } from './key-flags.js';
import type { PublishFlags } from './options/publish.js';

const usage = (message: string) => usageError('publish', message);

export async function runPublish(values: PublishFlags): Promise<number> {
  if (values['provider-release'] !== undefined) return runProviderPublish(values, values['provider-release']);
  for (const flag of ['type', 'public-key', 'hostname', 'signing-key'] as const) {
    if (values[flag] !== undefined) throw usage(`--${flag} belongs to --provider-release DIR.`);
  }
  const { source, git: repo, ref } = values;
  if ((source === undefined) === (repo === undefined)) throw usage('Give the version to publish with --source PATH, or with --git REPO --ref REF.');
  if (repo !== undefined && ref === undefined) throw usage('--git needs --ref (the tag or commit to publish).');
  const versionFlag = values.version;
  // The same normal form as a build gives a tag: no leading `v`, no build metadata.
  const version = versionFlag === undefined ? undefined : validVersion(versionFlag);
  if (version === null) throw usage(`--version "${versionFlag}" is not a semver version.`);

  // The config, when there is one, gives module addresses, metadata and git settings; publish needs none.
  const target = mirrorFlag(values, 'publish', 'out');
  const { store, config } = await openMirror(values, 'publish', target, (out) =>
    resolveMirrorConfig({ config: values.config, out, baseUrl: baseUrlFlag(values['base-url'], 'publish') }),
  );
  // One `git cat-file` reads the ref and then the version's files; it must end however the publish does.
  const signer = await provenanceSigningKey(values, 'publish', config);
  const git = new GitReaders();
  let result: StorePublishResult;
  try {
    const versionSource =
      repo !== undefined ? await gitVersion(values, repo, ref!, config, version, git) : await folderVersion(values, source!, config, version);
    result = await store.publish(versionSource, {
      cacheDir: config.cacheDir,
      limits: config.limits,
      baseUrl: config.baseUrl,
      imageHosts: config.imageHosts,
      force: values.force === true,
      newMirror: values['new-mirror'] === true,
      dryRun: values['dry-run'] === true,
      git,
      signer,
    });
  } finally {
    git.closeAll();
    store.close();
  }
  if (values.json === true) printJson(result);
  else printHuman(result);
  return 0;
}

function flagAddress(values: PublishFlags, fallback?: Partial<ModuleAddress>, why = 'the source does not name it'): ModuleAddress {
  const address = {
    namespace: values.namespace ?? fallback?.namespace ?? '',
    name: values.name ?? fallback?.name ?? '',
    provider: values.provider ?? fallback?.provider ?? '',
  };
  for (const [part, value] of Object.entries(address)) {
    if (value === '') throw usage(`Missing the module's ${part} (${why}): pass --namespace, --name and --provider.`);
    if (!isValidName(value)) throw usage(`--${part} "${value}" is not a valid name (letters, digits, "-" and "_").`);
  }
  return address;
}

async function gitVersion(
  values: PublishFlags,
  repoFlag: string,
  ref: string,
  config: ResolvedConfig,
  version: string | undefined,
  git: GitReaders,
): Promise<VersionSource> {
  const remote = isRemoteRepository(repoFlag);
  const repo = remote ? repoFlag : resolve(repoFlag);
  if (!remote && !existsSync(repo)) throw new MirrorError('SOURCE_NOT_FOUND', `The repository "${repo}" does not exist.`, { hint: 'Check the --git path.' });
  const configured = config.sources.find((s): s is GitSource => s.kind === 'git' && s.repo === repo);
  const address = flagAddress(values, configured?.address ?? addressFromRepoName(repo));
  const source: GitSource = configured
    ? { ...configured, address }
    : { kind: 'git', repo, remote, address, path: '', tagPrefix: '', tagPattern: new RegExp(DEFAULT_TAG_PATTERN), meta: {} };
  return scanGitRef(source, moduleMeta(config, address, source.meta), ref, version, config.cacheDir, git);
}

async function folderVersion(values: PublishFlags, source: string, config: ResolvedConfig, versionFlag: string | undefined): Promise<VersionSource> {
  const dir = resolve(source);
  if (!existsSync(dir)) throw new MirrorError('SOURCE_NOT_FOUND', `The folder "${dir}" does not exist.`, { hint: 'Check the --source path.' });
  // A folder in the drop layout names its own address: .../<namespace>/<name>/<provider>/<version>, and
  // only when its last part is a version: any other folder's parents are not an address, however they are named.
  const [, provider, name, namespace] = dir.split(/[/\\]/).reverse();
  const layoutVersion = validVersion(basename(dir)) ?? undefined;
  const fromLayout =
    layoutVersion !== undefined && [namespace, name, provider].every((p) => p !== undefined && isValidName(p)) ? { namespace, name, provider } : undefined;
  const address = flagAddress(values, fromLayout, `${dir} is not in the drop layout .../NAMESPACE/NAME/PROVIDER/VERSION`);
  const resolvedVersion = versionFlag ?? layoutVersion;
  if (resolvedVersion === undefined) throw usage(`The folder name "${basename(dir)}" is not a version: pass --version X.Y.Z.`);
  const { publishedAt, fingerprint } = await describeFolder(dir);
  return {
    address,
    meta: moduleMeta(config, address),
    version: resolvedVersion,
    tag: basename(dir),
    publishedAt,
    origin: { kind: 'folder', dir },
    label: dir,
    fingerprint,
  };
}

function printHuman(r: StorePublishResult): void {
  for (const w of r.warnings ?? []) console.error(`warning: ${w}`);
  const what = `${r.module} ${r.version}`;
  if (r.outcome === 'unchanged') console.log(`${what} is already published with the same content (sha256 ${r.sha256}); nothing to do.`);
  else if (r.dryRun) {
    console.log(`Would ${r.outcome === 'would-replace' ? 'replace' : 'publish'} ${what} (sha256 ${r.sha256}), changing ${r.changed.length} files:`);
    for (const file of r.changed) console.log(`  ${file}`);
  } else if (r.outcome === 'replaced')
    console.log(`Replaced ${what}: sha256 ${r.previousSha256} -> ${r.sha256} (recorded in the manifest) in ${r.seconds.toFixed(2)} s.`);
  else console.log(`Published ${what} (sha256 ${r.sha256}) in ${r.seconds.toFixed(2)} s.`);
  if (r.target !== undefined && r.uploaded?.length) {
    console.log(
      `Uploaded ${r.uploaded.length} objects to ${r.target}${r.attempts! > 1 ? ` (after ${r.attempts! - 1} lost race(s) with other writers, redone)` : ''}.`,
    );
  }
}

async function runProviderPublish(values: PublishFlags, release: string): Promise<number> {
  for (const flag of ['source', 'git', 'ref', 'name', 'provider', 'version', 'force'] as const) {
    if (values[flag] !== undefined)
      throw usage(
        `--${flag} is for modules; --provider-release takes the version from the release's file names, and published provider versions are never replaced.`,
      );
  }
  const dir = resolve(release);
  if (!existsSync(dir)) throw new MirrorError('SOURCE_NOT_FOUND', `The folder "${dir}" does not exist.`, { hint: 'Check the --provider-release path.' });
  const { namespace, type } = values;
  if (namespace === undefined || !isProviderPart(namespace))
    throw usage(`--namespace ${namespace === undefined ? 'is missing' : `"${namespace}" is not a provider namespace`} (lower-case letters, digits and "-").`);
  if (type === undefined || !isProviderPart(type))
    throw usage(`--type ${type === undefined ? 'is missing' : `"${type}" is not a provider type`} (lower-case letters, digits and "-").`);
  const hostname = values.hostname?.toLowerCase();
  if (hostname !== undefined && !isProviderHostname(hostname)) throw usage(`--hostname "${hostname}" is not a host name such as registry.example.com.`);
  const { store, config } = await openMirror(values, 'publish', mirrorFlag(values, 'publish', 'out'), (out) =>
    resolveMirrorConfig({ config: values.config, out, baseUrl: baseUrlFlag(values['base-url'], 'publish') }),
  );
  let result: ProviderPublishResult;
  try {
    // The config's in-house entry for this namespace gives the keys and host name unless the flags do.
    const entry = config.providerFolders.find(
      (f): f is Extract<ProviderFolder, { kind: 'releases' }> => f.kind === 'releases' && f.registry !== undefined && f.namespace === namespace,
    );
    const flagKeys = values['public-key']?.map((k) => resolve(k));
    for (const key of flagKeys ?? [])
      if (!existsSync(key)) throw new MirrorError('SOURCE_NOT_FOUND', `The key file "${key}" does not exist.`, { hint: 'Check the --public-key path.' });
    // A signed mirror's root is signed with the key a module publish takes.
    const signer = await provenanceSigningKey(values, 'publish', config);
    const signingKey = values['signing-key'];
    const signing =
      signingKey !== undefined ? { keyFile: resolve(signingKey), passphraseEnv: config.signing?.passphraseEnv ?? DEFAULT_PASSPHRASE_ENV } : config.signing;
    result = await store.publishProvider({
      cacheDir: config.cacheDir,
      baseUrl: config.baseUrl,
      imageHosts: config.imageHosts,
      dir,
      namespace,
      type,
      ...((hostname ?? entry?.hostname) ? { hostname: (hostname ?? entry?.hostname)! } : {}),
      publicKeys: flagKeys ?? entry?.registry?.keys ?? [],
      ...(signing ? { signing } : {}),
      ...(signer ? { signer } : {}),
      newMirror: values['new-mirror'] === true,
      dryRun: values['dry-run'] === true,
    });
  } finally {
    store.close();
  }
  if (values.json === true) printJson(result);
  else printProvider(result);
  return 0;
}

function printProvider(r: ProviderPublishResult): void {
  const what = `${r.provider} ${r.version} (${r.platforms.join(', ')})`;
  const signed = r.signedHere ? `signed here with key ${r.keyId}` : `signed by key ${r.keyId}`;
  if (r.outcome === 'unchanged') console.log(`${what} is already published with the same content; nothing to do.`);
  else if (r.dryRun) {
    console.log(`Would publish ${what}, ${signed}, changing ${r.changed.length} files:`);
    for (const file of r.changed) console.log(`  ${file}`);
  } else console.log(`Published ${what}, ${signed}, in ${r.seconds.toFixed(2)} s.`);
}
