// Benchmark serve-signed: what `serve --access private` pays to fetch a
// module archive by its signed URL (signature, then the issuing token and its
// organizations as they are now), against the same archive from
// `serve` in public mode, measured in the same run over the same mirror. The
// ratio is the price of the checks; compare it between two commits. The
// server's CPU time per request is reported too: on a shared machine it moves
// less than throughput does.

import { join } from 'node:path';
import { log, makeTempDir, median, removeTempDir } from '../util.mjs';
import { ADMIN_TOKEN, prepareDataDir } from './data-folder.mjs';
import { generateMirror } from './mirrors.mjs';
import { get, load, runTracked, startProcess, stopLoader } from './processes.mjs';
import { CLI, CONNECTIONS, HOST } from './settings.mjs';

/** @param {{ quick?: boolean, runs?: number }} options */
export async function benchSignedArchive({ quick = false, runs } = {}) {
  runs ??= quick ? 1 : 5;
  const seconds = quick ? 1 : 5;
  const tmp = makeTempDir();
  const servers = [];
  try {
    const mirror = await generateMirror(join(tmp, 'modules'), { modules: 150, bigVersions: 5 });
    await prepareDataDir(join(tmp, 'data'));
    await runTracked([CLI, 'build', '--modules', join(tmp, 'modules'), '--out', join(tmp, 'dist'), '--json'], { cwd: tmp });
    const serve = (access) =>
      startProcess(
        [CLI, 'serve', '--dir', join(tmp, 'dist'), '--host', HOST, '--port', '0', '--quiet', '--data', join(tmp, 'data'), '--access', access],
        `serve --access ${access}`,
      );
    const open = await serve('public');
    servers.push(open);
    const closed = await serve('private');
    servers.push(closed);

    const { big } = mirror;
    const download = `/v1/modules/${big.ns}/${big.name}/${big.provider}/${big.versions[0]}/download`;
    const answer = await get(closed.url + download, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    if (answer.status !== 200) throw new Error(`serve-signed: ${download} answered ${answer.status}: ${answer.body.toString('utf8')}`);
    const signed = new URL(JSON.parse(answer.body.toString('utf8')).location, closed.url + download);
    const plain = new URL(signed.pathname, open.url).pathname;
    for (const [server, path] of [
      [open, plain],
      [closed, signed.pathname + signed.search],
    ]) {
      const res = await get(server.url + path);
      if (res.status !== 200) throw new Error(`serve-signed: ${path} answered ${res.status}`);
    }
    const targets = [
      ['public', open, plain],
      ['signed', closed, signed.pathname + signed.search],
    ];
    for (const [, server, path] of targets) await load(server, path, quick ? 0.3 : 2);
    const results = { public: [], signed: [] };
    const cpu = { public: [], signed: [] };
    for (let i = 0; i < runs; i++) {
      for (const [who, server, path] of i % 2 === 0 ? targets : [...targets].reverse()) {
        const run = await load(server, path, seconds);
        results[who].push(run.rps);
        if (run.serverCpu !== null) cpu[who].push((run.serverCpu / run.rps) * 1e6);
      }
    }
    const rps = { public: median(results.public), signed: median(results.signed) };
    const cpuPerRequest = { public: median(cpu.public), signed: median(cpu.signed) };
    log(
      `serve-signed: public ${Math.round(rps.public)} req/s (${cpuPerRequest.public.toFixed(0)} µs CPU each), signed ${Math.round(rps.signed)} req/s (${cpuPerRequest.signed.toFixed(0)} µs CPU each)`,
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
        modmirror: cpuPerRequest.signed,
        baseline: cpuPerRequest.public,
        ratio: cpuPerRequest.signed / cpuPerRequest.public,
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
