// Benchmark serve-memory: the server's resident memory with 10,000 modules ×
// 10 versions loaded and requested, and the build's peak memory on the way.

import { writeFile } from 'node:fs/promises';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { log, makeTempDir, mapLimited, procMemoryMB, removeTempDir, runWithPeakRss } from '../util.mjs';
import { generateVersionedMirror, NAMESPACES, PROVIDERS, VOCAB } from './mirrors.mjs';
import { get, ROLES, startProcess } from './processes.mjs';
import { BUILD_100K_PEAK_TARGET_MB, BUILD_PEAK_TARGET_MB, CLI, HOST, REGISTRY_RSS_TARGET_MB, RSS_TARGET_MB } from './settings.mjs';

/**
 * Builds modules × 10 versions with the CLI (timing it and taking its peak
 * RSS), starts `modmirror serve` on it, requests every module's `versions`
 * and latest detail once plus listings and searches, and reads the server's
 * VmRSS and VmHWM. Full: 10,000 modules (100,000 versions); quick: 30.
 * @param {{ quick?: boolean }} options
 */
export async function benchServeMemory({ quick = false } = {}) {
  // MODMIRROR_BENCH_SERVE_MODULES=40000: the size of a whole public registry (400,000 versions), held to its own targets.
  const modules = quick ? 30 : Number(process.env['MODMIRROR_BENCH_SERVE_MODULES'] ?? 10000);
  const shape = { modules, versions: 10 };
  const registrySize = modules * shape.versions > 100000;
  const buildTarget = registrySize ? BUILD_PEAK_TARGET_MB : BUILD_100K_PEAK_TARGET_MB;
  const rssTarget = registrySize ? REGISTRY_RSS_TARGET_MB : RSS_TARGET_MB;
  const tmp = makeTempDir();
  const servers = [];
  try {
    log(`serve-memory: generating ${shape.modules.toLocaleString('en-US')} modules × ${shape.versions} versions (one main.tf each) in ${tmp}`);
    let started = performance.now();
    const mirror = await generateVersionedMirror(join(tmp, 'modules'), shape);
    log(`serve-memory: generated in ${((performance.now() - started) / 1000).toFixed(1)} s; building`);
    const out = join(tmp, 'dist');
    const build = await runWithPeakRss(process.execPath, [CLI, 'build', '--modules', join(tmp, 'modules'), '--out', out, '--json'], { cwd: tmp });
    const summary = JSON.parse(build.stdout.toString('utf8').trim().split('\n').pop());
    if (summary.errors?.length > 0 || summary.versions !== mirror.versions) {
      throw new Error(`serve-memory: modmirror built ${summary.versions} of ${mirror.versions} versions: ${JSON.stringify(summary.errors?.slice(0, 3))}`);
    }
    log(
      `serve-memory: built ${summary.versions.toLocaleString('en-US')} versions in ${build.seconds.toFixed(1)} s, build peak RSS ${build.peakMB.toFixed(0)} MB`,
    );

    const mm = await startProcess([CLI, 'serve', '--dir', out, '--host', HOST, '--port', '0', '--quiet', '--data', join(tmp, 'data')], 'modmirror serve');
    servers.push(mm);
    await writeFile(join(tmp, 'no-routes.json'), '{}');
    const bare = await startProcess([ROLES, 'ceiling', join(tmp, 'no-routes.json')], 'bare http server');
    servers.push(bare);
    await new Promise((done) => setTimeout(done, 500)); // let start-up settle before the idle reading
    const idle = procMemoryMB(mm.pid);

    // Every module's versions and latest detail once, then listings across the whole index and searches.
    const paths = mirror.list.flatMap((m) => [`/v1/modules/${m.key}/versions`, `/v1/modules/${m.key}`]);
    const total = mirror.list.length;
    for (let k = 0; k < 20; k++) paths.push(`/v1/modules?offset=${Math.floor((k * total) / 20)}&limit=15`);
    for (const ns of NAMESPACES) paths.push(`/v1/modules/${ns}?limit=50`);
    for (const [prov] of PROVIDERS) paths.push(`/v1/modules?provider=${prov}&offset=${Math.floor(total / 6)}`);
    for (const word of VOCAB) paths.push(`/v1/modules/search?q=${word}`, `/v1/modules/search?q=${word}&limit=100&offset=15`);
    paths.push('/v1/modules/search?q=network+stack', '/v1/modules/search?q=cluster&provider=aws');
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    started = performance.now();
    let bytes = 0;
    const latest = mirror.list[0];
    await mapLimited(paths, 8, async (path) => {
      const res = await get(mm.url + path, { agent });
      if (res.status !== 200) throw new Error(`serve-memory: ${path} answered ${res.status}: ${res.body.toString('utf8').slice(0, 200)}`);
      bytes += res.body.length;
      if (path === `/v1/modules/${latest.key}` && JSON.parse(res.body.toString('utf8')).version !== mirror.latest) {
        throw new Error(`serve-memory: ${path} is not version ${mirror.latest}`);
      }
    });
    agent.destroy();
    const requestSeconds = (performance.now() - started) / 1000;
    const after = procMemoryMB(mm.pid);
    const bareMem = procMemoryMB(bare.pid);
    log(
      `serve-memory: ${paths.length.toLocaleString('en-US')} requests (${(bytes / 1e6).toFixed(1)} MB) in ${requestSeconds.toFixed(1)} s; ` +
        `modmirror VmRSS ${after.rss.toFixed(0)} MB, VmHWM ${after.hwm.toFixed(0)} MB (idle ${idle.rss.toFixed(0)} MB); bare node ${bareMem.rss.toFixed(0)} MB`,
    );
    const loaded = `${shape.modules.toLocaleString('en-US')} modules × ${shape.versions} versions`;
    const detail = {
      modules: shape.modules,
      versions: mirror.versions,
      moduleShape: 'one main.tf (~1.1 KB: a resource, 4 variables, 2 outputs), no README: tiny, to keep the 100,000-version build short',
      requests: paths.length,
      responseBytes: bytes,
      requestSeconds,
      modmirror: { idleRssMB: idle.rss, idlePeakMB: idle.hwm, rssMB: after.rss, peakRssMB: after.hwm },
      bareNode: { rssMB: bareMem.rss, peakRssMB: bareMem.hwm, note: 'node:http server answering 404 (the ceiling role with no routes)' },
      note: 'documents are cached in memory up to a byte budget, so larger documents than these would raise RSS up to that bound',
    };
    return [
      {
        name: `serve-memory: build mirror (${loaded}, one main.tf each)`,
        modmirror: build.seconds,
        baseline: null,
        ratio: null,
        target: null,
        unit: 's',
        detail: { versions: mirror.versions, reportedSeconds: summary.seconds },
      },
      {
        name: `  ↳ build peak RSS (${mirror.versions.toLocaleString('en-US')} versions, folder layout)`,
        modmirror: build.peakMB,
        baseline: null,
        ratio: null,
        target: `≤ ${buildTarget} MB`,
        unit: 'MB',
        pass: build.peakMB <= buildTarget,
        detail: { measuredWith: build.method },
      },
      {
        name: `serve RSS idle, ${loaded} loaded (VmRSS; baseline bare node http)`,
        modmirror: idle.rss,
        baseline: bareMem.rss,
        ratio: idle.rss / bareMem.rss,
        target: null,
        unit: 'MB',
        detail,
      },
      {
        name: `serve RSS after every versions + latest detail once, ${paths.length - 2 * total} listings/searches (VmRSS)`,
        modmirror: after.rss,
        baseline: bareMem.rss,
        ratio: after.rss / bareMem.rss,
        target: `≤ ${rssTarget} MB`,
        unit: 'MB',
        pass: after.rss <= rssTarget,
        detail,
      },
      {
        name: `  ↳ serve peak RSS (VmHWM)`,
        modmirror: after.hwm,
        baseline: bareMem.hwm,
        ratio: after.hwm / bareMem.hwm,
        target: `≤ ${rssTarget} MB`,
        unit: 'MB',
        pass: after.hwm <= rssTarget,
        detail,
      },
    ];
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    removeTempDir(tmp);
  }
}
