// A real Prometheus (Debian's `prometheus` package, as .ci/deps installs it)
// started on loopback to scrape a server, and promtool to lint an
// exposition. Tests that need them are skipped only where they are missing
// and this is not CI: on CI a missing binary fails the test.

import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { request } from 'undici';
import { freePort, tempDir, writeFiles } from '../helpers.js';

const onPath = (program: string) => {
  try {
    execFileSync(program, ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

/** Whether promtool and prometheus are there; on CI they must be. */
export const hasPrometheus = onPath('promtool') && onPath('prometheus');
export const skipWithoutPrometheus = !hasPrometheus && !process.env['CI'];

/** `promtool check metrics` of an exposition: its exit code and what it said (a problem per line). */
export function promtoolCheck(text: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('promtool', ['check', 'metrics']);
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, output }));
    child.stdin.end(text);
  });
}

export interface Prometheus {
  /** An instant query's vector: each series' labels and value. */
  query(expr: string): Promise<{ metric: Record<string, string>; value: number }[]>;
  /** Polls `query` until `ok` holds of its answer (scrapes come every second), or gives the last answer. */
  until(
    expr: string,
    ok: (v: { metric: Record<string, string>; value: number }[]) => boolean,
    timeoutMs?: number,
  ): Promise<{ metric: Record<string, string>; value: number }[]>;
  close(): Promise<void>;
}

/** Prometheus scraping `target` (an absolute /metrics URL) every second, sending `bearerToken` (from a file, as an operator would) when given. */
export async function startPrometheus(target: URL, bearerToken?: string): Promise<Prometheus> {
  const dir = tempDir('mm-prom-');
  const port = await freePort();
  const auth = bearerToken ? `    authorization:\n      credentials_file: ${join(dir, 'token')}\n` : '';
  if (bearerToken) writeFiles(dir, { token: bearerToken });
  writeFiles(dir, {
    'prometheus.yml': `global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: modmirror\n    metrics_path: ${target.pathname}\n${auth}    static_configs:\n      - targets: ['${target.host}']\n`,
  });
  const child = spawn(
    'prometheus',
    [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr.on('data', (d: Buffer) => (log += d.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const ready = await request(`${base}/-/ready`).then(
      async (res) => (await res.body.dump(), res.statusCode === 200),
      () => false,
    );
    if (ready) break;
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`prometheus did not start: ${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const query: Prometheus['query'] = async (expr) => {
    const res = await request(`${base}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const body = (await res.body.json()) as { status: string; data: { result: { metric: Record<string, string>; value: [number, string] }[] } };
    if (body.status !== 'success') throw new Error(`query ${expr}: ${JSON.stringify(body)}`);
    return body.data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
  };
  return {
    query,
    async until(expr, ok, timeoutMs = 20_000) {
      const end = Date.now() + timeoutMs;
      let last = await query(expr);
      while (!ok(last) && Date.now() < end) {
        await new Promise((r) => setTimeout(r, 250));
        last = await query(expr);
      }
      return last;
    },
    async close() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
