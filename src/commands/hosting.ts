import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Values } from '../cli.js';
import { DEFAULT_CONFIG_FILE, resolveConfig } from '../config.js';
import { MirrorError } from '../errors.js';
import { MANIFEST_FILE } from '../protocol/paths.js';
import { caddySiteBlock } from '../hosting/caddy.js';
import { nginxServerBlock } from '../hosting/nginx.js';
import { readBaseUrl } from '../emit/existing.js';
import { assertSafeForConfig, parseListen, type HostingOptions } from '../hosting/rules.js';

const HOSTS: Record<string, (options: HostingOptions) => string> = { nginx: nginxServerBlock, caddy: caddySiteBlock };

const usage = (message: string) => new MirrorError('USAGE', message, { hint: 'Run modmirror hosting --help.' });

export async function runHosting(values: Values, positionals: string[] = []): Promise<number> {
  const [host, extra] = positionals;
  if (host === undefined) throw usage('Name the host: modmirror hosting nginx, or modmirror hosting caddy.');
  if (extra !== undefined) throw usage(`Unexpected argument "${extra}".`);
  const make = HOSTS[host];
  if (!make) throw usage(`Unknown host "${host}": expected ${Object.keys(HOSTS).join(' or ')}.`);

  const dir = resolve((values['dir'] as string | undefined) ?? 'dist');
  assertSafeForConfig(dir, 'The mirror folder');
  if (!existsSync(join(dir, MANIFEST_FILE))) {
    console.error(`warning: ${dir} holds no built mirror yet (no ${MANIFEST_FILE}); run modmirror build (or unbundle) before serving it.`);
  }
  const baseUrl = chooseBaseUrl(dir, values['base-url'] as string | undefined, values['config'] as string | undefined);
  assertSafeForConfig(baseUrl, 'The base URL');
  const listen = parseListen((values['listen'] as string | undefined) ?? '80');
  process.stdout.write(make({ dir, listen, baseUrl }));
  return 0;
}

/**
 * The download header must say what the `download` files say, so the mirror's
 * own discovery document decides; before a build, the config's baseUrl
 * (what the build will use); --base-url overrides both, with a warning when
 * it disagrees with the files.
 */
function chooseBaseUrl(dir: string, flag: string | undefined, configFile: string | undefined): string {
  const built = readBaseUrl(dir);
  if (flag !== undefined) {
    if (flag !== '' && !/^https?:\/\/[^/]+/.test(flag)) throw usage(`Invalid --base-url "${flag}": expected an absolute http(s) URL.`);
    const normalized = flag === '' || flag.endsWith('/') ? flag : `${flag}/`;
    if (built !== undefined && built !== normalized) {
      console.error(`warning: ${dir} was built with ${built === '' ? 'relative locations' : `base URL ${built}`}; the download header will not match its download files. Rebuild with --base-url ${normalized || '""'}.`);
    }
    return normalized;
  }
  if (built !== undefined) return built;
  if (configFile !== undefined || existsSync(DEFAULT_CONFIG_FILE)) return resolveConfig({ config: configFile }).baseUrl;
  return '';
}
