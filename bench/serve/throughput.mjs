// Benchmark serve: `modmirror serve` under load, against the ceiling for a
// Node server (a bare `http` server answering the same bytes from memory) and,
// for the endpoints that are plain files, plain sirv over the same dist/.
//
// The mirror (mirrors.mjs) is 10,000 small modules with one version each,
// plus one module with many versions so its `versions` file is large. The
// server's data folder (data-folder.mjs) is the sample one grown to 200
// organizations, for the management API rows (/api/v2, with the sample tokens).
//
// The metrics rows load the same registry requests on two more servers run
// from lib/ (roles.mjs `serve`), one with its metrics recording switched off
// (serve has no switch: the role makes it a no-op), for what collecting the
// metrics costs: on against off, not against the ceiling.
//
// Every server and the load generator (autocannon) run in processes of their
// own (processes.mjs, roles.mjs), so the generator never shares the server's
// thread.

import { readFileSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { log, makeTempDir, median, procMemoryMB, removeTempDir } from '../util.mjs';
import { ADMIN_TOKEN, prepareDataDir, USER_TOKEN } from './data-folder.mjs';
import { generateMirror, SEARCH_WORD } from './mirrors.mjs';
import { get, load, ROLES, runTracked, startProcess, stopLoader } from './processes.mjs';
import { API_TARGET, CLI, CONNECTIONS, DYNAMIC_TARGET, FILE_TARGET, HOST, METRICS_TARGET, P99_TARGET_MS, RSS_TARGET_MB } from './settings.mjs';

const require = createRequire(import.meta.url);

/** Keys of the management API endpoints, for benchServe({ endpoints }). */
export const MANAGEMENT_ENDPOINTS = ['adminOrganizations', 'accountDetails'];
/** Keys of the rows against `serve --access private` (a second server over the same mirror and data), for benchServe({ endpoints }). */
export const PRIVATE_ENDPOINTS = ['privateVersions', 'privateDetail', 'privateList0', 'privateSearch'];
/** Keys of the rows against serve with metrics on and off (two more servers, run from lib/), for benchServe({ endpoints }). */
export const METRICS_ENDPOINTS = ['metricsVersions', 'metricsDetail', 'metricsList0', 'metricsSearch'];

/**
 * @param {{ quick?: boolean, runs?: number, endpoints?: string[] }} options  `endpoints`: keys of the endpoints to load (default all)
 * @returns {Promise<{ name: string, modmirror: number | null, baseline: number | null, ratio: number | null, target: string | null, unit: string, pass?: boolean, detail?: object }[]>}
 */
export async function benchServe({ quick = false, runs, endpoints: only } = {}) {
  // Quick keeps `npm run bench -- --quick` under a minute: a short warm-up and one short run per server and
  // endpoint, no plain-sirv comparison, a smaller mirror.
  runs ??= quick ? 1 : 3;
  const seconds = quick ? 1 : 5;
  const warmUpSeconds = quick ? 0.3 : seconds;
  // The management API does not read the mirror: with only its endpoints selected, the small mirror does.
  const apiOnly = only !== undefined && only.every((k) => MANAGEMENT_ENDPOINTS.includes(k));
  const shape = quick ? { modules: 150, bigVersions: 50 } : apiOnly ? { modules: 1000, bigVersions: 50 } : { modules: 10000, bigVersions: 200 };
  const autocannonVersion = require('autocannon/package.json').version;
  const tmp = makeTempDir();
  const servers = [];
  try {
    // 1. generate and build; the data folder
    log(`serve: generating ${shape.modules.toLocaleString('en-US')} modules + 1 × ${shape.bigVersions} versions in ${tmp}`);
    let started = performance.now();
    const mirror = await generateMirror(join(tmp, 'modules'), shape);
    const data = await prepareDataDir(join(tmp, 'data'));
    log(`serve: generated in ${((performance.now() - started) / 1000).toFixed(1)} s (data folder: ${data.organizations} organizations); building`);
    const out = join(tmp, 'dist');
    started = performance.now();
    // cwd: the build's cache (.modmirror-cache in the working folder with --modules) stays in tmp, so every run builds from scratch.
    const buildOut = await runTracked([CLI, 'build', '--modules', join(tmp, 'modules'), '--out', out, '--json'], { cwd: tmp });
    const build = { seconds: (performance.now() - started) / 1000 };
    const summary = JSON.parse(buildOut.trim().split('\n').pop());
    if (summary.errors?.length > 0 || summary.versions !== mirror.totalVersions) {
      throw new Error(`serve: modmirror built ${summary.versions} of ${mirror.totalVersions} versions: ${JSON.stringify(summary.errors?.slice(0, 3))}`);
    }
    log(`serve: built ${summary.versions} versions in ${build.seconds.toFixed(1)} s`);

    const { big } = mirror;
    const probe = mirror.list[Math.floor(mirror.list.length / 2)];
    const bigKey = `${big.ns}/${big.name}/${big.provider}`;
    const probeKey = `${probe.ns}/${probe.name}/${probe.provider}`;
    const versionsBytes = statSync(join(out, 'v1/modules', bigKey, 'versions')).size;
    const lastOffset = mirror.totalModules - 21; // 9980 of 10,001; 980 of 1,001
    const endpoints = [
      {
        key: 'versions',
        label: `versions (1 module × ${big.versions.length}, ${(versionsBytes / 1024).toFixed(1)} KB)`,
        path: `/v1/modules/${bigKey}/versions`,
        file: `v1/modules/${bigKey}/versions`,
        target: FILE_TARGET,
      },
      { key: 'detail', label: 'detail document', path: `/v1/modules/${probeKey}/1.0.0`, file: `v1/modules/${probeKey}/1.0.0/index.json`, target: FILE_TARGET },
      { key: 'list0', label: 'list offset=0 limit=15', path: '/v1/modules?offset=0&limit=15', target: DYNAMIC_TARGET, p99: true },
      { key: 'listN', label: `list offset=${lastOffset} limit=15`, path: `/v1/modules?offset=${lastOffset}&limit=15`, target: DYNAMIC_TARGET, p99: true },
      {
        key: 'search',
        label: `search q=${SEARCH_WORD} (${mirror.searchHits.toLocaleString('en-US')} hits)`,
        path: `/v1/modules/search?q=${SEARCH_WORD}`,
        target: DYNAMIC_TARGET,
        p99: true,
      },
      // Management API: the same Authorization header goes to the ceiling (which ignores it) as to modmirror.
      {
        key: 'adminOrganizations',
        label: `/api/v2/admin/organizations (${data.organizations} orgs, page of 20)`,
        path: '/api/v2/admin/organizations',
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
        target: API_TARGET,
        check: (doc) => doc.data?.length === 20 && doc.meta?.pagination?.['total-count'] === data.organizations,
      },
      {
        key: 'accountDetails',
        label: '/api/v2/account/details',
        path: '/api/v2/account/details',
        headers: { Authorization: `Bearer ${USER_TOKEN}` },
        target: API_TARGET,
        check: (doc) => doc.data?.attributes?.username === 'alice',
      },
    ];
    // Private mode: the same requests with a site administrator's token (who reads every module, so the answers are
    // the public ones, byte for byte), through the token lookup, the per-caller view and the per-caller caches.
    for (const key of ['versions', 'detail', 'list0', 'search']) {
      const e = endpoints.find((x) => x.key === key);
      endpoints.push({
        ...e,
        key: `private${key[0].toUpperCase()}${key.slice(1)}`,
        label: `private: ${e.label}`,
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
        private: true,
      });
    }
    // Metrics: the same public requests to serve with its metrics on, and off.
    for (const key of ['versions', 'detail', 'list0', 'search']) {
      const e = endpoints.find((x) => x.key === key);
      endpoints.push({ ...e, key: `metrics${key[0].toUpperCase()}${key.slice(1)}`, baseLabel: e.label, label: `metrics on: ${e.label}`, metrics: true });
    }
    endpoints.splice(0, endpoints.length, ...endpoints.filter((e) => only === undefined || only.includes(e.key)));
    if (endpoints.length === 0) throw new Error(`serve: no endpoint named ${only.join(', ')}`);

    // 2. the servers: modmirror, then the ceiling with the same bytes, then plain sirv
    const mm = await startProcess([CLI, 'serve', '--dir', out, '--host', HOST, '--port', '0', '--quiet', '--data', join(tmp, 'data')], 'modmirror serve');
    servers.push(mm);
    const idle = procMemoryMB(mm.pid);
    const mmPrivate = endpoints.some((e) => e.private)
      ? await startProcess(
          [CLI, 'serve', '--dir', out, '--host', HOST, '--port', '0', '--quiet', '--data', join(tmp, 'data'), '--access', 'private'],
          'modmirror serve --access private',
        )
      : undefined;
    if (mmPrivate) servers.push(mmPrivate);
    // The metrics rows: serve as the CLI runs it, from lib/, with its metrics recording on and off (roles.mjs).
    const libServe = (metrics) =>
      startProcess(
        [ROLES, 'serve', `metrics=${metrics}`, '--', '--dir', out, '--host', HOST, '--port', '0', '--quiet', '--data', join(tmp, 'data')],
        `modmirror serve (lib/, metrics ${metrics})`,
      );
    const metricsOn = endpoints.some((e) => e.metrics) ? await libServe('on') : undefined;
    if (metricsOn) servers.push(metricsOn);
    const metricsOff = metricsOn ? await libServe('off') : undefined;
    if (metricsOff) servers.push(metricsOff);
    const serverOf = (e) => (e.private ? mmPrivate : e.metrics ? metricsOn : mm);
    const routes = {};
    for (const e of endpoints) {
      const res = await get(serverOf(e).url + e.path, { headers: e.headers });
      if (res.status !== 200) throw new Error(`serve: ${e.path} answered ${res.status}: ${res.body.toString('utf8').slice(0, 200)}`);
      e.bytes = res.body.length;
      e.type = res.headers['content-type'];
      const bodyFile = join(tmp, `body-${e.key}`);
      await writeFile(bodyFile, res.body);
      routes[e.path] = { file: bodyFile, type: e.type };
      if (e.file && !res.body.equals(readFileSync(join(out, e.file)))) throw new Error(`serve: ${e.path} is not the bytes of ${e.file}`);
      if (e.key === 'search') {
        const doc = JSON.parse(res.body.toString('utf8'));
        if (doc.modules.length === 0) throw new Error(`serve: search q=${SEARCH_WORD} found nothing`);
      }
      if (e.check && !e.check(JSON.parse(res.body.toString('utf8'))))
        throw new Error(`serve: ${e.path} answered an unexpected document: ${res.body.toString('utf8').slice(0, 300)}`);
      if (e.metrics) {
        const off = await get(metricsOff.url + e.path);
        if (off.status !== 200 || !off.body.equals(res.body)) throw new Error(`serve: with metrics off, ${e.path} answered ${off.status} and other bytes`);
      }
    }
    if (metricsOn) await checkMetricsSwitch(metricsOn, metricsOff);
    await writeFile(join(tmp, 'routes.json'), JSON.stringify(routes));
    const ceiling = await startProcess([ROLES, 'ceiling', join(tmp, 'routes.json')], 'ceiling server');
    servers.push(ceiling);
    const plain = await startProcess([ROLES, 'sirv', out], 'sirv server');
    servers.push(plain);
    for (const e of endpoints) {
      const c = await get(ceiling.url + e.path, { headers: e.headers });
      if (c.status !== 200 || c.body.length !== e.bytes) throw new Error(`serve: ceiling answered ${c.status} for ${e.path}`);
      if (e.file) {
        const s = await get(`${plain.url}/${e.file}`);
        if (s.status !== 200 || s.body.length !== e.bytes) throw new Error(`serve: sirv answered ${s.status} (${s.body.length} bytes) for /${e.file}`);
      }
    }
    const how = `autocannon ${autocannonVersion}, ${CONNECTIONS} connections, own process; a ${warmUpSeconds} s warm-up + ${runs} × ${seconds} s per server and endpoint${quick ? ' (quick: no plain sirv)' : ''}`;
    log(`serve: servers up (modmirror ${mm.url}, ceiling ${ceiling.url}, sirv ${plain.url}); load: ${how}`);

    // 3. load: per endpoint, a warm-up of each server, then runs alternating the servers
    const rows = [
      {
        name: `serve: build mirror (${mirror.totalModules.toLocaleString('en-US')} modules, ${mirror.totalVersions.toLocaleString('en-US')} versions)`,
        modmirror: build.seconds,
        baseline: null,
        ratio: null,
        target: null,
        unit: 's',
        detail: { modules: mirror.totalModules, versions: mirror.totalVersions, reportedSeconds: summary.seconds },
      },
    ];
    started = performance.now();
    for (const e of endpoints) {
      const targets = e.metrics
        ? [
            ['on', metricsOn, e.path],
            ['off', metricsOff, e.path],
          ]
        : [['modmirror', serverOf(e), e.path], ['ceiling', ceiling, e.path], ...(e.file && !quick ? [['sirv', plain, `/${e.file}`]] : [])];
      const results = Object.fromEntries(targets.map(([who]) => [who, []]));
      // A 5% target between two servers: more rounds than the rows against the ceiling.
      const rounds = e.metrics ? Math.max(runs, quick ? 1 : METRICS_RUNS) : runs;
      for (const [, server, path] of targets) await load(server, path, warmUpSeconds, e.headers);
      for (let i = 0; i < rounds; i++) {
        const order = i % 2 === 0 ? targets : [...targets].reverse();
        for (const [who, server, path] of order) results[who].push(await load(server, path, seconds, e.headers));
      }
      if (e.metrics) {
        rows.push(...metricsRows(e, results, { how: `${how}; ${rounds} runs each, on and off alternating`, seconds }));
        continue;
      }
      const med = (who, field) => (results[who] ? median(results[who].map((x) => x[field])) : null);
      const rps = { modmirror: med('modmirror', 'rps'), ceiling: med('ceiling', 'rps'), sirv: med('sirv', 'rps') };
      const p99 = { modmirror: med('modmirror', 'p99'), ceiling: med('ceiling', 'p99'), sirv: med('sirv', 'p99') };
      const cpu = (who) => (results[who] ? { server: med(who, 'serverCpu'), loadGenerator: med(who, 'loadCpu') } : null);
      const detail = {
        path: e.path,
        ...(e.headers ? { headers: Object.keys(e.headers) } : {}),
        bytes: e.bytes,
        contentType: e.type,
        loadGenerator: how,
        rps,
        p99Ms: p99,
        p50Ms: { modmirror: med('modmirror', 'p50'), ceiling: med('ceiling', 'p50'), sirv: med('sirv', 'p50') },
        cpuPerSecond: { modmirror: cpu('modmirror'), ceiling: cpu('ceiling'), sirv: cpu('sirv') },
        runs: Object.fromEntries(Object.entries(results).map(([who, list]) => [who, list.map((x) => Math.round(x.rps))])),
      };
      log(
        `serve: ${e.label}: modmirror ${Math.round(rps.modmirror)} req/s p99 ${p99.modmirror.toFixed(2)} ms (cpu ${fmtCpu(detail.cpuPerSecond.modmirror)}), ceiling ${Math.round(rps.ceiling)} req/s p99 ${p99.ceiling.toFixed(2)} ms (cpu ${fmtCpu(detail.cpuPerSecond.ceiling)})` +
          (rps.sirv === null ? '' : `, sirv ${Math.round(rps.sirv)} req/s p99 ${p99.sirv.toFixed(2)} ms (cpu ${fmtCpu(detail.cpuPerSecond.sirv)})`),
      );
      const ratio = rps.modmirror / rps.ceiling;
      rows.push({
        name: `GET ${e.label}: k req/s (autocannon, ${CONNECTIONS} conn)`,
        modmirror: rps.modmirror / 1000,
        baseline: rps.ceiling / 1000,
        ratio,
        target: `≥ ${e.target}× ceiling`,
        unit: 'k req/s',
        pass: ratio >= e.target,
        detail,
      });
      rows.push({
        name: `  ↳ plain sirv (not modmirror) vs ceiling`,
        modmirror: rps.sirv === null ? null : rps.sirv / 1000,
        baseline: rps.sirv === null ? null : rps.ceiling / 1000,
        ratio: rps.sirv === null ? null : rps.sirv / rps.ceiling,
        target: null,
        unit: 'k req/s',
        detail: {
          note: !e.file
            ? 'no static file for this endpoint'
            : quick
              ? 'not measured in a quick run'
              : `sirv(dist, { etag: true, dev: false }) serving /${e.file}`,
        },
      });
      rows.push({
        name: `  ↳ p99 latency`,
        modmirror: p99.modmirror,
        baseline: p99.ceiling,
        ratio: p99.ceiling > 0 ? p99.modmirror / p99.ceiling : null,
        target: e.p99 ? `≤ ${P99_TARGET_MS} ms` : null,
        unit: 'ms',
        ...(e.p99 ? { pass: p99.modmirror <= P99_TARGET_MS } : {}),
        detail: { p99Ms: p99, note: 'p99 of every response time as autocannon measured it (sub-millisecond), in the load process' },
      });
    }
    log(`serve: load done in ${((performance.now() - started) / 1000).toFixed(0)} s`);

    // 4. memory of the serve process after all that load; the ceiling's for scale
    const after = procMemoryMB(mm.pid);
    const ceilingMem = procMemoryMB(ceiling.pid);
    rows.push({
      name: `serve RSS after load (VmRSS; ${mirror.totalModules.toLocaleString('en-US')} modules × 1 version)`,
      modmirror: after.rss,
      baseline: ceilingMem.rss,
      ratio: null,
      target: null,
      unit: 'MB',
      detail: {
        modmirror: { idleRssMB: idle.rss, rssMB: after.rss, peakRssMB: after.hwm },
        ceiling: { rssMB: ceilingMem.rss, peakRssMB: ceilingMem.hwm },
        note: `the target is ≤ ${RSS_TARGET_MB} MB at 10k modules × 10 versions (benchmark serve-memory); this mirror has 1 version per module (plus one with ${big.versions.length}), so this is info only`,
      },
    });
    const metricsHow = metricsOn ? `; metrics on vs off: ${Math.max(runs, quick ? 1 : METRICS_RUNS)} × ${seconds} s each` : '';
    rows.push({ name: `load: ${how}${metricsHow}`, modmirror: null, baseline: null, ratio: null, target: null, unit: '' });
    return rows;
  } finally {
    stopLoader();
    await Promise.all(servers.map((s) => s.stop()));
    removeTempDir(tmp);
  }
}

const METRICS_RUNS = 5;

/** /metrics of the server with metrics on counts the requests made so far; with them off, none: the switch took. */
async function checkMetricsSwitch(on, off) {
  const counted = (text) => /^modmirror_http_requests_total\{/m.test(text);
  const [textOn, textOff] = await Promise.all([get(`${on.url}/metrics`), get(`${off.url}/metrics`)]).then((all) => all.map((r) => r.body.toString('utf8')));
  if (!counted(textOn)) throw new Error(`serve: /metrics of the server with metrics on counted no request: ${textOn.slice(0, 300)}`);
  if (counted(textOff)) throw new Error('serve: /metrics of the server with metrics off counted requests: the switch did not take');
}

/** The row of one request with metrics on against off (throughput), and the server's CPU time per request. */
function metricsRows(e, results, { how, seconds }) {
  const med = (who, pick) => median(results[who].map(pick));
  const rps = { on: med('on', (x) => x.rps), off: med('off', (x) => x.rps) };
  const cpu = (x) => (x.serverCpu === null ? NaN : (x.serverCpu / x.rps) * 1e6);
  const cpuPerRequest = { on: med('on', cpu), off: med('off', cpu) };
  const ratio = rps.on / rps.off;
  log(
    `serve: metrics on vs off, ${e.baseLabel}: on ${Math.round(rps.on)} req/s (${cpuPerRequest.on.toFixed(0)} µs CPU each), off ${Math.round(rps.off)} req/s (${cpuPerRequest.off.toFixed(0)} µs CPU each)`,
  );
  return [
    {
      name: `metrics on vs off: GET ${e.baseLabel}: k req/s (autocannon, ${CONNECTIONS} conn)`,
      modmirror: rps.on / 1000,
      baseline: rps.off / 1000,
      ratio,
      target: `≥ ${METRICS_TARGET}× metrics off`,
      unit: 'k req/s',
      pass: ratio >= METRICS_TARGET,
      detail: {
        path: e.path,
        bytes: e.bytes,
        servers: 'modmirror serve from lib/ (bench/serve/roles.mjs serve), metrics=on and metrics=off (ServeMetrics recording made a no-op)',
        loadGenerator: how,
        seconds,
        rps,
        p99Ms: { on: med('on', (x) => x.p99), off: med('off', (x) => x.p99) },
        runs: { on: results.on.map((x) => Math.round(x.rps)), off: results.off.map((x) => Math.round(x.rps)) },
      },
    },
    {
      name: '  ↳ server CPU per request (µs), metrics on vs off',
      modmirror: cpuPerRequest.on,
      baseline: cpuPerRequest.off,
      ratio: cpuPerRequest.on / cpuPerRequest.off,
      target: null,
      unit: 'µs',
      detail: { runs: { on: results.on.map(cpu), off: results.off.map(cpu) } },
    },
  ];
}

function fmtCpu(c) {
  if (!c) return '?';
  const pct = (x) => (x === null ? '?' : `${Math.round(x * 100)}%`);
  return `server ${pct(c.server)}, generator ${pct(c.loadGenerator)}`;
}
