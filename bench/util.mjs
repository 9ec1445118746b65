// Small helpers shared by the benchmarks: processes, pools, medians, temp
// folders that are removed at the end or on Ctrl-C, and peak memory of a child.

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';

const tempDirs = new Set();

/** A new folder under os.tmpdir(), removed by removeTempDir() or cleanupTempDirs(). */
export function makeTempDir(prefix = 'modmirror-bench-') {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

export function removeTempDir(dir) {
  // A build's replaced generation may still be being removed in the background: retry rather than fail on ENOTEMPTY.
  rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
  tempDirs.delete(dir);
}

export function cleanupTempDirs() {
  for (const dir of [...tempDirs]) removeTempDir(dir);
}

/** Runs a command; resolves with { stdout, stderr, seconds } or rejects with its stderr. */
export function runCommand(cmd, args, { cwd, input, env } = {}) {
  return new Promise((resolvePromise, reject) => {
    const started = performance.now();
    const child = spawn(cmd, args, { cwd, env: env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out = [];
    const err = [];
    child.stdout.on('data', (c) => out.push(c));
    child.stderr.on('data', (c) => err.push(c));
    child.stdin.on('error', () => {});
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const seconds = (performance.now() - started) / 1000;
      const stdout = Buffer.concat(out);
      const stderr = Buffer.concat(err).toString('utf8');
      if (code === 0) resolvePromise({ stdout, stderr, seconds });
      else reject(new Error(`${cmd} ${args.join(' ')} failed (${signal ?? `exit ${code}`}): ${stderr.trim()}`));
    });
    child.stdin.end(input ?? '');
  });
}

export async function mapLimited(items, limit, fn) {
  const results = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await fn(items[i], i);
      }
    }),
  );
  return results;
}

export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Units of things counted, printed as whole numbers (a median may fall halfway). */
const COUNTS = new Set(['modules', 'rounds', 'attempts', 'holes', 'unlistings', 'requests']);

/** A measured value with its unit, as the tables print it (run.mjs, table.mjs); '—' when not measured. */
export function formatNumber(value, unit) {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'string') return value; // a verdict, such as yes or no
  if (unit === 's') return `${value.toFixed(2)} s`;
  if (COUNTS.has(unit)) return `${Number.isInteger(value) ? value.toLocaleString('en-US') : value.toFixed(1)} ${unit}`;
  if (unit === 'files/s') return `${Math.round(value).toLocaleString('en-US')} files/s`;
  if (unit === 'objects/s') return `${Math.round(value).toLocaleString('en-US')} objects/s`;
  return `${value.toPrecision(4)} ${unit}`;
}

/** Progress on stderr, so stdout holds only the table. */
export function log(message) {
  process.stderr.write(`[bench] ${message}\n`);
}

const GNU_TIME = '/usr/bin/time';
let gnuTime;

/** Whether /usr/bin/time is GNU time (Debian package `time`), which reports a child's peak RSS with `-f %M`. */
export function hasGnuTime() {
  gnuTime ??= (() => {
    if (!existsSync(GNU_TIME)) return false;
    const probe = spawnSync(GNU_TIME, ['-f', '%M', 'true'], { encoding: 'utf8' });
    return probe.status === 0 && /^\d+\s*$/.test(probe.stderr.trim().split('\n').pop() ?? '');
  })();
  return gnuTime;
}

/** VmRSS and VmHWM (peak) of a running process from /proc/PID/status, in MB; nulls when it is gone. */
export function procMemoryMB(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key) => {
      const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status);
      return m ? Number(m[1]) / 1024 : null;
    };
    return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
  } catch {
    return { rss: null, hwm: null };
  }
}

/**
 * Runs a command like runCommand and also reports its peak resident memory:
 * resolves with { stdout, stderr, seconds, peakMB, method }. With GNU time,
 * `/usr/bin/time -f %M` (the kernel's ru_maxrss of the command, which also
 * covers any child it waited for, e.g. git); without it, VmHWM from
 * /proc/PID/status polled every 25 ms (may miss a spike in the last 25 ms).
 */
export async function runWithPeakRss(cmd, args, options = {}) {
  if (hasGnuTime()) {
    const marker = 'modmirror-bench-maxrss-kb=';
    const result = await runCommand(GNU_TIME, ['-f', `${marker}%M`, cmd, ...args], options);
    const lines = result.stderr.split('\n');
    const at = lines.findLastIndex((l) => l.startsWith(marker));
    if (at === -1) throw new Error(`${GNU_TIME} printed no peak RSS: ${result.stderr.trim()}`);
    const peakMB = Number(lines[at].slice(marker.length)) / 1024;
    lines.splice(at, 1);
    return { ...result, stderr: lines.join('\n'), peakMB, method: `${GNU_TIME} -f %M` };
  }
  return new Promise((resolvePromise, reject) => {
    const started = performance.now();
    const child = spawn(cmd, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let peak = 0;
    const poll = () => {
      const { hwm } = procMemoryMB(child.pid);
      if (hwm !== null) peak = Math.max(peak, hwm);
    };
    const timer = setInterval(poll, 25);
    const out = [];
    const err = [];
    child.stdout.on('data', (c) => out.push(c));
    child.stderr.on('data', (c) => err.push(c));
    child.on('error', (error) => {
      clearInterval(timer);
      reject(error);
    });
    child.on('exit', () => clearInterval(timer));
    child.on('close', (code, signal) => {
      const seconds = (performance.now() - started) / 1000;
      const stdout = Buffer.concat(out);
      const stderr = Buffer.concat(err).toString('utf8');
      if (code === 0) resolvePromise({ stdout, stderr, seconds, peakMB: peak || null, method: 'VmHWM from /proc/PID/status, polled every 25 ms' });
      else reject(new Error(`${cmd} ${args.join(' ')} failed (${signal ?? `exit ${code}`}): ${stderr.trim()}`));
    });
  });
}

/**
 * The build's floor: `git archive | gzip -6` of every tag into `out`, as many
 * at a time as there are cores; its wall time in seconds. Every build row's
 * baseline, so they all mean the same thing.
 */
export async function archiveFloor(out, tags) {
  await mkdir(out, { recursive: true });
  const started = performance.now();
  await mapLimited(tags, availableParallelism(), ({ repo, tag }, i) =>
    runCommand('sh', ['-c', 'git archive --format=tar "$1" | gzip -6 > "$2"', 'sh', tag, join(out, `${i}.tar.gz`)], { cwd: repo }),
  );
  const seconds = (performance.now() - started) / 1000;
  await rm(out, { recursive: true, force: true });
  return seconds;
}
