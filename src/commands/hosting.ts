import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { baseUrlFlag, resolveMirrorConfig } from '../config/index.js';
import { MANIFEST_FILE } from '../protocol/paths.js';
import { caddySiteBlock } from '../hosting/caddy.js';
import { nginxServerBlock } from '../hosting/nginx.js';
import { cloudfrontFunction } from '../hosting/cloudfront.js';
import { readBaseUrl } from '../mirror/read.js';
import { writeHeaders } from '../publish/headers.js';
import { assertSafeForConfig, parseListen, type HostingOptions } from '../hosting/rules.js';
import { plural, printJson, usageError } from './args.js';
import { mirrorFlag, requireMirror } from './mirror-flag.js';
import type { HostingFlags } from './options/hosting.js';

const HOSTS: Record<string, (options: HostingOptions) => string> = { nginx: nginxServerBlock, caddy: caddySiteBlock, cloudfront: cloudfrontFunction };

export async function runHosting(values: HostingFlags, positionals: string[]): Promise<number> {
  const host = positionals[0]!;
  if (host === 'headers') return runHeaders(values);
  const make = HOSTS[host];
  if (!make) throw usageError('hosting', `Unknown host "${host}": expected ${[...Object.keys(HOSTS), 'headers'].join(', ')}.`);

  const config = resolveMirrorConfig({ config: values.config, out: mirrorFlag(values, 'hosting', 'dir') });
  const dir = config.outDir;
  assertSafeForConfig(dir, 'The mirror folder');
  // The configuration may be written before the mirror is built (its base URL then comes from the config): a warning, not an error.
  const warnings: string[] = [];
  if (!existsSync(join(dir, MANIFEST_FILE))) {
    warnings.push(`${dir} holds no built mirror yet (no ${MANIFEST_FILE}); run modmirror build (or unbundle) before serving it.`);
  }
  const baseUrl = chooseBaseUrl(dir, baseUrlFlag(values['base-url'], 'hosting'), config.baseUrl, warnings);
  assertSafeForConfig(baseUrl, 'The base URL');
  const listen = parseListen(values.listen ?? '80');
  const text = make({ dir, listen, baseUrl });
  if (values.json === true) {
    printJson({ host, mirror: dir, ...(host === 'cloudfront' ? {} : { listen }), baseUrl, config: text, warnings });
    return 0;
  }
  for (const warning of warnings) console.error(`warning: ${warning}`);
  process.stdout.write(text);
  return 0;
}

/** `hosting headers`: the mirror's own `_headers`, written into it, not printed. */
async function runHeaders(values: HostingFlags): Promise<number> {
  for (const flag of ['listen', 'base-url'] as const)
    if (values[flag] !== undefined)
      throw usageError('hosting', `--${flag} does not apply to hosting headers: the file follows the mirror's own download files.`);
  const { outDir } = resolveMirrorConfig({ config: values.config, out: mirrorFlag(values, 'hosting', 'dir') });
  await requireMirror(outDir, 'hosting headers');
  const result = await writeHeaders({ outDir });
  if (values.json === true) {
    printJson({ host: 'headers', mirror: outDir, file: result.file, versions: result.versions, changed: result.changed });
    return 0;
  }
  const versions = plural(result.versions, 'module version');
  console.log(
    result.changed ? `Wrote ${result.file} (${versions}); every write into this mirror keeps it up to date.` : `${result.file} is up to date (${versions}).`,
  );
  return 0;
}

/**
 * The download header must say what the `download` files say, so the mirror's
 * own discovery document decides; before a build, the config's baseUrl
 * (what the build will use); --base-url overrides both, with a warning when
 * it disagrees with the files.
 */
function chooseBaseUrl(dir: string, flag: string | undefined, configured: string, warnings: string[]): string {
  const built = readBaseUrl(dir);
  if (flag !== undefined) {
    if (built !== undefined && built !== flag) {
      warnings.push(
        `${dir} was built with ${built === '' ? 'relative locations' : `base URL ${built}`}; the download header will not match its download files. Rebuild with --base-url ${flag || '""'}.`,
      );
    }
    return flag;
  }
  return built ?? configured;
}
