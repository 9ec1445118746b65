// Writers racing for one mirror in a bucket of a local Ceph RGW (bench/rgw.mjs,
// started as the tests start it; skipped with a note when Ceph is not
// installed), each a real process of the CLI (bin/modmirror.js):
// - 8 writers, 8 different modules, one prefix, 20 rounds: each round starts
//   8 `publish --out s3://` of 8 new modules at once, then runs `verify s3://`
//   and reads the module states. Rows: the modules that landed, the rounds that
//   verified with every module listed, publishes per second against one
//   writer publishing as many modules one after another into a prefix of its
//   own (a round of each in turn, so drift hits both alike), and the
//   publishes' attempts (their --json).
// - 50 publishes (new modules, and new versions of existing ones) in waves of
//   8, each killed (SIGKILL) after a random delay within 0-1.2x a publish's
//   whole duration, so kills land in every phase (startup, build, uploads,
//   after the commit): the longer of one publish alone and the longest of 8
//   unkilled publishes at once, both measured first. Meanwhile a poller reads
//   every module's versions document and each listed version's download
//   document and archive. Rows: holes (a listed version without its archive),
//   unlistings (a version listed once and later not), whether one ordinary
//   publish and then `verify s3://` exit 0 afterwards, and where the kills
//   landed.
// The delays come from a seeded generator: BENCH_RACES_SEED=N with
// BENCH_RACES_WINDOW_MS=M replays a run's delays (both are logged, and every
// delay). Every process is killed after 3 minutes and reported, so a hang
// cannot stall the run.

import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CreateBucketCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { createRng } from './corpus/random.mjs';
import { hasCeph, startRgw } from './rgw.mjs';
import { log, makeTempDir, mapLimited, median, removeTempDir } from './util.mjs';

const CLI = fileURLToPath(new URL('../bin/modmirror.js', import.meta.url));
const BUCKET = 'bench-races';
const PROCESS_TIMEOUT_MS = 180_000;
/** The kills fall within 0 to this many times a publish's whole duration. */
const KILL_WINDOW = 1.2;
/** The poller re-reads the versions it has seen whole (download document, archive's HEAD) every this many passes. */
const RECHECK_EVERY = 5;

export async function benchBucketRaces({ quick = false } = {}) {
  if (!hasCeph()) {
    log('bucket-races: skipped, Ceph RGW is not installed (bash .ci/deps installs it)');
    return [];
  }
  const tmp = makeTempDir();
  let rgw;
  try {
    rgw = await startRgw(join(tmp, 'rgw'));
    await rgw.client.send(new CreateBucketCommand({ Bucket: BUCKET }));
    const ctx = { rgw, tmp };
    const seed = Number(process.env.BENCH_RACES_SEED ?? Math.floor(Math.random() * 2 ** 31));
    return [
      ...(await differentModules(ctx, quick ? { writers: 8, rounds: 3 } : { writers: 8, rounds: 20 })),
      ...(await killedPublishes(ctx, quick ? { total: 16, wave: 8, seed } : { total: 50, wave: 8, seed })),
    ];
  } finally {
    rgw?.stop();
    removeTempDir(tmp);
  }
}

/** One CLI process that can be killed (SIGKILL) at any instant; `done` resolves with its output, exit code or signal, and time. */
function spawnCli({ rgw }, args) {
  const started = performance.now();
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...rgw.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, PROCESS_TIMEOUT_MS);
  const done = new Promise((resolve) => {
    const end = (code, signal, extra = '') => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr: stderr + extra, ms: Math.round(performance.now() - started), timedOut });
    };
    child.on('error', (error) => end(-1, null, error.message));
    child.on('close', (code, signal) => end(code, signal));
  });
  return { kill: () => child.kill('SIGKILL'), done };
}
const run = (ctx, args) => spawnCli(ctx, args).done;

const outcome = (r) => (r.timedOut ? `hung, killed after ${r.ms} ms` : `${r.signal ?? `exit ${r.code}`} after ${r.ms} ms`);
/** A failed process as the report quotes it: what it printed, whole. */
const printed = (r) =>
  [r.stderr.trim() && `stderr:\n${r.stderr.trim()}`, r.stdout.trim() && `stdout:\n${r.stdout.trim()}`].filter(Boolean).join('\n') || '(printed nothing)';

const url = (prefix) => `s3://${BUCKET}/${prefix}`;

/** A module version's source: one small main.tf whose output tells it from every other. */
function source({ tmp }, module, version) {
  const folder = join(tmp, 'src', module, version);
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'main.tf'), `variable "name" {\n  type = string\n}\n\noutput "v" {\n  value = "${module} ${version} \${var.name}"\n}\n`);
  return folder;
}
function publishArgs(ctx, prefix, module, version, extra = []) {
  const [namespace, name, provider] = module.split('/');
  const src = source(ctx, module, version);
  const address = ['--namespace', namespace, '--name', name, '--provider', provider, '--version', version];
  return ['publish', '--source', src, ...address, '--out', url(prefix), ...ctx.rgw.flags, '--json', ...extra];
}

const notFound = (error) => error?.$metadata?.httpStatusCode === 404 || error?.name === 'NoSuchKey' || error?.name === 'NotFound';
/** An object's bytes, or undefined when there is none. */
async function getObject({ rgw }, key) {
  try {
    const o = await rgw.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
    return Buffer.from(await o.Body.transformToByteArray());
  } catch (error) {
    if (notFound(error)) return undefined;
    throw error;
  }
}
/** An object's bytes and ETag, or undefined when there is none. */
async function getObjectWithEtag({ rgw }, key) {
  try {
    const o = await rgw.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
    return { body: Buffer.from(await o.Body.transformToByteArray()), etag: o.ETag };
  } catch (error) {
    if (notFound(error)) return undefined;
    throw error;
  }
}
/** An object's size, or undefined when there is none. */
async function headObject({ rgw }, key) {
  try {
    return (await rgw.client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }))).ContentLength ?? 0;
  } catch (error) {
    if (notFound(error)) return undefined;
    throw error;
  }
}
/** The mirror's truth under `prefix`: every module's state (`state/NS/NAME.PROVIDER.json`), as `{ modules }`. */
async function truthOf(ctx, prefix) {
  const modules = {};
  let token;
  do {
    const page = await ctx.rgw.client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${prefix}state/`, ContinuationToken: token }));
    for (const { Key } of page.Contents ?? []) {
      const state = await readJson(ctx, Key);
      if (state?.module) modules[state.module] = { versions: state.versions };
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return { modules };
}

async function readJson(ctx, key) {
  const body = await getObject(ctx, key);
  if (body === undefined) return undefined;
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw new Error(`${key} is not JSON (${body.length} bytes): ${error.message}`, { cause: error });
  }
}
const listsVersion = (manifest, module, version) => manifest?.modules?.[module]?.versions?.some((v) => v.version === version) === true;

function report(name, problems) {
  if (problems.length === 0) return;
  log(`${name}: ${problems.length} problem(s):`);
  for (const p of problems) process.stderr.write(`  - ${p.replace(/\n/g, '\n    ')}\n`);
}

async function differentModules(ctx, { writers, rounds }) {
  const label = `${writers} writers, ${writers} different modules, one bucket, ${rounds} rounds`;
  const [race, serial] = ['race/', 'serial/'];
  const problems = [];
  // Both prefixes start with one module, so every measured publish writes into an existing mirror.
  for (const prefix of [race, serial]) {
    const r = await run(ctx, publishArgs(ctx, prefix, 'acme/seed/aws', '1.0.0', ['--new-mirror']));
    if (r.code !== 0) throw new Error(`bucket-races: the first publish into ${url(prefix)} ${outcome(r)}\n${printed(r)}`);
  }
  const published = ['acme/seed/aws'];
  const attempts = [];
  const racing = [];
  const alone = [];
  let verified = 0;
  for (let round = 1; round <= rounds; round++) {
    const modules = Array.from({ length: writers }, (_, i) => `acme/r${round}w${i}/aws`);
    const args = modules.map((m) => publishArgs(ctx, race, m, '1.0.0'));
    let t0 = performance.now();
    const results = await Promise.all(args.map((a) => run(ctx, a)));
    racing.push((performance.now() - t0) / 1000);
    published.push(...modules);
    const tries = results.map((r, i) => {
      if (r.code !== 0) {
        problems.push(`round ${round}: publish ${modules[i]} 1.0.0 ${outcome(r)}\n${printed(r)}`);
        return outcome(r);
      }
      const n = JSON.parse(r.stdout).attempts;
      attempts.push(n);
      return n;
    });

    const checked = await run(ctx, ['verify', url(race), ...ctx.rgw.flags]);
    if (checked.code !== 0) problems.push(`round ${round}: verify ${url(race)} ${outcome(checked)}\n${printed(checked)}`);
    const manifest = await truthOf(ctx, race);
    const missing = published.filter((m) => !listsVersion(manifest, m, '1.0.0'));
    if (missing.length > 0) problems.push(`round ${round}: the module states lack ${missing.map((m) => `${m} 1.0.0`).join(', ')}`);
    if (checked.code === 0 && missing.length === 0) verified++;

    // The baseline: one writer publishing as many new modules, one after another, into a prefix of its own.
    t0 = performance.now();
    for (let i = 0; i < writers; i++) {
      const m = `acme/s${round}w${i}/aws`;
      const r = await run(ctx, publishArgs(ctx, serial, m, '1.0.0'));
      if (r.code !== 0) problems.push(`round ${round}: baseline publish ${m} 1.0.0 ${outcome(r)}\n${printed(r)}`);
    }
    alone.push((performance.now() - t0) / 1000);
    log(
      `bucket-races: round ${round}/${rounds}: ${writers} at once ${racing.at(-1).toFixed(1)} s (attempts ${tries.join(', ')}), verify ${checked.code === 0 ? 'ok' : 'FAILED'}${missing.length > 0 ? `, ${missing.length} missing` : ''}; one writer ${alone.at(-1).toFixed(1)} s`,
    );
  }
  const final = await truthOf(ctx, race);
  const total = writers * rounds;
  const landed = published.filter((m) => m !== 'acme/seed/aws' && listsVersion(final, m, '1.0.0')).length;
  const sum = (xs) => xs.reduce((a, b) => a + b, 0);
  const rate = total / sum(racing);
  const baseline = total / sum(alone);
  report(label, problems);
  const detail = { problems, racingSeconds: racing, aloneSeconds: alone, attempts };
  return [
    {
      name: `${label}: modules landed (of ${total})`,
      modmirror: landed,
      baseline: null,
      ratio: null,
      target: `all ${total}`,
      unit: 'modules',
      pass: landed === total,
      detail,
    },
    {
      name: `↳ rounds after which verify s3:// exited 0 and the module states listed every module`,
      modmirror: verified,
      baseline: null,
      ratio: null,
      target: `all ${rounds}`,
      unit: 'rounds',
      pass: verified === rounds,
    },
    {
      name: `↳ publishes per second, ${writers} at once (baseline: one writer, ${total} one after another)`,
      modmirror: rate,
      baseline,
      ratio: rate / baseline,
      target: null,
      unit: 'publishes/s',
    },
    {
      name: '↳ attempts per publish (--json), median',
      modmirror: attempts.length ? median(attempts) : null,
      baseline: null,
      ratio: null,
      target: null,
      unit: 'attempts',
    },
    {
      name: '↳ attempts per publish (--json), max',
      modmirror: attempts.length ? Math.max(...attempts) : null,
      baseline: null,
      ratio: null,
      target: null,
      unit: 'attempts',
    },
  ];
}

/**
 * What a client reading the bucket sees of `prefix`: every module's versions
 * document, and each listed version's download document and archive. Records
 * holes (a listed version without its download document or archive) and
 * unlistings (a version listed once, later not), each once, with when.
 */
function newPoller(ctx, prefix) {
  const everListed = new Map();
  const whole = new Set();
  const holes = new Map();
  const unlistings = new Map();
  const errors = [];
  // When each version was last seen listed, and the versions document's ETag then: an unlisting says which it replaced.
  const lastListed = new Map();
  const started = performance.now();
  const now = () => Math.round(performance.now() - started);
  const state = { known: new Set(), holes, unlistings, errors, everListed, passes: 0, reads: 0, now };
  const base = (m) => `${prefix}v1/modules/${m}`;

  const checkVersion = async (m, v, when, full) => {
    const id = `${m} ${v}`;
    const seen = whole.has(id);
    if (seen && !full && state.passes % RECHECK_EVERY !== 0) return;
    const download = await readJson(ctx, `${base(m)}/${v}/download`);
    state.reads++;
    if (typeof download?.location !== 'string') {
      if (!holes.has(id)) holes.set(id, `${id}: listed, but its download document is ${download ? 'without a location' : 'missing'} (${when})`);
      return;
    }
    const key = `${base(m)}/${v}/${download.location.replace(/^\.\//, '')}`;
    // An archive seen whole is only looked at again (HEAD); the last pass reads every one again.
    const size = seen && !full ? await headObject(ctx, key) : (await getObject(ctx, key))?.length;
    state.reads++;
    if (!size) {
      if (!holes.has(id)) holes.set(id, `${id}: listed, but its archive ${key} is ${size === 0 ? 'empty' : 'missing'} (${when})`);
    } else whole.add(id);
  };

  const lookOnce = async (when, full) => {
    state.passes++;
    await mapLimited([...state.known], 4, async (m) => {
      const asked = now();
      const object = await getObjectWithEtag(ctx, `${base(m)}/versions`);
      const doc = object && JSON.parse(object.body.toString('utf8'));
      state.reads++;
      const listed = doc ? (doc.modules?.[0]?.versions ?? []).map((v) => v.version) : [];
      const before = everListed.get(m) ?? new Set();
      for (const v of before) {
        const id = `${m} ${v}`;
        if (listed.includes(v) || unlistings.has(id)) continue;
        const last = lastListed.get(id);
        unlistings.set(id, {
          text:
            `${id}: listed by its versions document (ETag ${last.etag}) at ${last.at} ms, ` +
            `not by the one read at ${asked} ms (${object ? `ETag ${object.etag}, listing ${listed.join(' ') || 'nothing'}` : 'the document is gone'}) (${when})`,
          back: undefined,
        });
      }
      for (const v of listed) {
        const id = `${m} ${v}`;
        lastListed.set(id, { at: asked, etag: object.etag });
        const gone = unlistings.get(id);
        if (gone && gone.back === undefined) gone.back = asked;
      }
      everListed.set(m, new Set([...before, ...listed]));
      await mapLimited(listed, 4, (v) => checkVersion(m, v, when, full));
    });
  };
  // One pass at a time: a versions document read earlier but answered later must not pass for an unlisting.
  let passes = Promise.resolve();
  state.look = (when, { full = false } = {}) => {
    const pass = passes.then(() => lookOnce(when, full));
    passes = pass.catch(() => undefined);
    return pass;
  };

  let running = false;
  let loop;
  state.start = (deadline) => {
    running = true;
    loop = (async () => {
      while (running && performance.now() < deadline) {
        try {
          await state.look('while writers ran');
        } catch (error) {
          if (errors.length < 20) errors.push(`the poller: ${error.message}`);
        }
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
  };
  state.stop = async () => {
    running = false;
    await loop;
  };
  return state;
}

async function killedPublishes(ctx, { total, wave, seed }) {
  const label = `${total} bucket publishes racing, kill -9 at random instants`;
  const prefix = 'kill/';
  const problems = [];
  const rng = createRng(seed);
  const seeded = ['acme/k0/aws', 'acme/k1/aws', 'acme/k2/aws', 'acme/k3/aws'];
  // The modules the jobs publish new versions of. The last of these publishes, alone, is timed.
  let solo;
  for (const [i, m] of seeded.entries()) {
    const r = await run(ctx, publishArgs(ctx, prefix, m, '1.0.0', i === 0 ? ['--new-mirror'] : []));
    if (r.code !== 0) throw new Error(`bucket-races: publish ${m} 1.0.0 into ${url(prefix)} ${outcome(r)}\n${printed(r)}`);
    solo = r.ms;
  }
  // And a wave of as many publishes at once, none killed, timed too: on a small machine a publish
  // among others takes several times as long as alone, and kills drawn from the time alone would
  // all land before the manifest write. The kills span the longer of the two.
  const calibration = Array.from({ length: wave }, (_, i) => `acme/c${i}/aws`);
  const calibrated = await Promise.all(calibration.map((m) => run(ctx, publishArgs(ctx, prefix, m, '1.0.0'))));
  calibrated.forEach((r, i) => r.code !== 0 && problems.push(`a wave not killed: publish ${calibration[i]} 1.0.0 ${outcome(r)}\n${printed(r)}`));
  const inWave = Math.max(...calibrated.map((r) => r.ms));
  const existing = [...seeded, ...calibration.filter((_, i) => calibrated[i].code === 0)];
  const windowMs = Number(process.env.BENCH_RACES_WINDOW_MS ?? Math.round(KILL_WINDOW * Math.max(solo, inWave)));
  log(
    `bucket-races: kills: BENCH_RACES_SEED=${seed} BENCH_RACES_WINDOW_MS=${windowMs}: a publish alone takes ${solo} ms, the longest of ${wave} at once ${inWave} ms; kills fall within 0-${windowMs} ms`,
  );

  // Half new versions of the existing modules, half new modules.
  const jobs = Array.from({ length: total }, (_, j) =>
    j % 2 === 0 ? { module: existing[(j / 2) % existing.length], version: `2.${j}.0` } : { module: `acme/kn${j}/aws`, version: '1.0.0' },
  );
  const waves = Math.ceil(total / wave);
  const poller = newPoller(ctx, prefix);
  for (const m of existing) poller.known.add(m);
  for (const [i, r] of calibrated.entries()) if (r.code !== 0) poller.known.add(calibration[i]);
  await poller.look('before the kills');
  poller.start(performance.now() + 15 * 60_000);

  const phases = { before: 0, after: 0, finished: 0 };
  const kills = [];
  let next = 0;
  for (let w = 0; w < waves; w++) {
    const batch = jobs.slice(next, next + Math.ceil((total - next) / (waves - w)));
    next += batch.length;
    for (const j of batch) poller.known.add(j.module);
    const delays = batch.map(() => Math.round(rng.next() * windowMs));
    log(`bucket-races: kills, wave ${w + 1}/${waves}: ${batch.map((j, i) => `${j.module} ${j.version} after ${delays[i]} ms`).join('; ')}`);
    const runs = batch.map((j) => spawnCli(ctx, publishArgs(ctx, prefix, j.module, j.version)));
    const waveStart = poller.now();
    const timers = runs.map((r, i) => setTimeout(r.kill, delays[i]));
    const results = await Promise.all(runs.map((r) => r.done));
    timers.forEach(clearTimeout);
    // Let the poller see what the wave left, before the next one starts.
    await poller.look(`after wave ${w + 1}`);
    const manifest = await truthOf(ctx, prefix);
    const outcomes = results.map((r, i) => {
      const { module, version } = batch[i];
      const listed = listsVersion(manifest, module, version);
      kills.push({ module, version, delay: delays[i], outcome: outcome(r), inManifest: listed });
      if (r.signal === 'SIGKILL' && !r.timedOut) {
        phases[listed ? 'after' : 'before']++;
        return `${outcome(r)}${listed ? ' (landed)' : ''}`;
      }
      if (r.code !== 0) problems.push(`wave ${w + 1}: publish ${module} ${version}, not killed, ${outcome(r)}\n${printed(r)}`);
      else {
        phases.finished++;
        if (!listed) problems.push(`wave ${w + 1}: publish ${module} ${version} exited 0, but its module state lacks it`);
        else if (!poller.everListed.get(module)?.has(version))
          problems.push(`wave ${w + 1}: publish ${module} ${version} exited 0, but its versions document never listed it`);
      }
      return outcome(r);
    });
    log(
      `bucket-races: kills, wave ${w + 1}/${waves} (started at ${waveStart} ms): ${outcomes.join(', ')}; holes so far ${poller.holes.size}, unlistings ${poller.unlistings.size}`,
    );
  }

  const after = 'acme/after/aws';
  poller.known.add(after);
  const last = await run(ctx, publishArgs(ctx, prefix, after, '1.0.0'));
  if (last.code !== 0) problems.push(`after the kills: publish ${after} 1.0.0 ${outcome(last)}\n${printed(last)}`);
  await poller.stop();
  await poller.look('after the kills and one more publish', { full: true });
  const checked = await run(ctx, ['verify', url(prefix), ...ctx.rgw.flags]);
  if (checked.code !== 0) problems.push(`after the kills: verify ${url(prefix)} ${outcome(checked)}\n${printed(checked)}`);
  const clean = last.code === 0 && checked.code === 0;
  log(
    `bucket-races: kills: ${phases.before} killed before their commit (their module's state), ${phases.after} after it, ${phases.finished} finished first; ${poller.passes} poller passes, ${poller.reads} reads; verify ${checked.code === 0 ? 'ok' : 'FAILED'}`,
  );
  // What the versions documents list in the end, against the manifest: an unlisting that stayed.
  const manifest = await truthOf(ctx, prefix);
  for (const [m, { versions }] of Object.entries(manifest?.modules ?? {})) {
    const doc = await readJson(ctx, `${prefix}v1/modules/${m}/versions`);
    const listed = new Set((doc?.modules?.[0]?.versions ?? []).map((v) => v.version));
    const unlisted = versions.map((v) => v.version).filter((v) => !listed.has(v));
    if (unlisted.length > 0) problems.push(`in the end: the state of ${m} has ${unlisted.join(', ')}, its versions document does not list them`);
  }
  const unlistingTexts = [...poller.unlistings.values()].map(
    (u) => `${u.text}; ${u.back === undefined ? 'never listed again' : `listed again at ${u.back} ms`}`,
  );
  problems.push(...poller.errors, ...poller.holes.values(), ...unlistingTexts);
  report(label, problems);
  const detail = { seed, soloMs: solo, inWaveMs: inWave, windowMs, phases, kills, problems, passes: poller.passes, reads: poller.reads };
  return [
    {
      name: `${label}: holes (a listed version without its archive)`,
      modmirror: poller.holes.size,
      baseline: null,
      ratio: null,
      target: 'none',
      unit: 'holes',
      pass: poller.holes.size === 0,
      detail,
    },
    {
      name: '↳ unlistings (a version listed, later not)',
      modmirror: poller.unlistings.size,
      baseline: null,
      ratio: null,
      target: 'none',
      unit: 'unlistings',
      pass: poller.unlistings.size === 0,
    },
    {
      name: '↳ then one more publish, and verify s3:// exits 0',
      modmirror: clean ? 'yes' : 'no',
      baseline: null,
      ratio: null,
      target: 'yes',
      unit: '',
      pass: clean,
    },
    {
      name: `↳ kills within 0–${(windowMs / 1000).toFixed(1)} s: ${phases.before} before the commit, ${phases.after} after it, ${phases.finished} publishes finished first; the longest of ${wave} unkilled publishes at once (baseline: one alone)`,
      modmirror: inWave / 1000,
      baseline: solo / 1000,
      ratio: inWave / solo,
      target: null,
      unit: 's',
    },
  ];
}
