// serve --upstream: what `terraform init` pays for going through a cache.
// The upstream is a `modmirror serve` over HTTPS of a generated registry
// (8 modules of 3 versions, each calling a shared one); the cache a second
// `modmirror serve --upstream` of it, started empty. Real terraform inits
// one configuration calling the 8 modules, each in a new folder:
//
// - through an empty cache (every version fetched from the upstream, then
//   published) against straight from the upstream, in the same run, by turns;
// - again through the now warm cache, in a new folder, against the same;
// - through a pass-through HTTPS proxy in front of the upstream that stores
//   nothing: what the extra hop alone costs, the floor of any cache that
//   fetches on first use (info);
// - 20 inits at once against a new empty cache: the upstream's request log
//   counts what it was asked; each version's download document and archive
//   must be asked for exactly once, however many inits want it.
//
// Needs terraform and openssl on PATH; skipped without terraform.

import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { log, makeTempDir, median, removeTempDir, runCommand } from './util.mjs';
import { onLines } from './serve/processes.mjs';

const CLI = fileURLToPath(new URL('../bin/modmirror.js', import.meta.url));
const MODULES = 8;
const VERSIONS = ['1.0.0', '1.1.0', '2.0.0'];
const PARALLEL = 20;

/** A module version's files: a few hundred lines of variables and outputs, and a call to the shared module. */
function moduleFiles(name, version) {
  const variables = Array.from(
    { length: 60 },
    (_, i) => `variable "${name}_${i}" {\n  type    = string\n  default = "${version}-${i}"\n  description = "Setting ${i} of ${name}."\n}\n`,
  ).join('\n');
  const outputs = Array.from({ length: 30 }, (_, i) => `output "${name}_${i}" {\n  value = var.${name}_${i}\n}\n`).join('\n');
  const call = name === 'common' ? '' : 'module "common" {\n  source  = "acme/common/aws"\n  version = "~> 1.0"\n}\n';
  return { 'main.tf': `${call}${variables}`, 'outputs.tf': outputs, 'README.md': `# ${name} ${version}\n\n${'A module of the benchmark. '.repeat(200)}\n` };
}

function writeTree(root, files) {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
}

function certificates(dir) {
  const openssl = (args) => {
    const r = spawnSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    if (r.status !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr}`);
  };
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=bench CA', '-keyout', 'ca.key', '-out', 'ca.pem']);
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', 'server.key', '-out', 'server.csr']);
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1\n');
  openssl([
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    'san.ext',
    '-out',
    'server.pem',
  ]);
  return { ca: join(dir, 'ca.pem'), cert: join(dir, 'server.pem'), key: join(dir, 'server.key') };
}

/** `modmirror serve ARGS` in `cwd`; resolves once it listens, with its URL and every request line it logged since. */
function serve(args, cwd, label) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'serve', '--host', '127.0.0.1', '--port', '0', ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const requests = [];
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (c) => (err += c));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${label} did not start in 60 s: ${err.trim()}`));
    }, 60_000);
    onLines(child.stdout, (line) => {
      const url = / at (https:\/\/127\.0\.0\.1:\d+\/)/.exec(line)?.[1];
      if (url) {
        clearTimeout(timer);
        resolve({ url, requests, stop: () => stop(child) });
      }
      const request = /^GET (\S+) (\d{3}) /.exec(line);
      if (request) requests.push({ path: request[1], status: Number(request[2]) });
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited (${signal ?? `exit ${code}`}): ${err.trim()}`));
    });
  });
}

function stop(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.removeAllListeners('exit');
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** An HTTPS proxy in front of `upstream` that forwards each request as it is, over kept-alive connections, and stores nothing. */
async function passThrough(upstream, certs) {
  const target = new URL(upstream);
  const agent = new https.Agent({ keepAlive: true, ca: readFileSync(certs.ca) });
  const server = https.createServer({ cert: readFileSync(certs.cert), key: readFileSync(certs.key) }, (req, res) => {
    const out = https.request(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: { ...req.headers, host: target.host }, agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.writeHead(502).end());
    req.pipe(out);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${server.address().port}/`,
    stop: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        agent.destroy();
      }),
  };
}

const CONFIGURATION = Array.from(
  { length: MODULES },
  (_, i) => `module "m${i}" {\n  source  = "registry.terraform.io/acme/m${i}/aws"\n  version = "~> 1.0"\n}\n`,
).join('\n');

/** `terraform init` of the configuration in a new folder, its modules from `registry` (modules.v1); seconds. */
async function init(folder, registry, ca) {
  writeTree(folder, {
    'cli.tfrc': `host "registry.terraform.io" {\n  services = {\n    "modules.v1" = "${registry}v1/modules/"\n  }\n}\n`,
    'infra/main.tf': CONFIGURATION,
  });
  const env = {
    ...process.env,
    TF_CLI_CONFIG_FILE: join(folder, 'cli.tfrc'),
    TF_IN_AUTOMATION: '1',
    CHECKPOINT_DISABLE: '1',
    TF_PLUGIN_CACHE_DIR: '',
    SSL_CERT_FILE: ca,
  };
  const { seconds } = await runCommand('terraform', ['-chdir=infra', 'init', '-no-color', '-input=false', '-backend=false'], { cwd: folder, env });
  return seconds;
}

export async function benchUpstream({ quick = false, runs } = {}) {
  if (spawnSync('terraform', ['version'], { stdio: 'ignore' }).status !== 0) {
    log('upstream: terraform is not on PATH; skipped');
    return [];
  }
  runs ??= quick ? 2 : 5;
  const tmp = makeTempDir();
  const running = [];
  try {
    const certs = certificates(tmp);
    const tls = ['--tls-cert', certs.cert, '--tls-key', certs.key];
    const files = { 'mirror.config.yaml': 'sources:\n  - folder: mods\n' };
    for (const name of [...Array.from({ length: MODULES }, (_, i) => `m${i}`), 'common']) {
      for (const version of VERSIONS) {
        for (const [file, text] of Object.entries(moduleFiles(name, version))) files[`mods/acme/${name}/aws/${version}/${file}`] = text;
      }
    }
    writeTree(join(tmp, 'upstream'), files);
    await runCommand(process.execPath, [CLI, 'build'], { cwd: join(tmp, 'upstream') });
    const upstream = await serve([...tls, '--mirror', 'dist', '--data', 'data'], join(tmp, 'upstream'), 'upstream serve');
    running.push(upstream);
    let caches = 0;
    const emptyCache = async () => {
      const n = caches++;
      const cache = await serve(
        [...tls, '--quiet', '--mirror', `cache-${n}`, '--data', `cache-data-${n}`, '--upstream', upstream.url, '--upstream-ca', certs.ca],
        tmp,
        'cache serve',
      );
      running.push(cache);
      return cache;
    };

    const proxy = await passThrough(upstream.url, certs);
    running.push(proxy);
    let folders = 0;
    const folder = () => join(tmp, `init-${folders++}`);
    // Warm-up: terraform's own first start, and each server's first answers.
    await init(folder(), upstream.url, certs.ca);
    const times = { direct: [], cold: [], warm: [], proxy: [] };
    for (let run = 0; run < runs; run++) {
      const cache = await emptyCache();
      // By turns: the direct init before the pair on even runs, after it on odd ones.
      if (run % 2 === 0) times.direct.push(await init(folder(), upstream.url, certs.ca));
      times.cold.push(await init(folder(), cache.url, certs.ca));
      times.warm.push(await init(folder(), cache.url, certs.ca));
      times.proxy.push(await init(folder(), proxy.url, certs.ca));
      if (run % 2 === 1) times.direct.push(await init(folder(), upstream.url, certs.ca));
      await cache.stop();
    }
    const direct = median(times.direct);
    const cold = median(times.cold);
    const warm = median(times.warm);
    const proxied = median(times.proxy);
    log(
      `upstream: init direct ${direct.toFixed(2)} s, through an empty cache ${cold.toFixed(2)} s, through the warm cache ${warm.toFixed(2)} s, through a pass-through proxy ${proxied.toFixed(2)} s`,
    );

    // 20 inits at once, straight from the upstream (for scale), then against a new empty cache, counting what the upstream is asked.
    const parallel = async (registry) => {
      const started = performance.now();
      await Promise.all(Array.from({ length: PARALLEL }, () => init(folder(), registry, certs.ca)));
      return (performance.now() - started) / 1000;
    };
    const parallelDirect = await parallel(upstream.url);
    const cache = await emptyCache();
    const before = upstream.requests.length;
    const parallelCold = await parallel(cache.url);
    const asked = upstream.requests.slice(before);
    await cache.stop();
    const per = new Map();
    for (const r of asked) per.set(r.path, (per.get(r.path) ?? 0) + 1);
    const fetches = [...per].filter(([path]) => /\/download$|\.tar\.gz$/.test(path));
    const versionsWanted = (MODULES + 1) * 2; // the newest 1.x of each module and of the shared one: a download document and an archive each
    const once = fetches.length === versionsWanted && fetches.every(([, n]) => n === 1);
    const most = Math.max(0, ...fetches.map(([, n]) => n));
    log(
      `upstream: ${PARALLEL} inits at once: ${asked.length} upstream requests (${fetches.length} download documents and archives, each asked at most ${most}×), ${parallelCold.toFixed(2)} s (direct ${parallelDirect.toFixed(2)} s)`,
    );

    const ratio = (a, b) => (b > 0 ? a / b : null);
    return [
      {
        name: `terraform init through an empty cache (${MODULES + 1} modules fetched and published) vs straight from the upstream`,
        modmirror: cold,
        baseline: direct,
        ratio: ratio(cold, direct),
        target: '≤ 1.5×',
        pass: cold <= 1.5 * direct,
        unit: 's',
      },
      {
        name: '↳ again, new folder, through the warm cache vs straight from the upstream',
        modmirror: warm,
        baseline: direct,
        ratio: ratio(warm, direct),
        target: '≤ 1.0×',
        pass: warm <= direct,
        unit: 's',
      },
      {
        name: '↳ through a pass-through HTTPS proxy that stores nothing (the extra hop alone) vs straight from the upstream',
        modmirror: proxied,
        baseline: direct,
        ratio: ratio(proxied, direct),
        target: null,
        unit: 's',
      },
      {
        name: `${PARALLEL} inits at once through an empty cache: upstream requests (each version's download and archive asked once)`,
        modmirror: asked.length,
        baseline: null,
        ratio: null,
        target: `each of ${versionsWanted} once`,
        pass: once,
        unit: 'requests',
      },
      {
        name: `↳ wall time of the ${PARALLEL} inits vs ${PARALLEL} at once straight from the upstream`,
        modmirror: parallelCold,
        baseline: parallelDirect,
        ratio: ratio(parallelCold, parallelDirect),
        target: null,
        unit: 's',
      },
    ];
  } finally {
    for (const server of running) await server.stop();
    removeTempDir(tmp);
  }
}
