// Runs the compiled CLI (lib/cli-bundle/cli.js, what bin/modmirror.js runs)
// inside the test's own process: its `main` with the arguments, in the folder
// and with the environment given, its output captured and its exit code
// returned. A spawned CLI spends most of a small command starting Node and
// loading its modules (about 0.3 s of CPU each time, against a few ms for the
// command itself once loaded), and the suite runs some 650 commands.
//
// What a separate process gives for free is done here, per call:
// - the folder: process.chdir for the call (calls are one at a time; see
//   helpers.ts's runCli, which spawns whatever would overlap);
// - the environment: set for the call, then put back whole, including what
//   the command itself set;
// - the output: console and process.stdout/stderr writes made inside the
//   call (AsyncLocalStorage tells them from the test's own), with isTTY false
//   as on a pipe; Node's process warnings are among them (Node writes them to
//   process.stderr), though Node says each deprecation once per process;
// - the exit: the call returns only once nothing the command started keeps
//   the event loop alive (a socket, a timer, a child process it waits for),
//   as a process exits only then; a command that leaves such a thing behind
//   hangs here as it would hang there.
// The bundle's modules keep no state between commands (no module-level
// caches; verified when this runner was added), so one load serves every call
// in the process: every file a vitest worker runs (vitest.config.ts).

import { AsyncLocalStorage, createHook } from 'node:async_hooks';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { format } from 'node:util';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

interface Capture {
  stdout: string[];
  stderr: string[];
  /** Async resources created during the call: what could keep a process alive after main returns. */
  resources: object[];
}

const current = new AsyncLocalStorage<Capture>();
type Main = (argv: string[]) => Promise<number>;
let loading: Promise<Main> | undefined;

function loadMain(root: string): Promise<Main> {
  const url = pathToFileURL(join(root, 'lib', 'cli-bundle', 'cli.js')).href;
  // Loaded by Node itself (vitest.config.ts externalizes lib/cli-bundle/), as the binary loads it.
  return (loading ??= import(/* @vite-ignore */ url).then((m: { main: Main }) => m.main));
}

const CONSOLE_STREAMS = { log: 'stdout', info: 'stdout', debug: 'stdout', error: 'stderr', warn: 'stderr' } as const;
const patched = Symbol('modmirror in-process capture');

/** Routes output made inside a call to its capture; everything else goes where it went. Installed once per process. */
function installCapture(): void {
  const target = globalThis.console as unknown as Record<string | symbol, unknown>;
  if (target[patched]) return;
  target[patched] = true;
  for (const [method, stream] of Object.entries(CONSOLE_STREAMS)) {
    const original = (console as unknown as Record<string, (...args: unknown[]) => void>)[method]!.bind(console);
    (console as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
      const capture = current.getStore();
      if (capture) capture[stream].push(`${format(...args)}\n`);
      else original(...args);
    };
  }
  for (const stream of ['stdout', 'stderr'] as const) {
    const s = process[stream];
    const write = s.write.bind(s) as (...args: unknown[]) => boolean;
    s.write = (chunk: unknown, ...rest: unknown[]) => {
      const capture = current.getStore();
      if (!capture) return write(chunk, ...rest);
      capture[stream].push(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString());
      const callback = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
      if (callback) process.nextTick(callback);
      return true;
    };
    const isTTY = s.isTTY;
    Object.defineProperty(s, 'isTTY', { configurable: true, get: () => (current.getStore() ? false : isTTY) });
  }
}

// Every async resource a call creates, in its context (timers, sockets, child processes, threads).
const tracker = createHook({
  init(_id, type, _trigger, resource) {
    if (type === 'PROMISE') return;
    current.getStore()?.resources.push(resource);
  },
});

/** Whether a resource still keeps the event loop alive: a live, ref'd handle or pending timer. */
function keepsAlive(resource: object): boolean {
  const r = resource as { hasRef?: () => boolean; _destroyed?: boolean };
  if (typeof r.hasRef !== 'function') return false;
  if (r._destroyed === true) return false;
  return r.hasRef();
}

/** Waits, as a process would before exiting, until nothing the call started keeps the event loop alive. */
async function drained(capture: Capture): Promise<void> {
  // One turn of the event loop first: what the call queued (a process warning, a nextTick) runs before a process exits too.
  await new Promise((r) => setImmediate(r));
  for (;;) {
    capture.resources = capture.resources.filter(keepsAlive);
    if (capture.resources.length === 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Runs `modmirror ARGS` in this process, in `cwd`, with `env` over this
 * process's environment and NO_COLOR=1, as helpers.ts's spawnCli runs the binary.
 * Only one call at a time: the caller makes sure of it.
 */
export async function runInProcess(root: string, args: string[], cwd: string, env: Record<string, string>): Promise<CliResult> {
  const main = await loadMain(root);
  installCapture();
  const savedEnv = { ...process.env };
  const savedCwd = process.cwd();
  const capture: Capture = { stdout: [], stderr: [], resources: [] };
  process.chdir(cwd);
  Object.assign(process.env, { NO_COLOR: '1', ...env });
  let code: number;
  tracker.enable();
  try {
    code = await current.run(capture, async () => {
      try {
        return await main(args);
      } catch (error) {
        // What Node does with an error thrown out of the binary's top-level await.
        capture.stderr.push(`${error instanceof Error ? error.stack : String(error)}\n`);
        return 1;
      }
    });
    // In its folder and environment still: what it left running may still need them.
    await drained(capture);
  } finally {
    tracker.disable();
    process.chdir(savedCwd);
    for (const key of Object.keys(process.env)) if (!(key in savedEnv)) delete process.env[key];
    Object.assign(process.env, savedEnv);
  }
  return { code, stdout: capture.stdout.join(''), stderr: capture.stderr.join('') };
}
