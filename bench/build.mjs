// Build benchmarks: the CLI's full build against the cheapest thing that
// produces the same archives (`git archive | gzip -6` per tag, as many at a
// time as there are cores), and the extractor's throughput on its own.
// benchBuildMemory (benchmark `build-memory`): the CLI build's peak resident
// memory on a small and a ten times larger git corpus.

import { writeFile, rm } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateCorpus } from './corpus/index.mjs';
import { archiveFloor, hasGnuTime, log, makeTempDir, mapLimited, median, removeTempDir, runCommand, runWithPeakRss } from './util.mjs';
import { BUILD_PEAK_TARGET_MB } from './serve/settings.mjs';

const CLI = fileURLToPath(new URL('../bin/modmirror.js', import.meta.url));
const EXTRACT = new URL('../lib/extract/index.js', import.meta.url).href;
const SEED = 20240501;

const BUILD_TARGET = 1.5;
const EXTRACT_TARGET = 1000;

/**
 * @param {{ quick?: boolean, runs?: number }} options
 * @returns {Promise<{ name: string, modmirror: number, baseline: number | null, ratio: number | null, target: string | null, unit: string, pass?: boolean, detail?: object }[]>}
 */
export async function benchBuild({ quick = false, runs } = {}) {
  runs ??= quick ? 2 : 5;
  const shape = quick ? { many: [10, 5], big: 60 } : { many: [100, 10], big: 240 };
  const tmp = makeTempDir();
  try {
    log(`generating corpora in ${tmp}`);
    const started = performance.now();
    const many = await generateCorpus({ dir: join(tmp, 'many'), modules: shape.many[0], versionsPerModule: shape.many[1], seed: SEED });
    const big = await generateCorpus({ dir: join(tmp, 'big'), modules: 1, versionsPerModule: shape.big, seed: SEED + 1, namePrefix: 'big' });
    log(
      `generated ${many.repos.length + big.repos.length} repositories, ${many.tags + big.tags} tags in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );

    const rows = [];
    const full = await compareBuild(tmp, `build ${shape.many[0]} modules × ${shape.many[1]} versions`, many, runs);
    rows.push(full, ...(await benchIncremental(tmp, many, full, runs)));
    rows.push(await compareBuild(tmp, `build 1 module × ${shape.big} versions`, big, runs));
    rows.push(...(await benchExtract(many, runs)));
    return rows;
  } finally {
    removeTempDir(tmp);
  }
}

// ---- (a), (b): the CLI against git archive | gzip ---------------------------

async function compareBuild(tmp, name, corpus, runs) {
  const config = join(tmp, `${name.replace(/\W+/g, '-')}.yaml`);
  await writeFile(config, `sources:\n${corpus.repos.map((r) => `  - git: ${JSON.stringify(r)}\n    namespace: bench\n`).join('')}`);
  const tags = await listTags(corpus.repos);
  if (tags.length !== corpus.tags) throw new Error(`expected ${corpus.tags} tags, found ${tags.length}`);

  const cli = [];
  const cliInternal = [];
  const base = [];
  let outCount = 0;
  const runCli = async () => {
    const out = join(tmp, `out-${outCount++}`);
    // --clean: every run is a full build (the cache would otherwise make every run after the first incremental).
    const { stdout, seconds } = await runCommand(process.execPath, [CLI, 'build', '--clean', '--config', config, '--out', out, '--json']);
    const summary = JSON.parse(stdout.toString('utf8').trim().split('\n').pop());
    if (summary.errors.length > 0 || summary.versions !== corpus.tags) {
      throw new Error(`${name}: modmirror built ${summary.versions} of ${corpus.tags} versions: ${JSON.stringify(summary.errors.slice(0, 3))}`);
    }
    await rm(out, { recursive: true, force: true });
    return { seconds, internal: summary.seconds };
  };
  const runBaseline = () => archiveFloor(join(tmp, `out-${outCount++}`), tags);

  log(`${name}: warm-up`);
  await runCli();
  await runBaseline();
  for (let i = 0; i < runs; i++) {
    // Alternate the two so drift in the machine's speed hits both alike.
    const c = await runCli();
    cli.push(c.seconds);
    cliInternal.push(c.internal);
    base.push(await runBaseline());
    log(`${name}: run ${i + 1}/${runs}: modmirror ${c.seconds.toFixed(2)} s, baseline ${base[i].toFixed(2)} s`);
  }
  return buildRow(name, cli, base, {
    config,
    versions: corpus.tags,
    runs,
    modmirrorRuns: cli,
    modmirrorReportedSeconds: cliInternal,
    baselineRuns: base,
    parallelism: availableParallelism(),
  });
}

/** The row of a full build's seconds against `git archive | gzip -6` of the same tags (archiveFloor): their medians, and the build target. */
export function buildRow(name, modmirrorRuns, floorRuns, detail) {
  const m = median(modmirrorRuns);
  const b = median(floorRuns);
  return { name, modmirror: m, baseline: b, ratio: m / b, target: `≤ ${BUILD_TARGET}× baseline`, unit: 's', pass: m / b <= BUILD_TARGET, detail };
}

// ---- incremental build and publish, against the full build ----------------

const PUBLISH_TARGET = 0.02;
const INCREMENTAL_TARGET = 0.05;

async function benchIncremental(tmp, corpus, full, runs) {
  const config = full.detail.config;
  const out = join(tmp, 'out-incremental');
  await runCommand(process.execPath, [CLI, 'build', '--config', config, '--out', out, '--json']);
  const timed = async (args) => {
    const { stdout, seconds } = await runCommand(process.execPath, [CLI, ...args]);
    return { seconds, result: JSON.parse(stdout.toString('utf8').trim().split('\n').pop()) };
  };
  const incremental = [];
  for (let i = 0; i < runs; i++) {
    const { seconds, result } = await timed(['build', '--config', config, '--out', out, '--json']);
    if (!result.upToDate) throw new Error('incremental build with nothing changed did not find the mirror up to date');
    incremental.push(seconds);
  }
  const repo = corpus.repos[0];
  const publishes = [];
  for (let i = 0; i < runs; i++) {
    const tag = `v99.0.${i}`;
    await writeFile(join(repo, 'CHANGELOG.md'), `release ${tag}\n`);
    await runCommand('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@example.com', 'commit', '-q', '-a', '--allow-empty', '-m', tag], { cwd: repo });
    await runCommand('git', ['tag', tag], { cwd: repo });
    const { seconds, result } = await timed(['publish', '--config', config, '--git', repo, '--ref', tag, '--out', out, '--json']);
    if (result.outcome !== 'published') throw new Error(`publish of ${tag}: ${JSON.stringify(result)}`);
    publishes.push(seconds);
  }
  log(`incremental: nothing changed ${incremental.map((s) => s.toFixed(2)).join(', ')} s; publish ${publishes.map((s) => s.toFixed(2)).join(', ')} s`);
  const row = (name, values, target) => {
    const m = median(values);
    return {
      name,
      modmirror: m,
      baseline: full.modmirror,
      ratio: m / full.modmirror,
      target: `≤ ${target * 100}% of the full build`,
      unit: 's',
      pass: m / full.modmirror <= target,
      detail: { runs: values },
    };
  };
  return [
    row(`publish 1 version into that mirror (vs its full build)`, publishes, PUBLISH_TARGET),
    row(`incremental build, nothing changed (vs full build)`, incremental, INCREMENTAL_TARGET),
  ];
}

async function listTags(repos) {
  const lists = await mapLimited(repos, availableParallelism(), async (repo) => {
    const { stdout } = await runCommand('git', ['for-each-ref', '--format=%(refname:strip=2)', 'refs/tags'], { cwd: repo });
    return stdout
      .toString('utf8')
      .split('\n')
      .filter(Boolean)
      .map((tag) => ({ repo, tag }));
  });
  return lists.flat();
}

// ---- (c): extraction throughput --------------------------------------------

/** Every file of every tag in memory: [{ files: [{path, mode, data}] }], plus counts. Buffers of equal blobs are shared. */
async function loadVersions(repos) {
  const perRepo = await mapLimited(repos, availableParallelism(), async (repo) => {
    const { stdout } = await runCommand('git', ['for-each-ref', '--format=%(refname:strip=2)', 'refs/tags'], { cwd: repo });
    const tags = stdout.toString('utf8').split('\n').filter(Boolean);
    const trees = [];
    for (const tag of tags) {
      const ls = (await runCommand('git', ['ls-tree', '-r', '-z', '--full-tree', tag], { cwd: repo })).stdout.toString('utf8');
      const entries = [];
      for (const line of ls.split('\0')) {
        if (line === '') continue;
        const tab = line.indexOf('\t');
        const [mode, type, oid] = line.slice(0, tab).split(' ');
        if (type !== 'blob' || mode === '120000') continue;
        entries.push({ path: line.slice(tab + 1), mode: mode === '100755' ? 0o755 : 0o644, oid });
      }
      trees.push(entries);
    }
    const oids = [...new Set(trees.flat().map((e) => e.oid))];
    const blobs = parseCatFileBatch((await runCommand('git', ['cat-file', '--batch'], { cwd: repo, input: `${oids.join('\n')}\n` })).stdout);
    return trees.map((entries) => entries.map((e) => ({ path: e.path, mode: e.mode, data: blobs.get(e.oid), oid: e.oid })));
  });
  const versions = perRepo.flat();
  const tf = versions.flat().filter((f) => /\.tf$/.test(f.path));
  return {
    versions: versions.map((files) => files.map(({ path, mode, data }) => ({ path, mode, data }))),
    tfFiles: tf.length,
    distinctTfFiles: new Set(tf.map((f) => f.oid)).size,
  };
}

function parseCatFileBatch(buffer) {
  const blobs = new Map();
  let pos = 0;
  while (pos < buffer.length) {
    const nl = buffer.indexOf(10, pos);
    const [oid, , size] = buffer.toString('utf8', pos, nl).split(' ');
    const start = nl + 1;
    blobs.set(oid, buffer.subarray(start, start + Number(size)));
    pos = start + Number(size) + 1;
  }
  return blobs;
}

async function benchExtract(corpus, runs) {
  const { extractVersion, createExtractCache } = await import(EXTRACT);
  log('extraction: reading every file of every tag into memory');
  const { versions, tfFiles, distinctTfFiles } = await loadVersions(corpus.repos);
  const once = () => {
    const cache = createExtractCache();
    const started = performance.now();
    for (const files of versions) extractVersion(files, cache);
    return (performance.now() - started) / 1000;
  };
  // One run is enough passes (each with a fresh cache) to last ~0.5 s, so small corpora still time well.
  const warm = once();
  const passes = Math.max(1, Math.ceil(0.5 / Math.max(warm, 1e-3)));
  const seconds = [];
  for (let i = 0; i < runs; i++) {
    let total = 0;
    for (let p = 0; p < passes; p++) total += once();
    seconds.push(total / passes);
  }
  const s = median(seconds);
  log(
    `extraction: ${versions.length} versions, ${tfFiles} .tf files (${distinctTfFiles} distinct), median ${(s * 1000).toFixed(0)} ms a pass, ${passes} pass(es) a run`,
  );
  const detail = { versions: versions.length, tfFiles, distinctTfFiles, secondsPerPass: s, passesPerRun: passes, runs };
  return [
    {
      name: 'extract .tf files (all, with repeats)',
      modmirror: tfFiles / s,
      baseline: null,
      ratio: null,
      target: `≥ ${EXTRACT_TARGET.toLocaleString('en-US')} files/s`,
      unit: 'files/s',
      pass: tfFiles / s >= EXTRACT_TARGET,
      detail,
    },
    {
      name: 'extract .tf files (distinct contents)',
      modmirror: distinctTfFiles / s,
      baseline: null,
      ratio: null,
      target: null,
      unit: 'files/s',
      detail,
    },
  ];
}

// ---- (d): peak memory of the build, as the corpus grows --------------------

/** Peak memory should stay flat as versions grow: at most this factor from the small corpus to the large one. */
const BUILD_GROWTH_TARGET = 1.5;

/**
 * Peak RSS of `modmirror build --clean` (one process, measured from outside)
 * on two git corpora of the same per-module shape, one ten times the other.
 * @param {{ quick?: boolean }} options
 */
export async function benchBuildMemory({ quick = false } = {}) {
  // Full: 1,000 and 10,000 versions. Quick: 30 and 150, so the quick run stays short.
  const shapes = quick
    ? [
        [3, 10],
        [15, 10],
      ]
    : [
        [100, 10],
        [1000, 10],
      ];
  const tmp = makeTempDir();
  try {
    const results = [];
    for (const [modules, versionsPerModule] of shapes) {
      const label = `${(modules * versionsPerModule).toLocaleString('en-US')} versions`;
      let started = performance.now();
      const corpus = await generateCorpus({ dir: join(tmp, `corpus-${modules}`), modules, versionsPerModule, seed: SEED + 2 });
      const generated = (performance.now() - started) / 1000;
      const config = join(tmp, `memory-${modules}.yaml`);
      await writeFile(config, `sources:\n${corpus.repos.map((r) => `  - git: ${JSON.stringify(r)}\n    namespace: bench\n`).join('')}`);
      const out = join(tmp, `out-memory-${modules}`);
      log(`build memory: ${modules.toLocaleString('en-US')} modules × ${versionsPerModule} versions (git) generated in ${generated.toFixed(1)} s; building`);
      const run = await runWithPeakRss(process.execPath, [CLI, 'build', '--clean', '--config', config, '--out', out, '--json'], { cwd: tmp });
      const summary = JSON.parse(run.stdout.toString('utf8').trim().split('\n').pop());
      if (summary.errors.length > 0 || summary.versions !== corpus.tags) {
        throw new Error(`build memory: modmirror built ${summary.versions} of ${corpus.tags} versions: ${JSON.stringify(summary.errors.slice(0, 3))}`);
      }
      log(`build memory: ${label}: peak RSS ${run.peakMB.toFixed(0)} MB, built in ${run.seconds.toFixed(1)} s`);
      results.push({
        label,
        modules,
        versionsPerModule,
        versions: corpus.tags,
        peakMB: run.peakMB,
        seconds: run.seconds,
        generatedSeconds: generated,
        method: run.method,
      });
      await rm(out, { recursive: true, force: true });
      await rm(join(tmp, `corpus-${modules}`), { recursive: true, force: true });
    }
    const [small, large] = results;
    const growth = large.peakMB / small.peakMB;
    const detail = {
      runs: 1,
      measuredWith: results[0].method,
      gnuTime: hasGnuTime(),
      corpora: results,
      note: 'one --clean build per corpus, one process; git corpora from corpus.mjs (same module shape, more modules)',
    };
    return [
      {
        name: `build peak RSS, ${small.label} (${small.modules.toLocaleString('en-US')} modules × ${small.versionsPerModule}, git)`,
        modmirror: small.peakMB,
        baseline: null,
        ratio: null,
        target: `≤ ${BUILD_PEAK_TARGET_MB} MB`,
        unit: 'MB',
        pass: small.peakMB <= BUILD_PEAK_TARGET_MB,
        detail,
      },
      {
        name: `build peak RSS, ${large.label} (${large.modules.toLocaleString('en-US')} modules × ${large.versionsPerModule}, git)`,
        modmirror: large.peakMB,
        baseline: null,
        ratio: null,
        target: `≤ ${BUILD_PEAK_TARGET_MB} MB`,
        unit: 'MB',
        pass: large.peakMB <= BUILD_PEAK_TARGET_MB,
        detail,
      },
      {
        name: `  ↳ growth of build peak RSS, ${small.label} → ${large.label}`,
        modmirror: large.peakMB,
        baseline: small.peakMB,
        ratio: growth,
        target: `flat: ≤ ${BUILD_GROWTH_TARGET}×`,
        unit: 'MB',
        pass: growth <= BUILD_GROWTH_TARGET,
        detail,
      },
    ];
  } finally {
    removeTempDir(tmp);
  }
}
