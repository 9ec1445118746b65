// The package as users get it: `npm pack`, `npm install -g` of the tarball into
// a temp prefix outside the checkout, and the installed `modmirror` run from
// there, by a test or by a shell script as a user pastes it. Whatever the CLI
// reads at run time must be in the tarball; a test importing src/ cannot see a
// file missing from package.json `files`.

import { execFile, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './helpers.js';

const run = promisify(execFile);

export interface PackedInstall {
  /** The `npm install -g --prefix` folder: the CLI is `bin/modmirror`. */
  prefix: string;
  /** The installed package's folder. */
  installed: string;
  /** Seconds spent packing and installing, by step. */
  timings: Record<string, number>;
  /** The installed CLI, through the bin link npm made, run in `cwd`. */
  modmirror(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }>;
  /**
   * Runs a script with bash (`-euo pipefail`), as a user pastes it, with the installed package's
   * bin first on PATH and `env` added. The script runs in a process group of its own, and the whole
   * group is stopped once the script is done (a `modmirror serve &` it started among them).
   */
  runScript(script: string, cwd: string, env?: Record<string, string>): Promise<{ code: number; output: string }>;
}

/** The environment without what `npm test` exports to its children (npm_config_*, npm_package_*). */
export const cleanEnv = (): Record<string, string | undefined> =>
  Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_')));

async function npm(args: string[], cwd: string): Promise<string> {
  const { stdout } = await run('npm', [...args, '--no-audit', '--no-fund'], { cwd, env: cleanEnv(), maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

/** Packs the checkout and installs the tarball under `dir` (a temp folder of the test's). */
export async function installPacked(dir: string): Promise<PackedInstall> {
  const timings: Record<string, number> = {};
  const timed = async <T>(name: string, step: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      return await step();
    } finally {
      timings[name] = Math.round(performance.now() - started) / 1000;
    }
  };
  const prefix = join(dir, 'prefix');
  mkdirSync(join(dir, 'pack'));
  // Without `prepare` (tsc, 5-9 s here): lib/ is already compiled, as every
  // test that runs the CLI needs, and `npm test` compiles it first.
  const packArgs = ['pack', '--json', '--ignore-scripts', '--pack-destination', join(dir, 'pack')];
  const packed = JSON.parse(await timed('npm pack', () => npm(packArgs, ROOT))) as { filename: string }[];
  const tarball = join(dir, 'pack', packed[0]!.filename);
  // Dependencies come from npm's cache when it has them (after `npm ci`, it
  // has every tarball); only metadata it lacks is fetched. Run from the temp
  // folder so the checkout's .npmrc and node_modules play no part.
  await timed('npm install -g', () => npm(['install', '--global', '--prefix', prefix, '--prefer-offline', tarball], dir));
  const bin = join(prefix, 'bin', 'modmirror');

  async function modmirror(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
    try {
      const { stdout, stderr } = await run(bin, args, { cwd, env: { ...cleanEnv(), NO_COLOR: '1' } });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
  }

  async function runScript(script: string, cwd: string, extra: Record<string, string> = {}): Promise<{ code: number; output: string }> {
    const env = { ...cleanEnv(), NO_COLOR: '1', CHECKPOINT_DISABLE: '1', ...extra, PATH: [join(prefix, 'bin'), process.env['PATH'] ?? ''].join(delimiter) };
    const child = spawn('bash', ['-euo', 'pipefail', '-c', script], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
    // The script's end is 'exit'; 'close' waits for a server in the background, which holds the pipes open.
    const code = await new Promise<number>((resolve) => child.on('exit', (c) => resolve(c ?? -1)));
    const stop = (signal: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // The group is gone already: nothing was left running.
      }
    };
    stop('SIGTERM');
    const killer = setTimeout(() => stop('SIGKILL'), 10_000);
    await closed;
    clearTimeout(killer);
    return { code, output };
  }

  return { prefix, installed: join(prefix, 'lib', 'node_modules', 'modmirror'), timings, modmirror, runScript };
}
