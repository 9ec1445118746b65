// Publishing through `modmirror serve`'s registry-modules API, as a release
// pipeline with go-tfe or curl does it (CreateVersion, PUT the tar.gz to
// links.upload, ReadVersion until `ok`):
//  - one version into the 1,000-version bench mirror, first request to `ok`,
//    against the full build of that mirror measured in the same run (target ≤ 2%);
//  - 50 uploads at once: versions per second, and how long reads take meanwhile;
//  - one version into a large mirror against one into a 1,000-version mirror
//    (target ≤ 1.5×: a publish's cost follows the module, not the mirror).
//    The large mirror is 10,000 versions: 100,000 takes too long to build on
//    a small machine; MODMIRROR_BENCH_API_LARGE=100000 asks for it.
// The publishes run back to back, as a busy pipeline's do.

import { cpSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { generateCorpus } from './corpus/index.mjs';
import { generateVersionedMirror } from './serve/mirrors.mjs';
import { startProcess } from './serve/processes.mjs';
import { log, makeTempDir, median, removeTempDir, runCommand } from './util.mjs';

const CLI = fileURLToPath(new URL('../bin/modmirror.js', import.meta.url));
const DATA = fileURLToPath(new URL('../data', import.meta.url));
const TOKEN = 'mm.sample-org-token'; // the sample data's organization token of acme
const SEED = 20240501;
const LATENCY_TARGET = 0.02;
const SCALE_TARGET = 1.3;

export async function benchApiPublish({ quick = false } = {}) {
  const runs = quick ? 3 : 7;
  const parallel = quick ? 10 : 50;
  const large = Number(process.env.MODMIRROR_BENCH_API_LARGE ?? (quick ? 2000 : 10_000));
  const tmp = makeTempDir();
  try {
    const shape = quick ? [10, 5] : [100, 10];
    const corpus = await generateCorpus({ dir: join(tmp, 'corpus'), modules: shape[0], versionsPerModule: shape[1], seed: SEED });
    const config = join(tmp, 'bench.yaml');
    await writeFile(
      config,
      `cacheDir: ${JSON.stringify(join(tmp, 'cache'))}\nsources:\n${corpus.repos.map((r) => `  - git: ${JSON.stringify(r)}\n    namespace: bench\n`).join('')}`,
    );
    const builds = [];
    for (let i = 0; i < (quick ? 1 : 3); i++)
      builds.push((await runCommand(process.execPath, [CLI, 'build', '--clean', '--config', config, '--out', join(tmp, `full-${i}`), '--json'])).seconds);
    const full = median(builds);
    log(`api-publish: full build of ${corpus.tags} versions ${builds.map((s) => s.toFixed(2)).join(', ')} s`);
    // What a pipeline uploads: one version of a corpus module, files at the root.
    const tarball = (await runCommand('git', ['archive', '--format=tar.gz', 'HEAD'], { cwd: corpus.repos[0] })).stdout;

    const server = await serve(tmp, 'git', join(tmp, 'full-0'), config);
    let rows;
    try {
      const latencies = [];
      await call(server, 'POST', '/api/v2/organizations/acme/registry-modules', moduleBody('api'));
      for (let i = 0; i < runs; i++) latencies.push(await publishOne(server, 'api', `1.0.${i}`, tarball));
      log(`api-publish: first request to ok ${latencies.map((s) => (s * 1000).toFixed(0)).join(', ')} ms`);
      const latency = median(latencies);
      rows = [
        {
          name: `publish 1 version through the API into the ${corpus.tags}-version mirror (vs its full build)`,
          modmirror: latency,
          baseline: full,
          ratio: latency / full,
          target: `≤ ${LATENCY_TARGET * 100}% of the full build`,
          unit: 's',
          pass: latency / full <= LATENCY_TARGET,
          detail: { runs: latencies, builds },
        },
        ...(await parallelUploads(server, parallel, tarball)),
      ];
    } finally {
      await server.stop();
    }
    rows.push(await scale(tmp, 1000, large, runs, tarball));
    return rows;
  } finally {
    removeTempDir(tmp);
  }
}

async function parallelUploads(server, count, tarball) {
  for (let m = 0; m < 5; m++) await call(server, 'POST', '/api/v2/organizations/acme/registry-modules', moduleBody(`par${m}`));
  const quiet = await readLatencies(server, () => false, 200);
  let done = false;
  const during = readLatencies(server, () => done);
  const started = performance.now();
  await Promise.all(Array.from({ length: count }, (_, i) => publishOne(server, `par${i % 5}`, `2.${i}.0`, tarball)));
  const seconds = (performance.now() - started) / 1000;
  done = true;
  const reads = await during;
  const p = (list, q) => list.sort((a, b) => a - b)[Math.min(list.length - 1, Math.floor(list.length * q))];
  log(
    `api-publish: ${count} parallel uploads in ${seconds.toFixed(2)} s; reads meanwhile median ${p(reads, 0.5).toFixed(1)} ms, p99 ${p(reads, 0.99).toFixed(1)} ms (${reads.length} reads; quiet median ${p(quiet, 0.5).toFixed(1)} ms)`,
  );
  return [
    {
      name: `${count} parallel uploads through the API`,
      modmirror: count / seconds,
      baseline: null,
      ratio: null,
      target: null,
      unit: 'versions/s',
      detail: { seconds },
    },
    {
      name: `read latency during those uploads, median (vs quiet)`,
      modmirror: p(reads, 0.5),
      baseline: p(quiet, 0.5),
      ratio: p(reads, 0.5) / p(quiet, 0.5),
      target: null,
      unit: 'ms',
      detail: { p99: p(reads, 0.99), reads: reads.length, quietP99: p(quiet, 0.99) },
    },
  ];
}

/**
 * Publish latency into a `large`-version mirror against a `small` one, both folder-layout mirrors built by
 * the CLI and served at once; the publishes alternate between them, so drift in the machine's speed hits both.
 */
async function scale(tmp, small, large, runs, tarball) {
  const servers = {};
  const latencies = { [small]: [], [large]: [] };
  try {
    for (const size of [small, large]) {
      const dir = join(tmp, `scale-${size}`);
      await generateVersionedMirror(join(dir, 'mods'), { modules: size / 10, versions: 10 });
      const config = join(dir, 'mirror.yaml');
      await writeFile(config, `cacheDir: ${JSON.stringify(join(dir, 'cache'))}\nsources:\n  - folder: ${JSON.stringify(join(dir, 'mods'))}\n`);
      const built = await runCommand(process.execPath, [CLI, 'build', '--config', config, '--out', join(dir, 'dist'), '--json']);
      log(`api-publish: built a ${size}-version mirror in ${built.seconds.toFixed(1)} s`);
      servers[size] = await serve(dir, `scale-${size}`, join(dir, 'dist'), config);
      await call(servers[size], 'POST', '/api/v2/organizations/acme/registry-modules', moduleBody('scale'));
    }
    for (let i = 0; i < runs; i++) for (const size of [small, large]) latencies[size].push(await publishOne(servers[size], 'scale', `1.0.${i}`, tarball));
  } finally {
    for (const server of Object.values(servers)) await server.stop();
  }
  const medians = {};
  for (const size of [small, large]) {
    medians[size] = median(latencies[size]);
    log(`api-publish: into ${size} versions ${latencies[size].map((s) => (s * 1000).toFixed(0)).join(', ')} ms`);
  }
  const ratio = medians[large] / medians[small];
  return {
    name: `publish through the API into ${large} versions (vs into ${small})`,
    modmirror: medians[large],
    baseline: medians[small],
    ratio,
    target: `≤ ${SCALE_TARGET}×`,
    unit: 's',
    pass: ratio <= SCALE_TARGET,
  };
}

async function serve(tmp, label, dist, config) {
  const data = join(tmp, `data-${label}`);
  cpSync(DATA, data, { recursive: true, filter: (src) => !src.endsWith('downloads.json') });
  return startProcess([CLI, 'serve', '--dir', dist, '--config', config, '--data', data, '--port', '0', '--quiet'], `serve ${label}`);
}

const moduleBody = (name) => JSON.stringify({ data: { type: 'registry-modules', attributes: { name, provider: 'null', 'registry-name': 'private' } } });

async function call(server, method, path, body, headers = {}) {
  const res = await request(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/vnd.api+json', ...headers },
    body,
  });
  const text = await res.body.text();
  return { status: res.statusCode, json: text ? JSON.parse(text) : undefined, text };
}

/** CreateVersion, PUT to links.upload, ReadVersion: seconds from the first request to `ok`. */
async function publishOne(server, name, version, tarball) {
  const started = performance.now();
  const created = await call(
    server,
    'POST',
    `/api/v2/registry-modules/acme/${name}/null/versions`,
    JSON.stringify({ data: { type: 'registry-module-versions', attributes: { 'commit-sha': null, version } } }),
  );
  if (created.status !== 201) throw new Error(`CreateVersion ${name} ${version}: ${created.status} ${created.text}`);
  const put = await request(created.json.data.links.upload, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: tarball });
  const answer = await put.body.text();
  if (put.statusCode !== 200) throw new Error(`upload of ${name} ${version}: ${put.statusCode} ${answer}`);
  const read = await call(server, 'GET', `/api/v2/organizations/acme/registry-modules/private/acme/${name}/null/version?module_version=${version}`);
  if (read.json?.data?.attributes?.status !== 'ok') throw new Error(`${name} ${version} is ${read.text}`);
  return (performance.now() - started) / 1000;
}

/** Times GETs of a versions document one after another until `stop()` says so, or `count` of them. */
async function readLatencies(server, stop, count = Infinity) {
  const out = [];
  const listing = await request(`${server.url}/v1/modules/bench`);
  const first = JSON.parse(await listing.body.text()).modules[0];
  const path = `/v1/modules/${first.namespace}/${first.name}/${first.provider}/versions`;
  while (!stop() && out.length < count) {
    const started = performance.now();
    const res = await request(`${server.url}${path}`);
    await res.body.text();
    out.push(performance.now() - started);
  }
  return out;
}
