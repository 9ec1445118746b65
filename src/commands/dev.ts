import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { resolveConfig, type ResolvedConfig } from '../config/index.js';
import { startDev } from '../dev/index.js';
import { usageError } from './args.js';
import type { DevFlags } from './options/dev.js';

export async function runDev(values: DevFlags): Promise<number> {
  const port = Number(values.port ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw usageError('dev', `Invalid --port "${values.port}": expected an integer from 0 to 65535.`);
  const flags = { config: values.config, modules: values.modules };
  const given = values.mirror;
  // Read once to check the preview's folder against it; read again on each change of the config file.
  const production = resolveConfig(flags);
  if (given !== undefined) refuseFolder(resolve(given), production);
  // A temporary folder unless one was given: the preview mirror and the server's counts.
  const temp = mkdtempSync(join(tmpdir(), 'modmirror-dev-'));
  const out = given !== undefined ? resolve(given) : join(temp, 'mirror');
  const loadConfig = (): ResolvedConfig => {
    const config = resolveConfig({ ...flags, out });
    // The build cache is shared with build (its entries are addressed by content), unless it would land in a source.
    return insideSource(config.cacheDir, config) ? { ...config, cacheDir: join(temp, 'cache') } : config;
  };
  const removeTemp = () => rmSync(temp, { recursive: true, force: true });
  let dev;
  try {
    dev = await startDev({
      loadConfig,
      host: values.host ?? '127.0.0.1',
      port,
      dataDir: join(temp, 'data'),
      log: (line) => console.log(line),
    });
  } catch (error) {
    removeTemp();
    throw error;
  }
  console.log(`modmirror dev: previewing ${relative(process.cwd(), out) || '.'} at ${dev.url} (watching the sources; Ctrl-C stops)`);
  await new Promise<void>((done) => {
    const stop = (signal: string) => {
      console.log(`${signal}: stopping`);
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      void dev.close().then(done);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  removeTemp();
  return 0;
}

/**
 * dev rebuilds its folder on every save, replacing and removing versions:
 * never the mirror the config builds for production, nor a folder inside a
 * source (its files would be sources), nor a folder that holds something
 * else already.
 */
function refuseFolder(dir: string, production: ResolvedConfig): void {
  if (dir === production.outDir) {
    throw usageError('dev', `--mirror ${dir} is the mirror the config builds ("out"): dev would replace its versions on every save.`);
  }
  if (insideSource(dir, production) || production.sources.some((s) => s.kind === 'folder' && within(s.dir, dir))) {
    throw usageError('dev', `--mirror ${dir} overlaps a source folder: dev never writes into its sources.`);
  }
  const entries = listing(dir);
  if (entries.length > 0 && !entries.includes('manifest.json')) {
    throw usageError('dev', `--mirror ${dir} is a folder that holds something other than a mirror.`);
  }
}

function insideSource(path: string, config: ResolvedConfig): boolean {
  return config.sources.some((s) => s.kind === 'folder' && within(path, s.dir));
}

const within = (path: string, dir: string) => path === dir || path.startsWith(dir + sep);

function listing(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
