// The child processes of the serve benchmarks, one role each:
//
//   node bench/serve/roles.mjs ceiling ROUTES.json   bare http server, bodies from memory
//   node bench/serve/roles.mjs sirv DIR              plain sirv(DIR, { etag: true, dev: false })
//   node bench/serve/roles.mjs load                  autocannon runs: a job a JSON line on stdin, a result a line out
//   node bench/serve/roles.mjs serve [metrics=off] [usage=off] -- SERVE-FLAGS
//                                                    `modmirror serve` from lib/, with metrics or usage recording off

import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { onLines } from './processes.mjs';
import { HOST } from './settings.mjs';

const require = createRequire(import.meta.url);

/** Exits when the parent goes away (stdin closes), so no server outlives the benchmark; and on SIGTERM unless the role handles it. */
function exitWithParent({ sigterm = true } = {}) {
  process.stdin.on('end', () => process.exit(0));
  process.stdin.on('error', () => process.exit(0));
  process.stdin.resume();
  if (sigterm) process.on('SIGTERM', () => process.exit(0));
}

function listen(handler) {
  const server = createServer(handler);
  server.listen(0, HOST, () => console.log(`listening on http://${HOST}:${server.address().port}/`));
}

function ceilingRole(routesFile) {
  const routes = new Map(
    Object.entries(JSON.parse(readFileSync(routesFile, 'utf8'))).map(([path, { file, type }]) => {
      const body = readFileSync(file);
      return [path, { body, headers: { 'Content-Type': type, 'Content-Length': body.length } }];
    }),
  );
  listen((req, res) => {
    const hit = routes.get(req.url);
    if (!hit) {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, hit.headers);
    res.end(hit.body);
  });
}

async function sirvRole(dir) {
  const sirv = (await import('sirv')).default;
  const files = sirv(dir, { etag: true, dev: false });
  listen((req, res) => {
    // `versions` has no extension; give it the type modmirror sends, so both answer the same headers.
    if (req.url.endsWith('/versions')) res.setHeader('Content-Type', 'application/json');
    files(req, res, () => {
      res.statusCode = 404;
      res.end();
    });
  });
}

const LIB = new URL('../../lib/', import.meta.url);

/** What serve records per request for /metrics, and per archive for usage: the methods the `off` switches make no-ops. */
const RECORDERS = {
  metrics: { module: 'serve/metrics.js', exported: 'ServeMetrics', methods: ['request', 'archiveSent', 'published', 'refused'] },
  usage: { module: 'usage/store.js', exported: 'UsageLog', methods: ['record'] },
};

/**
 * `modmirror serve` as the CLI runs it (lib/cli.js: the compiled code the bundle is made of), optionally with
 * metrics or usage recording off. serve has no switch for either (the metrics are always collected; in private
 * mode every archive sent is recorded), so `metrics=off` and `usage=off` replace the recording methods with
 * no-ops before the server starts: what is left is the same server without that work. /metrics still answers,
 * with no samples of its own, which is how the benchmark checks the switch took. Both `on` and `off` servers run
 * through this role, so they differ by nothing else.
 */
async function serveRole(args) {
  const end = args.indexOf('--');
  if (end === -1) throw new Error('serve role: the serve flags follow --');
  for (const setting of args.slice(0, end)) {
    const [what, value] = setting.split('=');
    const recorder = RECORDERS[what];
    if (!recorder || (value !== 'on' && value !== 'off')) throw new Error(`serve role: unknown setting ${setting}; expected metrics=on|off, usage=on|off`);
    if (value === 'on') continue;
    const prototype = (await import(new URL(recorder.module, LIB).href))[recorder.exported]?.prototype;
    for (const method of recorder.methods) {
      // A renamed method would leave the work on and the ratio meaningless: stop instead.
      if (typeof prototype?.[method] !== 'function') throw new Error(`serve role: lib/${recorder.module} has no ${recorder.exported}.${method} to switch off`);
      prototype[method] = () => {};
    }
  }
  const { main } = await import(new URL('cli.js', LIB).href);
  process.exitCode = await main(['serve', ...args.slice(end + 1)]);
}

/** Reads jobs { url, connections, seconds, headers } a line at a time and runs them one after another. */
function loadRole() {
  const autocannon = require('autocannon');
  const jobs = [];
  let running = false;
  const next = () => {
    if (running || jobs.length === 0) return;
    running = true;
    runLoad(autocannon, jobs.shift(), () => {
      running = false;
      next();
    });
  };
  onLines(process.stdin, (line) => {
    jobs.push(JSON.parse(line));
    next();
  });
  process.stdin.on('end', () => process.exit(0));
}

function runLoad(autocannon, { url, connections, seconds, headers }, done) {
  const times = [];
  const cpuBefore = process.cpuUsage();
  const options = { url, connections, duration: seconds, ...(headers ? { headers } : {}) };
  const instance = autocannon(options, (error, result) => {
    if (error) {
      console.error(error);
      process.exit(1);
    }
    const cpu = process.cpuUsage(cpuBefore);
    times.sort((a, b) => a - b);
    const pct = (p) => (times.length === 0 ? 0 : times[Math.min(times.length - 1, Math.ceil((p / 100) * times.length) - 1)]);
    const duration = result.duration;
    process.stdout.write(
      `${JSON.stringify({
        rps: result.requests.total / duration,
        rpsAverage: result.requests.average,
        p50: pct(50),
        p99: pct(99),
        autocannonP99: result.latency.p99,
        mean: times.reduce((a, b) => a + b, 0) / Math.max(1, times.length),
        requests: result.requests.total,
        bytesPerRequest: result.requests.total > 0 ? result.throughput.total / result.requests.total : 0,
        duration,
        errors: result.errors,
        timeouts: result.timeouts,
        non2xx: result.non2xx,
        loadCpu: (cpu.user + cpu.system) / 1e6 / duration,
      })}\n`,
      done,
    );
  });
  // autocannon's own histogram keeps whole milliseconds; keep the exact times for the percentiles.
  instance.on('response', (client, statusCode, bytes, responseTime) => times.push(responseTime));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [role, ...args] = process.argv.slice(2);
  if (role === 'load') loadRole();
  else if (role === 'serve') {
    exitWithParent({ sigterm: false }); // serve finishes open requests on SIGTERM, then stops
    await serveRole(args);
  } else {
    exitWithParent();
    if (role === 'ceiling') ceilingRole(...args);
    else if (role === 'sirv') await sirvRole(...args);
    else {
      console.error(
        'usage: node bench/serve/roles.mjs ceiling ROUTES.json | sirv DIR | load (jobs as JSON lines on stdin) | serve [metrics=off] [usage=off] -- SERVE-FLAGS',
      );
      process.exit(2);
    }
  }
}
