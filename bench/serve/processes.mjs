// The benchmark's child processes: servers started and stopped (and killed
// if the benchmark exits first), node commands run to completion, and the
// one load generator process that runs every autocannon job. A plain GET and
// a process's CPU time for the readings around them.

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { fileURLToPath } from 'node:url';
import { CONNECTIONS } from './settings.mjs';

/** The entry point of every child role (ceiling, sirv, load, serve): see roles.mjs. */
export const ROLES = fileURLToPath(new URL('./roles.mjs', import.meta.url));

const children = new Set();
let exitHook = false;

function killChildrenNow() {
  for (const child of children) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
}

function installExitHook() {
  if (exitHook) return;
  exitHook = true;
  process.on('exit', killChildrenNow); // run.mjs exits on SIGINT/SIGTERM via process.exit()
  // Before run.mjs's own handler removes the temp dirs, so no server is still reading them; only
  // when someone handles the signal, so adding a listener does not stop the signal ending the process.
  for (const signal of ['SIGINT', 'SIGTERM']) if (process.listenerCount(signal) > 0) process.prependListener(signal, killChildrenNow);
}

/** Spawns a server process and resolves once it prints its URL. */
export function startProcess(args, label) {
  installExitHook();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    children.add(child);
    let out = '';
    let err = '';
    const timer = setTimeout(() => fail(new Error(`${label} did not start in 60 s: ${err.trim()}`)), 60_000);
    const fail = (error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    };
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (c) => {
      err += c;
    });
    child.stdout.on('data', (c) => {
      out += c;
      const m = /(http:\/\/127\.0\.0\.1:\d+)\//.exec(out);
      if (m) {
        clearTimeout(timer);
        child.stdout.removeAllListeners('data');
        child.stdout.resume();
        resolvePromise({ url: m[1], pid: child.pid, child, stderr: () => err, stop: () => stopProcess(child) });
      }
    });
    child.on('error', fail);
    child.on('exit', (code, signal) => {
      children.delete(child);
      fail(new Error(`${label} exited (${signal ?? `exit ${code}`}) before it was ready: ${err.trim()}`));
    });
  });
}

function stopProcess(child) {
  return new Promise((done) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      children.delete(child);
      return done();
    }
    const force = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(force);
      children.delete(child);
      done();
    });
    child.stdin.end();
    child.kill('SIGTERM');
  });
}

/** Runs `node ARGS` to completion as a tracked child (killed if the benchmark exits); resolves with its stdout. */
export function runTracked(args, { cwd } = {}) {
  installExitHook();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c) => (err += c));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      children.delete(child);
      if (code === 0) resolvePromise(out);
      else reject(new Error(`node ${args.join(' ')} failed (${signal ?? `exit ${code}`}): ${err.trim()}`));
    });
  });
}

/** GET without Accept-Encoding, as autocannon sends it: { status, headers, body }. */
export function get(url, { headers = {}, agent = false } = {}) {
  return new Promise((resolvePromise, reject) => {
    const req = httpRequest(url, { agent, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolvePromise({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** utime + stime of a process in seconds (USER_HZ is 100 on Linux). */
function cpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

/**
 * The load generator: one process for the whole benchmark (starting one per
 * run cost about 0.5 s each), taking one job a line on stdin and answering
 * one result a line.
 */
let loader;
function loaderProcess() {
  if (loader) return loader;
  installExitHook();
  const child = spawn(process.execPath, [ROLES, 'load'], { stdio: ['pipe', 'pipe', 'inherit'] });
  children.add(child);
  const waiting = [];
  onLines(child.stdout, (line) => waiting.shift()?.resolve(line));
  child.on('close', (code) => {
    children.delete(child);
    loader = undefined;
    for (const w of waiting.splice(0)) w.reject(new Error(`the load generator stopped (exit ${code})`));
  });
  loader = {
    run: (job) =>
      new Promise((resolve, reject) => {
        waiting.push({ resolve, reject });
        child.stdin.write(`${JSON.stringify(job)}\n`);
      }),
    stop: () => child.stdin.end(),
  };
  return loader;
}

/** Calls `onLine` with each whole line the stream brings (the loader's jobs and results). */
export function onLines(stream, onLine) {
  let buffered = '';
  stream.setEncoding('utf8').on('data', (chunk) => {
    buffered += chunk;
    let newline;
    while ((newline = buffered.indexOf('\n')) !== -1) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      onLine(line);
    }
  });
}

/** One autocannon run by the load generator; { rps, p99, p50, mean, requests, bytesPerRequest, loadCpu, serverCpu }. */
export async function load(server, path, seconds, headers) {
  const before = cpuSeconds(server.pid);
  const line = await loaderProcess().run({ url: server.url + path, connections: CONNECTIONS, seconds, headers });
  const after = cpuSeconds(server.pid);
  const result = JSON.parse(line);
  if (result.errors > 0 || result.timeouts > 0 || result.non2xx > 0 || result.requests === 0) {
    throw new Error(
      `load on ${server.url}${path}: ${result.requests} requests, ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`,
    );
  }
  result.serverCpu = before === null || after === null ? null : (after - before) / result.duration;
  return result;
}

/** Ends the load generator, if one was started. */
export function stopLoader() {
  loader?.stop();
}
