import { existsSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import type { Values } from '../cli.js';
import { DEFAULT_CONFIG_FILE, resolveConfig } from '../config.js';
import { MirrorError } from '../errors.js';
import { parseModuleSpec } from '../sync/constraint.js';
import { sync } from '../sync/index.js';

const usage = (message: string, hint = 'Run modmirror sync --help.') => new MirrorError('USAGE', message, { hint });

export async function runSync(values: Values, positionals: string[] = []): Promise<number> {
  if (positionals.length > 0) throw usage(`Unexpected argument "${positionals[0]}".`);
  const fromFlag = values['from'] as string | undefined;
  if (fromFlag === undefined) throw usage('Name the upstream registry with --from URL, e.g. --from https://registry.example.com/.');
  let from: URL;
  try {
    from = new URL(fromFlag);
  } catch {
    throw usage(`Invalid --from "${fromFlag}": expected an http(s) URL.`);
  }
  if (from.protocol !== 'https:' && from.protocol !== 'http:') throw usage(`Invalid --from "${fromFlag}": expected an http(s) URL.`);
  // parseArgs gives a list for an option declared `multiple`.
  const moduleFlags = (values['module'] as unknown as string[] | undefined) ?? [];
  if (moduleFlags.length === 0) throw usage('Name at least one module: --module NAMESPACE/NAME/PROVIDER[@CONSTRAINT].');
  const modules = moduleFlags.map(parseModuleSpec);
  const into = intoFolder(values['into'] as string | undefined, values['config'] as string | undefined);

  const result = await sync({ from, into, modules, token: token(values['token-env'] as string | undefined, from) }, { log: (line) => console.error(line) });
  const shown = relative(process.cwd(), into) || '.';
  console.log(`Fetched ${result.fetched.length} version(s) into ${shown}/ (${result.present} already there).${result.fetched.length > 0 ? ' Run modmirror build to serve them.' : ''}`);
  if (result.failures.length > 0) {
    console.error(`${result.failures.length} module(s) or version(s) failed (see the errors above); run sync again to retry them: the others are kept.`);
    return 1;
  }
  return 0;
}

/** --into, else the config's first folder source: the folder the build already reads. */
function intoFolder(flag: string | undefined, configFlag: string | undefined): string {
  if (flag !== undefined) return resolve(flag);
  if (configFlag === undefined && !existsSync(DEFAULT_CONFIG_FILE)) {
    throw usage('Name the module folder to fill with --into DIR, or run sync where mirror.config.yaml lists a folder source.');
  }
  const folder = resolveConfig({ config: configFlag }).sources.find((s) => s.kind === 'folder');
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
