// Serve benchmarks: `modmirror serve` under load, against the ceiling for a
// Node server (a bare `http` server answering the same bytes from memory) and,
// for the endpoints that are plain files, plain sirv over the same dist/.
//
// Every server and the load generator (autocannon) run in processes of their
// own, so the generator never shares the server's thread. This file is also
// the entry point of those child processes:
//
//   node bench/serve.mjs ceiling ROUTES.json     bare http server, bodies from memory
//   node bench/serve.mjs sirv DIR                plain sirv(DIR, { etag: true, dev: false })
//   node bench/serve.mjs load                    autocannon runs: a job a JSON line on stdin, a result a line out
//
// The mirror is generated in the folder layout (<ns>/<name>/<provider>/<version>/)
// and built with the CLI: 10,000 small modules with one version each, plus
// one module with many versions so its `versions` file is large. The server's
// data folder is a copy of the sample one (data/) grown to 200 organizations,
// for the management API rows (/api/v2, with the sample tokens).
//
// benchServeMemory (benchmark `serve-memory`) is separate: the server's
// resident memory with 10,000 modules × 10 versions loaded and requested.

import { spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { Agent, request as httpRequest, createServer } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRng } from './corpus/random.mjs';
import { log, makeTempDir, mapLimited, median, procMemoryMB, removeTempDir, runWithPeakRss } from './util.mjs';

const SELF = fileURLToPath(import.meta.url);
const CLI = fileURLToPath(new URL('../bin/modmirror.js', import.meta.url));
const require = createRequire(import.meta.url);
const SEED = 20240601;
const HOST = '127.0.0.1';
const CONNECTIONS = 10;

const FILE_TARGET = 0.5; // versions, detail: ≥ 0.5× the ceiling
const DYNAMIC_TARGET = 0.3; // list, search: ≥ 0.3× the ceiling
const P99_TARGET_MS = 5; // list, search
const RSS_TARGET_MB = 200; // issue 7: at 10k modules × 10 versions
const API_TARGET = 0.2; // issue 7: management API, ≥ 0.2× the ceiling
const BUILD_PEAK_TARGET_MB = 500; // issue 7: the build's peak memory

// ---- the data folder (management API) ------------------------------------------

const SAMPLE_DATA = fileURLToPath(new URL('../data', import.meta.url));
const ORGANIZATIONS = 200;
// Tokens of the sample data folder: a site administrator (admin) and an ordinary user (alice).
const ADMIN_TOKEN = 'mm.sample-admin-token';
const USER_TOKEN = 'mm.sample-user-token';

/** A copy of the sample data folder with organizations appended (shaped as the sample's) up to `total`. */
export async function prepareDataDir(dir, total = ORGANIZATIONS) {
  await cp(SAMPLE_DATA, dir, { recursive: true });
  const file = join(dir, 'organizations.json');
  const organizations = JSON.parse(await readFile(file, 'utf8'));
  const users = JSON.parse(await readFile(join(dir, 'users.json'), 'utf8'));
  const r = createRng(SEED + 7);
  const first = organizations.length;
  for (let i = first; i < total; i++) {
    const name = `bench-org-${String(i).padStart(4, '0')}`;
    const consumers = i > first && r.chance(0.2) ? [organizations[r.int(first, i - 1)].name] : [];
    const globalModuleSharing = consumers.length === 0 && r.chance(0.1);
    const globalProviderSharing = consumers.length === 0 && r.chance(0.05);
    organizations.push({
      name,
      externalId: `org-bench${String(i).padStart(6, '0')}`,
      email: `${name}@example.com`,
      accessBetaTools: r.chance(0.1),
      isDisabled: r.chance(0.05),
      applyTimeout: r.chance(0.3) ? r.pick(['24h', '12h', '90m']) : null,
      planTimeout: r.chance(0.3) ? r.pick(['2h', '1h', '45m']) : null,
      terraformWorkerSudoEnabled: false,
      globalModuleSharing,
      globalProviderSharing,
      ssoEnabled: r.chance(0.2),
      workspaceLimit: r.chance(0.5) ? null : r.pick([10, 25, 100]),
      owners: r.chance(0.5) ? [r.pick(users).id] : [],
      moduleConsumers: consumers,
      providerConsumers: r.chance(0.5) ? consumers : [],
      createdAt: new Date(Date.UTC(2026, 10, 1, 9) + i * 60_000).toISOString(),
    });
  }
  await writeFile(file, `${JSON.stringify(organizations, null, 2)}\n`);
  return { organizations: organizations.length, disabled: organizations.filter((o) => o.isDisabled).length };
}

// ---- the mirror -------------------------------------------------------------

const VOCAB = ['network', 'storage', 'logging', 'database', 'cache', 'queue', 'identity', 'compute', 'dns', 'monitoring', 'backup', 'secrets'];
const NAMESPACES = ['acme', 'platform', 'infra', 'security', 'data', 'edge', 'core', 'shared', 'team-alpha', 'team-beta', 'ops', 'labs'];
const PROVIDERS = [
  ['aws', 'hashicorp/aws', '>= 5.0'],
  ['google', 'hashicorp/google', '>= 5.10'],
  ['azurerm', 'hashicorp/azurerm', '~> 3.100'],
];
const RESOURCES = { aws: ['s3_bucket', 'sqs_queue', 'iam_role', 'security_group', 'cloudwatch_log_group'], google: ['storage_bucket', 'pubsub_topic', 'compute_network', 'dns_managed_zone'], azurerm: ['storage_account', 'key_vault', 'virtual_network', 'log_analytics_workspace'] };
const SEARCH_WORD = VOCAB[0];

/** Files of one small module: a resource, a few variables and outputs, a README whose first line carries vocabulary words. */
function smallModule(r, name, provider) {
  const [prov, source, constraint] = provider;
  const resource = `${prov}_${r.pick(RESOURCES[prov])}`;
  const words = r.sample(VOCAB, 2);
  const main = `terraform {
  required_version = ">= 1.3"
  required_providers {
    ${prov} = {
      source  = "${source}"
      version = "${constraint}"
    }
  }
}

resource "${resource}" "this" {
  count = var.create ? 1 : 0
  name  = var.name
  tags  = var.tags
}
`;
  const variables = `variable "create" {
  description = "Whether to create the ${words[0]} resources."
  type        = bool
  default     = true
}

variable "name" {
  description = "Name of the ${words[1]} ${resource.replace(/_/g, ' ')}."
  type        = string
}

variable "tags" {
  description = "Tags to add to every resource."
  type        = map(string)
  default     = {}
}

variable "retention_in_days" {
  description = "How long to keep ${words[0]} data."
  type        = number
  default     = ${r.pick([7, 14, 30, 90, 365])}
}
`;
  const outputs = `output "id" {
  description = "ID of the ${resource.replace(/_/g, ' ')}."
  value       = try(${resource}.this[0].id, null)
}

output "name" {
  description = "Name of the ${words[1]} resource."
  value       = var.name
}
`;
  const readme = `# ${name}\n\nTerraform module that manages ${words[0]} and ${words[1]} resources on ${prov}.\n\n## Usage\n\n\`\`\`hcl\nmodule "${name}" {\n  source = "..."\n  name   = "example"\n}\n\`\`\`\n`;
  return { files: { 'main.tf': main, 'variables.tf': variables, 'outputs.tf': outputs, 'README.md': readme }, words };
}

/** One version of the big module: one provider, so each entry of `versions` is about 370 bytes. */
function bigVersion(i) {
  const main = `terraform {
  required_version = ">= 1.5"
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.${i % 40}"
    }
  }
}

variable "name" {
  description = "Name of the network."
  type        = string
}

resource "aws_vpc" "this" {
  cidr_block = "10.${i % 256}.0.0/16"
  tags       = { Name = var.name }
}

output "id" {
  description = "ID of the VPC."
  value       = aws_vpc.this.id
}
`;
  const readme = `# big\n\nTerraform module that manages network and dns resources on aws, with many releases.\n`;
  return { 'main.tf': main, 'README.md': readme };
}

function bigVersionName(i) {
  return `${1 + Math.floor(i / 100)}.${Math.floor(i / 10) % 10}.${i % 10}`;
}

async function writeFiles(dir, files) {
  for (const [rel, text] of Object.entries(files)) {
    const path = join(dir, rel);
    await mkdir(join(path, '..'), { recursive: true });
    await writeFile(path, text);
  }
}

/** Writes the folder layout; returns the module list and how many READMEs carry SEARCH_WORD. */
export async function generateMirror(dir, { modules, bigVersions }) {
  const r = createRng(SEED);
  const list = [];
  for (let i = 0; i < modules; i++) {
    const provider = PROVIDERS[i % PROVIDERS.length];
    const ns = NAMESPACES[Math.floor(i / PROVIDERS.length) % NAMESPACES.length];
    const name = `${r.pick(VOCAB)}-${r.pick(['stack', 'service', 'baseline', 'cluster', 'bucket', 'zone', 'vault'])}-${String(i).padStart(5, '0')}`;
    const { files, words } = smallModule(r, name, provider);
    list.push({ ns, name, provider: provider[0], version: '1.0.0', files, words });
  }
  await mapLimited(list, 16, (m) => writeFiles(join(dir, m.ns, m.name, m.provider, m.version), m.files));
  const big = { ns: 'acme', name: 'big', provider: 'aws', versions: Array.from({ length: bigVersions }, (_, i) => bigVersionName(i)) };
  await mapLimited(big.versions, 16, (v, i) => writeFiles(join(dir, big.ns, big.name, big.provider, v), bigVersion(i)));
  const searchHits = list.filter((m) => m.words.includes(SEARCH_WORD) || m.name.includes(SEARCH_WORD)).length + 1; // + big
  return { list, big, searchHits, totalModules: modules + 1, totalVersions: modules + bigVersions };
}

// ---- child processes --------------------------------------------------------

const children = new Set();
let exitHook = false;

function killChildrenNow() {
  for (const child of children) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
}

function installExitHook() {
  if (exitHook) return;
  exitHook = true;
  process.on('exit', killChildrenNow); // run.mjs exits on SIGINT/SIGTERM via process.exit()
  // Before run.mjs's own handler removes the temp dirs, so no server is still reading them; only
  // when someone handles the signal, so adding a listener does not stop the signal ending the process.
  for (const signal of ['SIGINT', 'SIGTERM']) if (process.listenerCount(signal) > 0) process.prependListener(signal, killChildrenNow);
}

/** Spawns a server process and resolves once it prints its URL. */
function startProcess(args, label) {
  installExitHook();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    children.add(child);
    let out = '';
    let err = '';
    const timer = setTimeout(() => fail(new Error(`${label} did not start in 60 s: ${err.trim()}`)), 60_000);
    const fail = (error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    };
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (c) => {
      err += c;
    });
    child.stdout.on('data', (c) => {
      out += c;
      const m = /(http:\/\/127\.0\.0\.1:\d+)\//.exec(out);
      if (m) {
        clearTimeout(timer);
        child.stdout.removeAllListeners('data');
        child.stdout.resume();
        resolvePromise({ url: m[1], pid: child.pid, child, stderr: () => err, stop: () => stopProcess(child) });
      }
    });
    child.on('error', fail);
    child.on('exit', (code, signal) => {
      children.delete(child);
      fail(new Error(`${label} exited (${signal ?? `exit ${code}`}) before it was ready: ${err.trim()}`));
    });
  });
}

function stopProcess(child) {
  return new Promise((done) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      children.delete(child);
      return done();
    }
    const force = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(force);
      children.delete(child);
      done();
    });
    child.stdin.end();
    child.kill('SIGTERM');
  });
}

/** Runs `node ARGS` to completion as a tracked child (killed if the benchmark exits); resolves with its stdout. */
function runTracked(args, { cwd } = {}) {
  installExitHook();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c) => (err += c));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      children.delete(child);
      if (code === 0) resolvePromise(out);
      else reject(new Error(`node ${args.join(' ')} failed (${signal ?? `exit ${code}`}): ${err.trim()}`));
    });
  });
}

/** GET without Accept-Encoding, as autocannon sends it: { status, headers, body }. */
function get(url, { headers = {}, agent = false } = {}) {
  return new Promise((resolvePromise, reject) => {
    const req = httpRequest(url, { agent, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolvePromise({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** utime + stime of a process in seconds (USER_HZ is 100 on Linux). */
function cpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

const memoryMB = procMemoryMB;

/**
 * The load generator: one process for the whole benchmark (starting one per
 * run cost about 0.5 s each), taking one job a line on stdin and answering
 * one result a line.
 */
let loader;
function loaderProcess() {
  if (loader) return loader;
  installExitHook();
  const child = spawn(process.execPath, [SELF, 'load'], { stdio: ['pipe', 'pipe', 'inherit'] });
  children.add(child);
  const waiting = [];
  onLines(child.stdout, (line) => waiting.shift()?.resolve(line));
  child.on('close', (code) => {
    children.delete(child);
    loader = undefined;
    for (const w of waiting.splice(0)) w.reject(new Error(`the load generator stopped (exit ${code})`));
  });
  loader = {
    run: (job) =>
      new Promise((resolve, reject) => {
        waiting.push({ resolve, reject });
        child.stdin.write(`${JSON.stringify(job)}\n`);
      }),
    stop: () => child.stdin.end(),
  };
  return loader;
}

/** Calls `onLine` with each whole line the stream brings (the loader's jobs and results). */
function onLines(stream, onLine) {
  let buffered = '';
  stream.setEncoding('utf8').on('data', (chunk) => {
    buffered += chunk;
    let newline;
    while ((newline = buffered.indexOf('\n')) !== -1) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      onLine(line);
    }
  });
}

/** One autocannon run by the load generator; { rps, p99, p50, mean, requests, bytesPerRequest, loadCpu, serverCpu }. */
async function load(server, path, seconds, headers) {
  const before = cpuSeconds(server.pid);
  const line = await loaderProcess().run({ url: server.url + path, connections: CONNECTIONS, seconds, headers });
  const after = cpuSeconds(server.pid);
  const result = JSON.parse(line);
  if (result.errors > 0 || result.timeouts > 0 || result.non2xx > 0 || result.requests === 0) {
    throw new Error(`load on ${server.url}${path}: ${result.requests} requests, ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
  }
  result.serverCpu = before === null || after === null ? null : (after - before) / result.duration;
  return result;
}

// ---- the benchmark ----------------------------------------------------------

/** Keys of the management API endpoints, for benchServe({ endpoints }). */
export const MANAGEMENT_ENDPOINTS = ['adminOrganizations', 'accountDetails'];

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
      { key: 'versions', label: `versions (1 module × ${big.versions.length}, ${(versionsBytes / 1024).toFixed(1)} KB)`, path: `/v1/modules/${bigKey}/versions`, file: `v1/modules/${bigKey}/versions`, target: FILE_TARGET },
      { key: 'detail', label: 'detail document', path: `/v1/modules/${probeKey}/1.0.0`, file: `v1/modules/${probeKey}/1.0.0/index.json`, target: FILE_TARGET },
      { key: 'list0', label: 'list offset=0 limit=15', path: '/v1/modules?offset=0&limit=15', target: DYNAMIC_TARGET, p99: true },
      { key: 'listN', label: `list offset=${lastOffset} limit=15`, path: `/v1/modules?offset=${lastOffset}&limit=15`, target: DYNAMIC_TARGET, p99: true },
      { key: 'search', label: `search q=${SEARCH_WORD} (${mirror.searchHits.toLocaleString('en-US')} hits)`, path: `/v1/modules/search?q=${SEARCH_WORD}`, target: DYNAMIC_TARGET, p99: true },
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
    ].filter((e) => only === undefined || only.includes(e.key));
    if (endpoints.length === 0) throw new Error(`serve: no endpoint named ${only.join(', ')}`);

    // 2. the servers: modmirror, then the ceiling with the same bytes, then plain sirv
    const mm = await startProcess([CLI, 'serve', '--dir', out, '--host', HOST, '--port', '0', '--quiet', '--data', join(tmp, 'data')], 'modmirror serve');
    servers.push(mm);
    const idle = memoryMB(mm.pid);
    const routes = {};
    for (const e of endpoints) {
      const res = await get(mm.url + e.path, { headers: e.headers });
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
      if (e.check && !e.check(JSON.parse(res.body.toString('utf8')))) throw new Error(`serve: ${e.path} answered an unexpected document: ${res.body.toString('utf8').slice(0, 300)}`);
    }
    await writeFile(join(tmp, 'routes.json'), JSON.stringify(routes));
    const ceiling = await startProcess([SELF, 'ceiling', join(tmp, 'routes.json')], 'ceiling server');
    servers.push(ceiling);
    const plain = await startProcess([SELF, 'sirv', out], 'sirv server');
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
      const targets = [
        ['modmirror', mm, e.path],
        ['ceiling', ceiling, e.path],
        ...(e.file && !quick ? [['sirv', plain, `/${e.file}`]] : []),
      ];
      const results = Object.fromEntries(targets.map(([who]) => [who, []]));
      for (const [, server, path] of targets) await load(server, path, warmUpSeconds, e.headers);
      for (let i = 0; i < runs; i++) {
        const order = i % 2 === 0 ? targets : [...targets].reverse();
        for (const [who, server, path] of order) results[who].push(await load(server, path, seconds, e.headers));
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
        detail: { note: !e.file ? 'no static file for this endpoint' : quick ? 'not measured in a quick run' : `sirv(dist, { etag: true, dev: false }) serving /${e.file}` },
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
    const after = memoryMB(mm.pid);
    const ceilingMem = memoryMB(ceiling.pid);
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
        note: `issue 7's target is ≤ ${RSS_TARGET_MB} MB at 10k modules × 10 versions (benchmark serve-memory); this mirror has 1 version per module (plus one with ${big.versions.length}), so this is info only`,
      },
    });
    rows.push({ name: `load: ${how}`, modmirror: null, baseline: null, ratio: null, target: null, unit: '' });
    return rows;
  } finally {
    loader?.stop();
    await Promise.all(servers.map((s) => s.stop()));
    removeTempDir(tmp);
  }
}

// ---- serve-memory: resident memory with many versions loaded ----------------

/** Writes `modules` × `versions` modules of one main.tf each (variables, a resource, outputs; no two versions alike, so the build's cache never hits). */
export async function generateVersionedMirror(dir, { modules, versions }) {
  const r = createRng(SEED + 1);
  const list = [];
  for (let i = 0; i < modules; i++) {
    const provider = PROVIDERS[i % PROVIDERS.length];
    const ns = NAMESPACES[Math.floor(i / PROVIDERS.length) % NAMESPACES.length];
    const name = `${r.pick(VOCAB)}-${r.pick(['stack', 'service', 'baseline', 'cluster', 'bucket', 'zone', 'vault'])}-${String(i).padStart(5, '0')}`;
    const { files } = smallModule(r, name, provider);
    list.push({ ns, name, provider: provider[0], key: `${ns}/${name}/${provider[0]}`, text: `${files['main.tf']}\n${files['variables.tf']}\n${files['outputs.tf']}` });
  }
  const jobs = list.flatMap((m) => Array.from({ length: versions }, (_, v) => [m, `1.${v}.0`]));
  await mapLimited(jobs, 16, ([m, version]) => writeFiles(join(dir, m.ns, m.name, m.provider, version), { 'main.tf': `${m.text}\nlocals {\n  module  = "${m.name}"\n  release = "${version}"\n}\n` }));
  return { list: list.map(({ text, ...m }) => m), versions: jobs.length, latest: `1.${versions - 1}.0` };
}

/**
 * Builds modules × 10 versions with the CLI (timing it and taking its peak
 * RSS), starts `modmirror serve` on it, requests every module's `versions`
 * and latest detail once plus listings and searches, and reads the server's
 * VmRSS and VmHWM. Full: 10,000 modules (100,000 versions); quick: 30.
 * @param {{ quick?: boolean }} options
 */
export async function benchServeMemory({ quick = false } = {}) {
  const shape = quick ? { modules: 30, versions: 10 } : { modules: 10000, versions: 10 };
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
    log(`serve-memory: built ${summary.versions.toLocaleString('en-US')} versions in ${build.seconds.toFixed(1)} s, build peak RSS ${build.peakMB.toFixed(0)} MB`);

    const mm = await startProcess([CLI, 'serve', '--dir', out, '--host', HOST, '--port', '0', '--quiet', '--data', join(tmp, 'data')], 'modmirror serve');
    servers.push(mm);
    await writeFile(join(tmp, 'no-routes.json'), '{}');
    const bare = await startProcess([SELF, 'ceiling', join(tmp, 'no-routes.json')], 'bare http server');
    servers.push(bare);
    await new Promise((done) => setTimeout(done, 500)); // let start-up settle before the idle reading
    const idle = memoryMB(mm.pid);

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
    const after = memoryMB(mm.pid);
    const bareMem = memoryMB(bare.pid);
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
        target: `≤ ${BUILD_PEAK_TARGET_MB} MB`,
        unit: 'MB',
        pass: build.peakMB <= BUILD_PEAK_TARGET_MB,
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
        target: `≤ ${RSS_TARGET_MB} MB`,
        unit: 'MB',
        pass: after.rss <= RSS_TARGET_MB,
        detail,
      },
      {
        name: `  ↳ serve peak RSS (VmHWM)`,
        modmirror: after.hwm,
        baseline: bareMem.hwm,
        ratio: after.hwm / bareMem.hwm,
        target: `≤ ${RSS_TARGET_MB} MB`,
        unit: 'MB',
        pass: after.hwm <= RSS_TARGET_MB,
        detail,
      },
    ];
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    removeTempDir(tmp);
  }
}

function fmtCpu(c) {
  if (!c) return '?';
  const pct = (x) => (x === null ? '?' : `${Math.round(x * 100)}%`);
  return `server ${pct(c.server)}, generator ${pct(c.loadGenerator)}`;
}

// ---- child process roles ----------------------------------------------------

/** Exits when the parent goes away (stdin closes), so no server outlives the benchmark. */
function exitWithParent() {
  process.stdin.on('end', () => process.exit(0));
  process.stdin.on('error', () => process.exit(0));
  process.stdin.resume();
  process.on('SIGTERM', () => process.exit(0));
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

if (process.argv[1] === SELF) {
  const [role, ...args] = process.argv.slice(2);
  if (role === 'load') loadRole();
  else {
    exitWithParent();
    if (role === 'ceiling') ceilingRole(...args);
    else if (role === 'sirv') await sirvRole(...args);
    else {
      console.error('usage: node bench/serve.mjs ceiling ROUTES.json | sirv DIR | load (jobs as JSON lines on stdin)');
      process.exit(2);
    }
  }
}
