// Small helpers shared by the benchmarks: processes, pools, medians, and temp
// folders that are removed at the end or on Ctrl-C.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const tempDirs = new Set();

/** A new folder under os.tmpdir(), removed by removeTempDir() or cleanupTempDirs(). */
export function makeTempDir(prefix = 'modmirror-bench-') {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

export function removeTempDir(dir) {
  rmSync(dir, { recursive: true, force: true });
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

/** Progress on stderr, so stdout holds only the table. */
export function log(message) {
  process.stderr.write(`[bench] ${message}\n`);
}
