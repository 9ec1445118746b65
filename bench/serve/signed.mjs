// Benchmarks serve-signed and serve-usage: module archives fetched by their
// signed URLs from `serve --access private`, over the same small mirror.
//
// serve-signed: what private mode pays to fetch a module archive by its
// signed URL (signature, then the issuing token and its organizations as they
// are now), against the same archive from `serve` in public mode, measured in
// the same run over the same mirror. The ratio is the price of the checks;
// compare it between two commits. The server's CPU time per request is
// reported too: on a shared machine it moves less than throughput does.
//
// serve-usage: what recording who downloaded what (the data folder's usage/)
// adds to that download: the same private server with usage recording on and
// off. serve has no switch for it, so both run from lib/ through roles.mjs
// `serve`, the `off` one with the recording made a no-op, each on a data
// folder of its own.

import { join } from 'node:path';
import { log, makeTempDir, median, removeTempDir } from '../util.mjs';
import { ADMIN_TOKEN, prepareDataDir } from './data-folder.mjs';
import { generateMirror } from './mirrors.mjs';
import { get, load, ROLES, runTracked, startProcess, stopLoader } from './processes.mjs';
import { CLI, CONNECTIONS, HOST, USAGE_TARGET } from './settings.mjs';

/**
 * The usage bound serve-usage's servers run with: 1 MiB segments, each folded into counts.json after about
 * 11,000 downloads, so folds happen within the runs (at the default 64 MiB, after about 180,000). A fold's work
 * is per line folded, so its share of each download is the same either way.
 */
const USAGE_MAX_MIB = 4;

/** A built mirror of 150 modules (one with 5 versions) and a data folder, in `tmp`; the module whose archive is fetched. */
async function prepare(tmp) {
  const mirror = await generateMirror(join(tmp, 'modules'), { modules: 150, bigVersions: 5 });
  await prepareDataDir(join(tmp, 'data'));
  await runTracked([CLI, 'build', '--modules', join(tmp, 'modules'), '--out', join(tmp, 'dist'), '--json'], { cwd: tmp });
  const { big } = mirror;
  return { dist: join(tmp, 'dist'), download: `/v1/modules/${big.ns}/${big.name}/${big.provider}/${big.versions[0]}/download` };
}

/** A private server's signed URL of the archive (the download document's location, as Terraform follows it): path and query. */
async function signedArchivePath(server, download) {
  const answer = await get(server.url + download, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
  if (answer.status !== 200) throw new Error(`${download} answered ${answer.status}: ${answer.body.toString('utf8')}`);
  const signed = new URL(JSON.parse(answer.body.toString('utf8')).location, server.url + download);
  return signed.pathname + signed.search;
}

/** A warm-up of each target, then `runs` rounds alternating them; per target, each run's load result. */
async function alternate(targets, { runs, seconds, warmUpSeconds }) {
  for (const [, server, path] of targets) {
    const res = await get(server.url + path);
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}`);
  }
  for (const [, server, path] of targets) await load(server, path, warmUpSeconds);
  const results = Object.fromEntries(targets.map(([who]) => [who, []]));
  for (let i = 0; i < runs; i++) {
    for (const [who, server, path] of i % 2 === 0 ? targets : [...targets].reverse()) results[who].push(await load(server, path, seconds));
  }
  return results;
}

/** Microseconds of the server's CPU time per request in one run; NaN when /proc could not be read. */
const cpuPerRequest = (run) => (run.serverCpu === null ? NaN : (run.serverCpu / run.rps) * 1e6);

/** @param {{ quick?: boolean, runs?: number }} options */
export async function benchSignedArchive({ quick = false, runs } = {}) {
  runs ??= quick ? 1 : 5;
  const seconds = quick ? 1 : 5;
  const tmp = makeTempDir();
  const servers = [];
  try {
    const { dist, download } = await prepare(tmp);
    const serve = (access) =>
      startProcess(
        [CLI, 'serve', '--dir', dist, '--host', HOST, '--port', '0', '--quiet', '--data', join(tmp, 'data'), '--access', access],
        `serve --access ${access}`,
      );
    const open = await serve('public');
    servers.push(open);
    const closed = await serve('private');
    servers.push(closed);

    const signed = await signedArchivePath(closed, download);
    const plain = new URL(signed, open.url).pathname;
    const targets = [
      ['public', open, plain],
      ['signed', closed, signed],
    ];
    const runsOf = await alternate(targets, { runs, seconds, warmUpSeconds: quick ? 0.3 : 2 });
    const results = { public: runsOf.public.map((r) => r.rps), signed: runsOf.signed.map((r) => r.rps) };
    const cpu = {
      public: runsOf.public.map(cpuPerRequest).filter((x) => !Number.isNaN(x)),
      signed: runsOf.signed.map(cpuPerRequest).filter((x) => !Number.isNaN(x)),
    };
    const rps = { public: median(results.public), signed: median(results.signed) };
    const cpuMedian = { public: median(cpu.public), signed: median(cpu.signed) };
    log(
      `serve-signed: public ${Math.round(rps.public)} req/s (${cpuMedian.public.toFixed(0)} µs CPU each), signed ${Math.round(rps.signed)} req/s (${cpuMedian.signed.toFixed(0)} µs CPU each)`,
    );
    return [
      {
        name: `GET a module archive by signed URL (private) vs the same archive public: k req/s (autocannon, ${CONNECTIONS} conn)`,
        modmirror: rps.signed / 1000,
        baseline: rps.public / 1000,
        ratio: rps.signed / rps.public,
        target: null,
        unit: 'k req/s',
        detail: { path: plain, runs: results, seconds },
      },
      {
        name: '  ↳ server CPU per request (µs), signed vs public',
        modmirror: cpuMedian.signed,
        baseline: cpuMedian.public,
        ratio: cpuMedian.signed / cpuMedian.public,
        target: null,
        unit: 'µs',
        detail: { runs: cpu },
      },
    ];
  } finally {
    stopLoader();
    await Promise.all(servers.map((s) => s.stop()));
    removeTempDir(tmp);
  }
}

/** @param {{ quick?: boolean, runs?: number }} options */
export async function benchUsage({ quick = false, runs } = {}) {
  runs ??= quick ? 1 : 5;
  const seconds = quick ? 1 : 5;
  const tmp = makeTempDir();
  const servers = [];
  try {
    const { dist, download } = await prepare(tmp);
    // Each server its own data folder: two usage records never share a folder, and each signs with its own key.
    const serve = async (usage) => {
      const data = join(tmp, `data-usage-${usage}`);
      await prepareDataDir(data);
      const flags = ['--dir', dist, '--host', HOST, '--port', '0', '--quiet', '--data', data, '--access', 'private', '--usage-max-mib', String(USAGE_MAX_MIB)];
      const server = await startProcess([ROLES, 'serve', `usage=${usage}`, '--', ...flags], `serve --access private (lib/, usage ${usage})`);
      servers.push(server);
      return { server, data };
    };
    const on = await serve('on');
    const off = await serve('off');
    const targets = [
      ['on', on.server, await signedArchivePath(on.server, download)],
      ['off', off.server, await signedArchivePath(off.server, download)],
    ];
    const runsOf = await alternate(targets, { runs, seconds, warmUpSeconds: quick ? 0.3 : 2 });

    // The switch took: the server with usage on recorded every archive it sent, the other none. Counted once
    // both have stopped (SIGTERM: serve writes what it has recorded, which it batches for a few ms, then exits).
    await Promise.all([on.server.stop(), off.server.stop()]);
    const { readUsage } = await import(new URL('../../lib/usage/store.js', import.meta.url).href);
    const recorded = (data) => readUsage(data).reduce((sum, row) => sum + row.count, 0);
    const sent = runsOf.on.reduce((sum, r) => sum + r.requests, 0);
    const recordedOn = recorded(on.data);
    const recordedOff = recorded(off.data);
    if (recordedOn < sent) throw new Error(`serve-usage: usage on recorded ${recordedOn} downloads of the ${sent} or more it sent`);
    if (recordedOff !== 0) throw new Error(`serve-usage: usage off recorded ${recordedOff} downloads: the switch did not take`);

    const rps = { on: median(runsOf.on.map((r) => r.rps)), off: median(runsOf.off.map((r) => r.rps)) };
    const cpu = { on: median(runsOf.on.map(cpuPerRequest)), off: median(runsOf.off.map(cpuPerRequest)) };
    // The cost of a download at full load: the inverse of the throughput, in µs of the server's time.
    const cost = { on: 1e6 / rps.on, off: 1e6 / rps.off };
    log(
      `serve-usage: usage on ${Math.round(rps.on)} req/s (${cpu.on.toFixed(0)} µs CPU each, ${recordedOn} downloads recorded), off ${Math.round(rps.off)} req/s (${cpu.off.toFixed(0)} µs CPU each)`,
    );
    const runsDetail = (pick) => ({ on: runsOf.on.map(pick), off: runsOf.off.map(pick) });
    return [
      {
        name: `usage recording on vs off: GET a module archive by signed URL (private): µs per download (1 / throughput, autocannon, ${CONNECTIONS} conn)`,
        modmirror: cost.on,
        baseline: cost.off,
        ratio: cost.on / cost.off,
        target: `≤ ${USAGE_TARGET}× usage off`,
        unit: 'µs',
        pass: cost.on / cost.off <= USAGE_TARGET,
        detail: {
          path: new URL(targets[0][2], on.server.url).pathname,
          servers: `serve --access private --usage-max-mib ${USAGE_MAX_MIB} from lib/ (bench/serve/roles.mjs serve), usage=on and usage=off (UsageLog.record made a no-op)`,
          seconds,
          recorded: { on: recordedOn, off: recordedOff },
          runs: runsDetail((r) => Math.round(r.rps)),
        },
      },
      {
        name: '  ↳ throughput, usage on vs off',
        modmirror: rps.on / 1000,
        baseline: rps.off / 1000,
        ratio: rps.on / rps.off,
        target: null,
        unit: 'k req/s',
      },
      {
        name: '  ↳ server CPU per request (µs), usage on vs off',
        modmirror: cpu.on,
        baseline: cpu.off,
        ratio: cpu.on / cpu.off,
        target: null,
        unit: 'µs',
        detail: { runs: runsDetail(cpuPerRequest) },
      },
    ];
  } finally {
    stopLoader();
    await Promise.all(servers.map((s) => s.stop()));
    removeTempDir(tmp);
  }
}
