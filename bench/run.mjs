// Runs the benchmarks and prints one table.
//
//   node bench/run.mjs [--quick] [--json FILE] [--only NAME[,NAME]] [--history PATH ...]
//
// bench/table.mjs turns the --json file into a markdown table (bench/README.md).
//
// --history PATH (repeatable) builds local git repositories, e.g. clones of
// real public modules (bench/history.mjs); without --only it runs alone.
//
// `npm run bench` compiles lib/ first; when running this file directly,
// compile with `npx tsc -p tsconfig.build.json` if src/ changed.
//
// To add a benchmark, add an entry to BENCHMARKS: `run` gets { quick } and
// resolves with rows { name, modmirror, baseline, ratio, target, unit } (plus
// optional `pass` and `detail`). An entry with `onlyWhenNamed` runs only when
// --only names it (a subset of another benchmark, e.g. serve-api).

import { existsSync, readdirSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { cpus, availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { cleanupTempDirs, formatNumber, log } from './util.mjs';

const BENCHMARKS = [
  { name: 'build', run: async (opts) => (await import('./build.mjs')).benchBuild(opts) },
  { name: 'build-providers', run: async (opts) => (await import('./providers.mjs')).benchProviderBuild(opts) },
  { name: 'build-memory', run: async (opts) => (await import('./build.mjs')).benchBuildMemory(opts) },
  { name: 'build-large-file', run: async (opts) => (await import('./large-file.mjs')).benchBuildLargeFile(opts) },
  { name: 'serve', run: async (opts) => (await import('./serve/throughput.mjs')).benchServe(opts) },
  { name: 'dev', run: async (opts) => (await import('./dev.mjs')).benchDev(opts) },
  {
    name: 'serve-api',
    onlyWhenNamed: true, // the management API rows of `serve`, on their own (with the small mirror)
    run: async (opts) => {
      const serve = await import('./serve/throughput.mjs');
      return serve.benchServe({ ...opts, endpoints: serve.MANAGEMENT_ENDPOINTS });
    },
  },
  {
    name: 'serve-private',
    onlyWhenNamed: true, // the registry rows public and private side by side (also in `serve`)
    run: async (opts) => {
      const serve = await import('./serve/throughput.mjs');
      return serve.benchServe({ ...opts, endpoints: ['versions', 'detail', 'list0', 'search', ...serve.PRIVATE_ENDPOINTS] });
    },
  },
  {
    name: 'serve-metrics',
    onlyWhenNamed: true, // the metrics on/off rows of `serve`, on their own (with the 10,000-module mirror)
    run: async (opts) => {
      const serve = await import('./serve/throughput.mjs');
      return serve.benchServe({ ...opts, endpoints: serve.METRICS_ENDPOINTS });
    },
  },
  {
    name: 'serve-signed',
    onlyWhenNamed: true, // module archives by signed URL in private mode against the same archives public
    run: async (opts) => (await import('./serve/signed.mjs')).benchSignedArchive(opts),
  },
  { name: 'serve-usage', run: async (opts) => (await import('./serve/signed.mjs')).benchUsage(opts) },
  { name: 'serve-memory', run: async (opts) => (await import('./serve/memory.mjs')).benchServeMemory(opts) },
  // Builds a 100,000-version mirror: over 3 minutes in all on a small machine, so only when named.
  { name: 'publish-scale', onlyWhenNamed: true, run: async (opts) => (await import('./publish-scale.mjs')).benchPublishScale(opts) },
  { name: 'api-publish', run: async (opts) => (await import('./api-publish.mjs')).benchApiPublish(opts) },
  { name: 'provider-sync', run: async (opts) => (await import('./provider-sync.mjs')).benchProviderSync(opts) },
  { name: 'upstream', run: async (opts) => (await import('./upstream.mjs')).benchUpstream(opts) },
  { name: 'bucket', run: async (opts) => (await import('./bucket.mjs')).benchBucket(opts) },
  { name: 'bucket-races', run: async (opts) => (await import('./bucket-races.mjs')).benchBucketRaces(opts) },
  { name: 'history', onlyWhenNamed: true, run: async (opts) => (await import('./history.mjs')).benchHistory(opts) },
];

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function newestMtime(dir) {
  let newest = 0;
  if (!existsSync(dir)) return newest;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath ?? entry.path, entry.name)).mtimeMs);
  }
  return newest;
}

function machine() {
  const cpu = cpus()[0];
  return { cpu: cpu?.model ?? 'unknown', cores: availableParallelism(), node: process.version, platform: `${process.platform} ${process.arch}` };
}

function table(rows) {
  const head = ['measurement', 'modmirror median', 'baseline median', 'ratio', 'target'];
  const body = rows.map((r) => [
    r.name,
    formatNumber(r.modmirror, r.unit),
    formatNumber(r.baseline, r.unit),
    r.ratio === null || r.ratio === undefined ? '—' : `${r.ratio.toFixed(2)}×`,
    r.target ? `${r.target}${r.pass === undefined ? '' : r.pass ? '  ok' : '  MISSED'}` : '(info)',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells) =>
    cells
      .map((c, i) => (i === 0 || i === cells.length - 1 ? c.padEnd(widths[i]) : c.padStart(widths[i])))
      .join(' | ')
      .trimEnd();
  return [line(head), widths.map((w) => '-'.repeat(w)).join('-|-'), ...body.map(line)].join('\n');
}

async function main() {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      json: { type: 'string' },
      only: { type: 'string' },
      history: { type: 'string', multiple: true },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    console.log('Usage: node bench/run.mjs [--quick] [--json FILE] [--only NAME[,NAME]] [--history PATH ...]');
    console.log(`Benchmarks: ${BENCHMARKS.map((b) => b.name + (b.onlyWhenNamed ? ' (only with --only)' : '')).join(', ')}`);
    return 0;
  }
  if (newestMtime(join(ROOT, 'src')) > newestMtime(join(ROOT, 'lib'))) {
    log('warning: src/ is newer than lib/; run `npx tsc -p tsconfig.build.json` (npm run bench does) or the numbers are for old code');
  }
  const histories = values.history ?? [];
  const only = values.only?.split(',') ?? (histories.length > 0 ? ['history'] : undefined);
  if (only?.includes('history') && histories.length === 0) throw new Error('the history benchmark needs --history PATH (a local git repository)');
  const selected = BENCHMARKS.filter((b) => (only ? only.includes(b.name) : !b.onlyWhenNamed));
  if (selected.length === 0) throw new Error(`no benchmark named ${values.only}; have: ${BENCHMARKS.map((b) => b.name).join(', ')}`);

  const started = performance.now();
  const rows = [];
  for (const bench of selected) {
    log(`running ${bench.name}${values.quick ? ' (quick)' : ''}`);
    rows.push(...(await bench.run({ quick: values.quick, histories })).map((r) => ({ benchmark: bench.name, ...r })));
  }
  const m = machine();
  const seconds = (performance.now() - started) / 1000;
  console.log(`\nmodmirror benchmarks${values.quick ? ' (quick)' : ''}: ${m.cpu}, ${m.cores} cores, node ${m.node}, ${m.platform}\n`);
  console.log(table(rows));
  console.log(`\n(medians; ${seconds.toFixed(0)} s in all)`);
  if (values.json) {
    await writeFile(values.json, `${JSON.stringify({ date: new Date().toISOString(), quick: values.quick, machine: m, seconds, rows }, null, 2)}\n`);
    log(`wrote ${values.json}`);
  }
  return 0; // a missed target is reported in the table, not as a failure
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    cleanupTempDirs();
    process.exit(130);
  });
}

try {
  process.exitCode = await main();
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  cleanupTempDirs();
}
