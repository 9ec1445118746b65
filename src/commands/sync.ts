import { relative, resolve } from 'node:path';
import { resolveMirrorConfig, type ResolvedConfig } from '../config.js';
import { MirrorError } from '../errors.js';
import { parseModuleSpec } from '../sync/constraint.js';
import { sync } from '../sync/index.js';
import { stringFlag, type Values } from './args.js';

const usage = (message: string, hint = 'Run modmirror sync --help.') => new MirrorError('USAGE', message, { hint });

interface Upstream {
  from: string;
  into?: string;
  tokenEnv?: string;
  modules: string[];
}

/** The upstreams to copy from: the flags, or without --from the config's `sync` list. */
export async function runSync(values: Values): Promise<number> {
  // The folder sync fills may not exist yet: the config is read as the mirror commands read it.
  const config = resolveMirrorConfig({ config: stringFlag(values, 'config') });
  const fromFlag = values['from'] as string | undefined;
  // parseArgs gives a list for an option declared `multiple`.
  const moduleFlags = (values['module'] as unknown as string[] | undefined) ?? [];
  let upstreams: Upstream[];
  if (fromFlag !== undefined) {
    if (moduleFlags.length === 0) throw usage('Name at least one module: --module NAMESPACE/NAME/PROVIDER[@CONSTRAINT].');
    upstreams = [{ from: fromFlag, modules: moduleFlags, tokenEnv: values['token-env'] as string | undefined }];
  } else if (config.sync.length > 0 && moduleFlags.length === 0) {
    upstreams = config.sync;
  } else {
    throw usage('Name the upstream registry with --from URL and modules with --module, or list them under "sync:" in mirror.config.yaml.');
  }
  let failures = 0;
  for (const upstream of upstreams) {
    const from = parseFrom(upstream.from);
    const into = (values['into'] as string | undefined) !== undefined ? resolve(values['into'] as string) : upstream.into ?? defaultFolder(config);
    const result = await sync({ from, into, modules: upstream.modules.map(parseModuleSpec), token: token(upstream.tokenEnv, from) }, { log: (line) => console.error(line) });
    const shown = relative(process.cwd(), into) || '.';
    const next = result.fetched.length > 0 ? ' Run modmirror build to serve them.' : '';
    console.log(`Fetched ${result.fetched.length} version(s) into ${shown}/ (${result.present} already there) from ${from.origin}.${next}`);
    failures += result.failures.length;
  }
  if (failures > 0) {
    console.error(`${failures} module(s) or version(s) failed (see the errors above); run sync again to retry them: the others are kept.`);
    return 1;
  }
  return 0;
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

/** The config's first folder source: the folder the build already reads. */
function defaultFolder(config: ResolvedConfig): string {
  if (config.configFile === undefined) throw usage('Name the module folder to fill with --into DIR, or run sync where mirror.config.yaml lists a folder source.');
  const folder = config.sources.find((s) => s.kind === 'folder');
  if (!folder || folder.kind !== 'folder') throw usage('The config lists no folder source to fill; add "- folder: modules" to its sources, or pass --into DIR.');
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
