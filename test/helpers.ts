// Test helpers: temp folders, real git repositories, and the real CLI.

import { readManifest } from '../src/mirror/manifest.js';
import { execFile, execFileSync, spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync, readlinkSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { copyCertificates, makeCertificatesIn, type Certificates } from './certificates.js';
import { runInProcess, type CliResult } from './in-process-cli.js';
import type { RunningServer, ServeOptions } from '../src/serve/index.js';

export const ROOT = resolve(import.meta.dirname, '..');

/** What a receiver carries out for `bundle --since`: a copy of its mirror's truth (manifest.json and state/) in `into`. */
export function copyTruth(dist: string, into: string): void {
  mkdirSync(into, { recursive: true });
  cpSync(join(dist, 'manifest.json'), join(into, 'manifest.json'));
  if (existsSync(join(dist, 'state'))) cpSync(join(dist, 'state'), join(into, 'state'), { recursive: true });
}

/** A mirror's whole manifest (its root with every module's state), as modmirror reads it, untyped as JSON is; throws when there is none. */
export function mirrorManifest(dir: string): ReturnType<typeof JSON.parse> {
  const manifest = readManifest(dir);
  if (!manifest) throw new Error(`no mirror at ${dir}`);
  return manifest;
}
const CLI = join(ROOT, 'bin', 'modmirror.js');

/**
 * A temp folder removed after the test file (by test/setup.ts's afterAll,
 * which every file runs: an afterAll registered here would be ignored when
 * this is called inside a test or a beforeAll, as it mostly is).
 */
export function tempDir(prefix = 'mm-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.add(dir);
  return dir;
}
const made = new Set<string>();

/**
 * A port free on 127.0.0.1 now, for a server the test starts later (nginx, RGW, Prometheus, a serve whose
 * URL a build must name first). Taken below the kernel's ephemeral range: a port listen(0) gives comes
 * from that range, where any outgoing connection of another test may take it before the server binds.
 */
export async function freePort(): Promise<number> {
  const ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32768;
  // Above terraform login's loopback ports (10000-10010) and below the ephemeral ones.
  const [low, high] = [11000, ephemeralLow - 1];
  for (;;) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    const free = await new Promise<boolean>((resolve) => {
      const server = createNetServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

/**
 * `modmirror serve`, in this process, of the mirror in `dir`/dist with its data in `dir`/data, on
 * 127.0.0.1 at a free port, logging nothing; each option given replaces its default. Stopped after
 * the test file (test/setup.ts) if the test has not stopped it.
 */
export async function serveMirror(dir: string, options: Partial<ServeOptions> = {}): Promise<RunningServer> {
  // Loaded on first use: the unit tier imports these helpers and starts no server.
  const { startServer } = await import('../src/serve/index.js');
  const server = await startServer({ dir: join(dir, 'dist'), host: '127.0.0.1', port: 0, dataDir: join(dir, 'data'), log: () => {}, ...options });
  let closed: Promise<void> | undefined;
  const running: RunningServer = {
    ...server,
    close: () => {
      servers.delete(running);
      return (closed ??= server.close());
    },
  };
  servers.add(running);
  return running;
}
const servers = new Set<RunningServer>();

/** Stops every server serveMirror started for this test file and that is still running. */
export async function stopServers(): Promise<void> {
  await Promise.all([...servers].map((server) => server.close()));
}

/** Removes every folder tempDir made for this test file. */
export async function removeTempDirs(): Promise<void> {
  for (const dir of made) {
    await removeTree(dir);
    made.delete(dir);
  }
}

/**
 * Removes a folder a publish's detached helper may still be writing in (copying the spare, then
 * moving it into place, or removing the old mirror). rmSync's own retries only retry the last
 * rmdir, which fails for good once the helper has moved a folder in after the walk: walk again.
 */
async function removeTree(dir: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      rmSync(dir, { recursive: true, force: true });
      return;
    } catch (error) {
      if (attempt === 100 || !['ENOTEMPTY', 'EBUSY'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    const file = join(dir, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
}

/**
 * Writes `content` into `file` from another Node process, as an operator's edit or another modmirror would:
 * a server is told of such changes by the file's stamp, looked at no more than once a millisecond, and a
 * write from this process could land within the millisecond of its last look.
 */
export function writeFromAnotherProcess(file: string, content: string): void {
  const written = spawnSync(process.execPath, ['-e', 'require("node:fs").writeFileSync(process.argv[1], process.argv[2])', file, content]);
  if (written.status !== 0) throw new Error(`could not write ${file}: ${written.stderr.toString()}`);
}

export type { CliResult };

/**
 * Runs `modmirror ARGS` in `cwd` with `env`: the compiled CLI's main, in this
 * process (in-process-cli.ts), which saves starting Node for each command.
 * What a separate process is needed for is spawned with spawnCli: a call made
 * while another is still running (they must truly run at once), and a crash
 * point (MODMIRROR_CRASH_AT kills the process it runs in).
 */
export async function runCli(args: string[], cwd: string = ROOT, env: Record<string, string> = {}): Promise<CliResult> {
  if (inProcessBusy || env['MODMIRROR_CRASH_AT'] !== undefined) return spawnCli(args, cwd, env);
  inProcessBusy = true;
  try {
    return await runInProcess(ROOT, args, cwd, env);
  } finally {
    inProcessBusy = false;
  }
}
let inProcessBusy = false;

/** Runs the installed binary (bin/modmirror.js) as a user would: a process of its own. */
export function spawnCli(args: string[], cwd: string = ROOT, env: Record<string, string> = {}): Promise<CliResult> {
  return spawnKillable(args, cwd, env).done.then(({ code, stdout, stderr }) => ({ code, stdout, stderr }));
}

/** How a CLI process ended: its output, its exit code or the signal that killed it, and how long it ran. */
export interface Ended extends CliResult {
  signal: NodeJS.Signals | null;
  ms: number;
}

/** A CLI process (as spawnCli runs it) that can be killed (SIGKILL, no cleanup) at any instant. */
export interface Running {
  pid: number | undefined;
  kill(): void;
  done: Promise<Ended>;
}

export function spawnKillable(args: string[], cwd: string = ROOT, env: Record<string, string> = {}): Running {
  const child = spawn(process.execPath, [CLI, ...args], { cwd, env: { ...process.env, NO_COLOR: '1', ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const t0 = performance.now();
  const done = new Promise<Ended>((resolvePromise, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolvePromise({ code: code ?? -1, signal, stdout, stderr, ms: Math.round(performance.now() - t0) }));
  });
  return { pid: child.pid, kill: () => void child.kill('SIGKILL'), done };
}

export interface ServeProcess {
  child: ChildProcessWithoutNullStreams;
  /** The URL it printed it serves at. */
  url: string;
  /** Everything it has printed to stdout so far. */
  stdout: () => string;
  /** Its exit code once it has exited (null when killed by a signal). */
  exited: Promise<number | null>;
}

/**
 * `modmirror serve ARGS` as a process of its own (bin/modmirror.js, as spawnCli runs it), once it has printed
 * the URL it serves at: `listening`'s first group. Rejects if it exits before.
 */
export async function spawnServe(args: string[], cwd: string = ROOT, listening = /at (http:\/\/\S+)/): Promise<ServeProcess> {
  return spawnListening(['serve', ...args], cwd, listening);
}

/** A command that serves (`serve`, `dev`) as a process of its own, once it has printed its URL: `listening`'s first group. */
export async function spawnListening(args: string[], cwd: string = ROOT, listening = /at (http:\/\/\S+)/): Promise<ServeProcess> {
  const child = spawn(process.execPath, [CLI, ...args], { cwd });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', () => {
      const match = listening.exec(stdout);
      if (match) resolve(match[1]!);
    });
    child.on('exit', () => reject(new Error(`${args[0]} exited before it listened: ${stdout}`)));
  });
  return { child, url, stdout: () => stdout, exited };
}

const GIT_ENV = {
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.com',
};

export function git(cwd: string, args: string[], env: Record<string, string> = {}): string {
  return execFileSync('git', args, { cwd, env: { ...process.env, ...GIT_ENV, ...env }, encoding: 'utf8' });
}

export interface Commit {
  files: Record<string, string>;
  /** Files to delete before committing. */
  remove?: string[];
  /** Symbolic links to make (path -> target, as `ln -s TARGET PATH`), committed as git links (mode 120000). */
  links?: Record<string, string>;
  tags?: string[];
  /** Commit date, ISO 8601. */
  date: string;
  annotated?: boolean;
}

/** A real git repository with one commit per entry, tagged as given. */
export function makeRepo(dir: string, commits: Commit[]): string {
  mkdirSync(dir, { recursive: true });
  git(dir, ['init', '-q', '-b', 'main']);
  for (const commit of commits) {
    for (const path of commit.remove ?? []) rmSync(join(dir, path), { force: true });
    writeFiles(dir, commit.files);
    for (const [path, target] of Object.entries(commit.links ?? {})) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      rmSync(join(dir, path), { force: true });
      symlinkSync(target, join(dir, path));
    }
    git(dir, ['add', '-A']);
    const env = { GIT_AUTHOR_DATE: commit.date, GIT_COMMITTER_DATE: commit.date };
    git(dir, ['commit', '-q', '--allow-empty', '-m', `commit ${commit.date}`], env);
    for (const tag of commit.tags ?? []) {
      git(dir, commit.annotated ? ['tag', '-a', '-m', tag, tag] : ['tag', tag], env);
    }
  }
  return dir;
}

/**
 * Polls until `read` returns an empty list (a replaced mirror is removed in the background), or gives its
 * last value. Returns as soon as it is empty; the deadline only bounds a failure, and leaves room for a
 * background `cp -al` and `rm -rf` on a loaded machine (3 s was once too short with 4 test files at once).
 */
export async function settled<T>(read: () => T[], timeoutMs = 10_000): Promise<T[]> {
  const deadline = Date.now() + timeoutMs;
  let value = read();
  while (value.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
    value = read();
  }
  return value;
}

/**
 * What a writer left beside the mirror `parent/name` (staging, old trees, its
 * lock), once background removals have settled. The spare, a hard-linked copy
 * kept for the next publish, is meant to stay.
 */
/** What is left beside a mirror besides its live generation and the spare: a writer's leftovers. */
export function mirrorLeftovers(parent: string, name = 'dist'): Promise<string[]> {
  return settled(() => {
    const live = liveGenerationName(join(parent, name));
    return readdirSync(parent).filter((n) => (n.startsWith(`.${name}.`) && n !== live) || n === `${name}.lock`);
  });
}

/** The folder a mirror's link points to (the live generation), or undefined for a mirror that is a plain folder. */
export function liveGenerationName(dist: string): string | undefined {
  try {
    return readlinkSync(dist);
  } catch {
    return undefined;
  }
}

/** Every file under `dir` with its sha256: two trees are equal when these are. */
export function treeOf(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else files[relative(dir, path)] = createHash('sha256').update(readFileSync(path)).digest('hex');
    }
  };
  walk(dir);
  return files;
}

/** A CA and a server certificate for 127.0.0.1 in `dir`: the run's (test/certificates.ts), else made here. */
export function makeCertificates(dir: string): Certificates {
  const made = inject('certificatesDir');
  return made ? copyCertificates(made, dir) : makeCertificatesIn(dir);
}

/** Whether a real `terraform` is on PATH: tests that run it are skipped where it is not (fresh CI machines). */
export const hasTerraform = (() => {
  try {
    execFileSync('terraform', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** What `terraform init` printed (stdout, then stderr when it failed) and its exit code. */
export interface TerraformResult {
  code: number;
  output: string;
}

/**
 * `terraform init` of `dir`/infra with `dir`/cli.tfrc as its only CLI configuration, both written from
 * `files`: no checkpoint call, no plugin cache, so what it installs came from where cli.tfrc says.
 * `env` adds to the environment (an undefined value removes a variable). Resolves on failure too.
 */
export async function terraformInit(
  dir: string,
  files: { 'cli.tfrc': string; 'infra/main.tf': string },
  env: NodeJS.ProcessEnv = {},
): Promise<TerraformResult> {
  writeFiles(dir, files);
  const full = { ...process.env, TF_CLI_CONFIG_FILE: join(dir, 'cli.tfrc'), TF_IN_AUTOMATION: '1', CHECKPOINT_DISABLE: '1', TF_PLUGIN_CACHE_DIR: '', ...env };
  return promisify(execFile)('terraform', ['-chdir=infra', 'init', '-no-color', '-input=false'], { cwd: dir, env: full }).then(
    ({ stdout }) => ({ code: 0, output: stdout }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, output: `${error.stdout}${error.stderr}` }),
  );
}
