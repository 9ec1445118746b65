import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { resolveMirrorConfig, type ResolvedConfig } from '../config/index.js';
import { MirrorError } from '../errors.js';
import type { SyncEntry } from '../config/sync.js';
import { parseModuleSpec } from '../protocol/constraint.js';
import { sync, type DependencyOptions } from '../sync/index.js';
import { normalizeHost, PUBLIC_REGISTRY_HOSTS, servedHosts } from '../protocol/source-address.js';
import { parseProviderSpec, type ProviderSpec } from '../protocol/provider-address.js';
import { isPlatform } from '../protocol/providers.js';
import { printJson } from './args.js';
import type { SyncFlags } from './options/sync.js';
import { printSummary, summaryJson, type UpstreamSummary } from './sync-report.js';

const usage = (message: string, hint = 'Run modmirror sync --help.') => new MirrorError('USAGE', message, { hint });

/** The upstreams to copy from: the flags, or without --from the config's `sync` list. */
export async function runSync(values: SyncFlags): Promise<number> {
  // The folder sync fills may not exist yet: the config is read as the mirror commands read it.
  const config = resolveMirrorConfig({ config: values.config });
  const json = values.json === true;
  // Every plan is made (and every flag and folder checked) before anything is fetched.
  const plans = chooseUpstreams(values, config).map((upstream) => {
    const from = parseFrom(upstream.from);
    // A provider-only sync fills no module folder, so it needs none.
    const wantsModules = (upstream.modules ?? []).length > 0 || (upstream.for ?? []).length > 0;
    const into = values.into !== undefined ? resolve(values.into) : (upstream.into ?? (wantsModules ? defaultFolder(config) : undefined));
    const configurations = (upstream.for ?? []).map(configurationFolder);
    const dependencies = dependencyOptions(values, upstream);
    const providers = providerSpecs(upstream, from, dependencies.standsInFor);
    const providersInto = values['providers-into'] !== undefined ? resolve(values['providers-into']) : defaultProviderFolder(config);
    if (providers.length > 0 && providersInto === undefined) {
      throw usage('Name the provider folder to fill with --providers-into DIR, or list one in mirror.config.yaml under "providers: - folder: DIR".');
    }
    const platforms = platformList(values, upstream, config);
    return {
      from,
      into,
      modules: (upstream.modules ?? []).map(parseModuleSpec),
      configurations,
      dependencies,
      token: token(upstream.tokenEnv, from),
      providers,
      platforms,
      providersInto,
    };
  });
  const summaries: UpstreamSummary[] = [];
  for (const plan of plans) {
    const result = await sync(plan, { log: json ? () => {} : (line) => console.error(line) });
    summaries.push({
      from: plan.from.href,
      ...(plan.into === undefined ? {} : { into: plan.into }),
      ...(plan.providersInto === undefined ? {} : { providersInto: plan.providersInto }),
      result,
    });
    if (!json) printSummary(summaries.at(-1)!, values.verbose === true);
  }
  const failures = summaries.reduce((n, s) => n + s.result.failures.length, 0);
  if (json) printJson(summaryJson(summaries));
  else if (failures > 0)
    console.error(`${failures} module(s), version(s) or provider package(s) failed (see the errors above); run sync again to retry them: the others are kept.`);
  return failures > 0 ? 1 : 0;
}

function chooseUpstreams(values: SyncFlags, config: ResolvedConfig): SyncEntry[] {
  const fromFlag = values.from;
  const moduleFlags = values.module ?? [];
  const providerFlags = values.provider ?? [];
  const forFlags = (values.for ?? []).map((dir) => resolve(dir));
  if (fromFlag !== undefined) {
    if (moduleFlags.length === 0 && forFlags.length === 0 && providerFlags.length === 0) {
      throw usage(
        'Name at least one module (--module NAMESPACE/NAME/PROVIDER[@CONSTRAINT]), provider (--provider HOST/NAMESPACE/TYPE[@CONSTRAINT]) or configuration folder (--for DIR).',
      );
    }
    return [{ from: fromFlag, modules: moduleFlags, providers: providerFlags, for: forFlags, tokenEnv: values['token-env'] }];
  }
  if (config.sync.length > 0 && moduleFlags.length === 0 && providerFlags.length === 0) {
    // --for with the config's upstreams: that folder's closure, not the config's module and provider lists.
    return forFlags.length > 0 ? config.sync.map((u) => ({ ...u, modules: [], providers: [], for: forFlags })) : config.sync;
  }
  throw usage(
    'Name the upstream registry with --from URL and modules with --module, providers with --provider (or a configuration folder with --for), or list them under "sync:" in mirror.config.yaml.',
  );
}

/** Flags win over the config entry's keys; by default every call is followed and the newest match mirrored. */
function dependencyOptions(values: SyncFlags, upstream: SyncEntry): DependencyOptions {
  const pick = values['dependency-versions'] ?? upstream.dependencyVersions ?? 'newest';
  if (pick !== 'newest' && pick !== 'every') throw usage(`Invalid --dependency-versions "${pick}": expected newest or every.`);
  const hostFlags = values['stands-in-for'] ?? [];
  for (const host of hostFlags) {
    if (normalizeHost(host) === undefined) throw usage(`Invalid --stands-in-for "${host}": expected a registry host name such as registry.terraform.io.`);
  }
  return {
    follow: values['no-dependencies'] === true ? false : (upstream.dependencies ?? true),
    pick,
    standsInFor: hostFlags.length > 0 ? hostFlags : (upstream.standsInFor ?? PUBLIC_REGISTRY_HOSTS),
  };
}

function configurationFolder(dir: string): string {
  const isDir = (() => {
    try {
      return statSync(dir).isDirectory();
    } catch {
      return false;
    }
  })();
  if (!isDir) throw usage(`--for ${dir}: no such folder.`, 'Name the Terraform configuration folder you run terraform init in.');
  return dir;
}

function parseFrom(text: string): URL {
  let from: URL;
  try {
    from = new URL(text);
  } catch {
    throw usage(`Invalid --from "${text}": expected an http(s) URL.`);
  }
  if (from.protocol !== 'https:' && from.protocol !== 'http:') throw usage(`Invalid --from "${text}": expected an http(s) URL.`);
  return from;
}

/** Providers named outright; each must be on a host this upstream answers for. */
function providerSpecs(upstream: SyncEntry, from: URL, standsInFor: string[]): ProviderSpec[] {
  const hosts = servedHosts(from, standsInFor);
  return (upstream.providers ?? []).map((text) => {
    const spec = parseProviderSpec(text, normalizeHost(from.host));
    if (!hosts.has(spec.address.hostname)) {
      throw usage(
        `Provider "${text}": ${from.origin} does not answer for ${spec.address.hostname} (it stands in for ${[...hosts].join(', ')}).`,
        'Sync it from that registry with its own --from, or add --stands-in-for HOST.',
      );
    }
    return spec;
  });
}

/** --platform flags, else the entry's platforms:, else the config's (default linux_amd64). */
function platformList(values: SyncFlags, upstream: SyncEntry, config: ResolvedConfig): string[] {
  const flags = values.platform ?? [];
  for (const p of flags) if (!isPlatform(p)) throw usage(`Invalid --platform "${p}": expected OS_ARCH such as linux_amd64.`);
  return [...new Set(flags.length > 0 ? flags : (upstream.platforms ?? config.platforms))];
}

/** The config's first provider folder in the `terraform providers mirror` layout, if it has one. */
function defaultProviderFolder(config: ResolvedConfig): string | undefined {
  return config.providerFolders.find((f) => f.kind === 'mirror')?.dir;
}

/** The config's first folder source: the folder the build already reads. */
function defaultFolder(config: ResolvedConfig): string {
  if (config.configFile === undefined)
    throw usage('Name the module folder to fill with --into DIR, or run sync where mirror.config.yaml lists a folder source.');
  const folder = config.sources.find((s) => s.kind === 'folder');
  if (!folder || folder.kind !== 'folder')
    throw usage('The config lists no folder source to fill; add "- folder: modules" to its sources, or pass --into DIR.');
  return folder.dir;
}

/**
 * The upstream's bearer token, from the environment only (never a flag, so
 * it stays out of shell history): --token-env VAR, else MODMIRROR_SYNC_TOKEN,
 * else Terraform's own TF_TOKEN_<host> (dots as _, dashes as __).
 */
function token(variable: string | undefined, from: URL): string | undefined {
  if (variable !== undefined) {
    const value = process.env[variable];
    if (!value) throw usage(`--token-env names ${variable}, which is not set.`, `Export ${variable} with the upstream's token, or leave --token-env out.`);
    return value;
  }
  const terraformName = `TF_TOKEN_${from.hostname.replace(/-/g, '__').replace(/\./g, '_')}`;
  return process.env['MODMIRROR_SYNC_TOKEN'] || process.env[terraformName] || undefined;
}
