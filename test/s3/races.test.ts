// Writers racing for one mirror in a bucket of a real S3 server (Ceph RGW,
// test/s3/rgw.sh), each a real process of the compiled CLI: six publishes of
// six different modules at once all land and leave a mirror that verifies,
// with every module in its state and the browse page's rows; of three
// publishes of one version with other bytes exactly one lands and each loser
// names both sha256 values; five deprecations at once are all kept; publishes
// killed (SIGKILL) at random instants never leave a listed version without
// its archive nor unlist a version, and the next publish leaves a mirror that
// verifies; and a push racing a publish of another module both land, and the
// next publish writes a prefix that verifies. Each scenario runs a few rounds and checks every round;
// what a round got wrong is collected and the scenario fails on the list.
// The kill delays come from a seeded generator: RACES_SEED=N replays a run
// (the seed and delays are logged), RACES_KILL_ROUNDS=N runs more rounds.

import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { moduleOfStateFile, parseModuleState, withModuleStates, type Manifest as MirrorManifest } from '../../src/mirror/manifest.js';
import { runCli, spawnKillable, tempDir, writeFiles } from '../helpers.js';
import { moduleSource, outcome, publishArgs as sharedPublishArgs, raceRandom, said } from '../races.js';
import { startRgw, type Rgw } from './rgw.js';

const dir = tempDir('mm-races-');
const BUCKET = 'races';
let rgw: Rgw;
const started = performance.now();

beforeAll(async () => {
  rgw = await startRgw(join(dir, 'rgw'));
  await rgw.createBucket(BUCKET);
}, 120_000);
afterAll(async () => {
  await rgw?.stop();
  console.log(`race tests: ${((performance.now() - started) / 1000).toFixed(1)} s with the RGW start and stop`);
}, 60_000);

interface Manifest {
  modules: Record<string, { versions: { version: string; sha256: string; archive: string }[] }>;
}
interface VersionsDoc {
  modules: { versions: { version: string; deprecation?: { reason: string } | null }[] }[];
}

const spawned = (args: string[]) => spawnKillable(args, dir, rgw.env).done;
const cli = (args: string[]) => runCli(args, dir, rgw.env);

const url = (prefix: string) => `s3://${BUCKET}/${prefix}`;
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');
const source = (label: string, value: string) => moduleSource(join(dir, 'src', label), value);
/** A publish into a folder, or into the bucket with the flags that point at the RGW. */
const publishArgs = (module: string, version: string, src: string, out: string, extra: string[] = []) =>
  sharedPublishArgs(module, version, src, out, [...(out.startsWith('s3://') ? rgw.flags : []), ...extra]);
const publishTo = (prefix: string, module: string, version: string, extra: string[] = []) =>
  publishArgs(module, version, source(`${prefix}${module}/${version}`, `${module} ${version}`), url(prefix), extra);

async function readJson<T>(rel: string): Promise<T | undefined> {
  const object = await rgw.get(BUCKET, rel);
  return object && (JSON.parse(object.body.toString()) as T);
}
/** The browse page's rows of a namespace, as the page reads them: its list of pages, then each page. */
async function browseRows(prefix: string, namespace: string): Promise<string[][]> {
  const list = await readJson<{ pages: string[] }>(`${prefix}browse/modules/${namespace}/index.json`);
  const pages = await Promise.all((list?.pages ?? []).map((page) => readJson<{ modules: string[][] }>(`${prefix}browse/modules/${namespace}/${page}.json`)));
  return pages.flatMap((page) => page?.modules ?? []);
}
/** The bucket's whole manifest: its root and every module's state, as modmirror reads them. */
async function manifestOf(prefix: string): Promise<Manifest> {
  const root = await readJson<Manifest>(`${prefix}manifest.json`);
  if (!root) return { modules: {} };
  const states = [];
  for (const rel of (await rgw.list(BUCKET, `${prefix}state/`)).keys())
    states.push(parseModuleState((await rgw.get(BUCKET, rel))!.body.toString(), moduleOfStateFile(rel.slice(prefix.length))!));
  return withModuleStates({ ...(root as unknown as MirrorManifest), modules: {} }, states);
}
const versionsOf = (manifest: Manifest, module: string) => manifest.modules[module]?.versions.map((v) => v.version) ?? [];

async function verify(prefix: string, problems: string[], when: string): Promise<void> {
  const result = await cli(['verify', '--mirror', url(prefix), ...rgw.flags]);
  if (result.code !== 0)
    problems.push(`${when}: verify ${url(prefix)} exit ${result.code}: ${said(result)} ${result.stdout.trim().split('\n').slice(0, 3).join(' | ')}`);
}

describe('writers racing for one prefix', () => {
  it('lands six publishes of six different modules at once, every round, and the mirror verifies', async () => {
    const prefix = 'different/';
    const problems: string[] = [];
    const seeded = await cli(publishTo(prefix, 'acme/seed/aws', '1.0.0', ['--new-mirror']));
    expect(seeded.code, seeded.stderr).toBe(0);
    let landed = new Set(['acme/seed/aws']);
    for (let round = 1; round <= 3; round++) {
      const modules = Array.from({ length: 6 }, (_, i) => `acme/r${round}w${i}/aws`);
      const t0 = performance.now();
      const results = await Promise.all(modules.map((m) => spawned(publishTo(prefix, m, '1.0.0'))));
      const attempts = results.map((r) => (r.code === 0 ? (JSON.parse(r.stdout) as { attempts: number }).attempts : outcome(r)));
      console.log(`different modules, round ${round}: ${((performance.now() - t0) / 1000).toFixed(1)} s, attempts ${attempts.join(', ')}`);
      results.forEach((r, i) => r.code !== 0 && problems.push(`round ${round}: publish ${modules[i]} 1.0.0 exit ${r.code}: ${said(r)}`));
      const manifest = await manifestOf(prefix);
      for (const m of [...landed, ...modules])
        if (!versionsOf(manifest, m).includes('1.0.0'))
          problems.push(`round ${round}: the states lack ${m} 1.0.0${landed.has(m) ? ' (it was there after the round before)' : ''}`);
      await verify(prefix, problems, `round ${round}`);
      const searchable = new Set((await browseRows(prefix, 'acme')).map((row) => row.slice(0, 3).join('/')));
      for (const m of Object.keys(manifest.modules))
        if (!searchable.has(m)) problems.push(`round ${round}: the browse page's rows of acme lack ${m}, which its state lists`);
      landed = new Set([...landed, ...Object.keys(manifest.modules)]);
    }
    expect(problems).toEqual([]);
  }, 150_000);

  it('lands one of three publishes of one version with other bytes, and each loser names both sha256 values', async () => {
    const prefix = 'same/';
    const problems: string[] = [];
    expect((await cli(publishTo(prefix, 'acme/seed/aws', '1.0.0', ['--new-mirror']))).code).toBe(0);
    for (let round = 1; round <= 3; round++) {
      const version = `1.${round}.0`;
      const sources = [0, 1, 2].map((i) => source(`same-r${round}w${i}`, `round ${round} writer ${i}`));
      // Each writer's own sha256, from a publish of the same source into a folder of its own.
      const own = await Promise.all(
        sources.map(async (src, i) => {
          const scratch = await cli(publishArgs('acme/same/aws', version, src, join(dir, 'scratch', `r${round}w${i}`), ['--new-mirror']));
          expect(scratch.code, scratch.stderr).toBe(0);
          return (JSON.parse(scratch.stdout) as { sha256: string }).sha256;
        }),
      );
      expect(new Set(own).size).toBe(3);
      const results = await Promise.all(sources.map((src) => spawned(publishArgs('acme/same/aws', version, src, url(prefix)))));
      console.log(`same version, round ${round}: ${results.map(outcome).join(', ')}`);
      const winners = results.flatMap((r, i) => (r.code === 0 ? [i] : []));
      if (winners.length !== 1) problems.push(`round ${round}: ${winners.length} publishes of acme/same/aws ${version} exited 0, not 1`);
      const entry = (await manifestOf(prefix)).modules['acme/same/aws']?.versions.find((v) => v.version === version);
      if (!entry) {
        problems.push(`round ${round}: manifest.json lacks acme/same/aws ${version}`);
        continue;
      }
      if (!own.includes(entry.sha256)) problems.push(`round ${round}: the manifest's sha256 ${entry.sha256} is none of the three writers'`);
      if (winners.length === 1 && own[winners[0]!] !== entry.sha256)
        problems.push(`round ${round}: the writer that exited 0 is not the one the manifest names`);
      results.forEach((r, i) => {
        if (r.code === 0) return;
        if (r.code !== 1) problems.push(`round ${round}: loser ${i} exit ${r.code}, not 1: ${said(r)}`);
        const missing = [entry.sha256, own[i]!].filter((h) => !r.stderr.includes(h));
        if (missing.length > 0) problems.push(`round ${round}: loser ${i}'s stderr lacks sha256 ${missing.join(' and ')}: ${said(r)}`);
      });
      const archive = await rgw.get(BUCKET, `${prefix}${entry.archive}`);
      if (!archive) problems.push(`round ${round}: ${entry.archive} is missing`);
      else if (sha256(archive.body) !== entry.sha256)
        problems.push(`round ${round}: ${entry.archive} has sha256 ${sha256(archive.body)}, the manifest ${entry.sha256}`);
      await verify(prefix, problems, `round ${round}`);
    }
    expect(problems).toEqual([]);
  }, 120_000);

  it('keeps all five deprecations made at once, of five versions of one module', async () => {
    const prefix = 'deprecate/';
    const problems: string[] = [];
    for (let round = 1; round <= 2; round++) {
      const module = `acme/dep${round}/aws`;
      const versions = ['1.0.0', '1.1.0', '1.2.0', '1.3.0', '1.4.0'];
      for (const [i, v] of versions.entries()) {
        const published = await cli(publishTo(prefix, module, v, round === 1 && i === 0 ? ['--new-mirror'] : []));
        expect(published.code, published.stderr).toBe(0);
      }
      const reason = (v: string) => `round ${round}: ${v} is withdrawn`;
      const results = await Promise.all(versions.map((v) => spawned(['deprecate', module, v, '--reason', reason(v), '--mirror', url(prefix), ...rgw.flags])));
      console.log(`deprecations, round ${round}: ${results.map(outcome).join(', ')}`);
      results.forEach((r, i) => r.code !== 0 && problems.push(`round ${round}: deprecate ${module} ${versions[i]} exit ${r.code}: ${said(r)}`));
      const listed = await readJson<VersionsDoc>(`${prefix}v1/modules/${module}/versions`);
      for (const v of versions) {
        const inVersions = listed?.modules[0]?.versions.find((x) => x.version === v)?.deprecation?.reason;
        if (inVersions !== reason(v)) problems.push(`round ${round}: the versions document has ${v}'s deprecation as ${JSON.stringify(inVersions)}`);
        const detail = await readJson<{ deprecation?: { reason: string } | null }>(`${prefix}v1/modules/${module}/${v}/index.json`);
        if (detail?.deprecation?.reason !== reason(v)) problems.push(`round ${round}: ${v}/index.json has deprecation ${JSON.stringify(detail?.deprecation)}`);
      }
      await verify(prefix, problems, `round ${round}`);
    }
    expect(problems).toEqual([]);
  }, 120_000);

  it('never lists a version without its archive, nor unlists one, while publishes are killed at random instants', async () => {
    const prefix = 'kill/';
    const problems: string[] = [];
    const { next } = raceRandom('kills');
    const known = new Set(['acme/k0/aws', 'acme/k1/aws']);
    expect((await cli(publishTo(prefix, 'acme/k0/aws', '1.0.0', ['--new-mirror']))).code).toBe(0);
    // A publish on its own, timed: the kills fall within 0-1500 ms, or 2.5 times that on a slower machine.
    const solo = await spawned(publishTo(prefix, 'acme/k1/aws', '1.0.0'));
    expect(solo.code, solo.stderr).toBe(0);
    const window = Math.max(1500, Math.round(2.5 * solo.ms));
    const rounds = Number(process.env['RACES_KILL_ROUNDS'] ?? 3);
    console.log(`kills: a publish alone takes ${solo.ms} ms; kills within ${window} ms`);

    // What a client reading the bucket saw: a listed version with no archive, and a version listed once and gone later.
    const holes = new Set<string>();
    const unlisted = new Set<string>();
    const everListed = new Map<string, Set<string>>();
    // Versions whose archive was seen: archives are immutable and nothing here deletes one, so they are not read again.
    const whole = new Set<string>();
    const firstSeen: string[] = [];
    let reads = 0;
    let roundStart = 0;
    const look = async (when: string, again = false) => {
      await Promise.all(
        [...known].map(async (m) => {
          const doc = await readJson<VersionsDoc>(`${prefix}v1/modules/${m}/versions`);
          if (!doc) return;
          reads++;
          const listed = doc.modules[0]?.versions.map((v) => v.version) ?? [];
          const before = everListed.get(m) ?? new Set<string>();
          for (const v of before) if (!listed.includes(v)) unlisted.add(`${m} ${v}: listed by its versions document, later not (${when})`);
          for (const v of listed) if (!before.has(v)) firstSeen.push(`${m} ${v} at ${Math.round(performance.now() - roundStart)} ms`);
          everListed.set(m, new Set([...before, ...listed]));
          for (const v of listed) {
            if (whole.has(`${m} ${v}`) && !again) continue;
            const download = await readJson<{ location: string }>(`${prefix}v1/modules/${m}/${v}/download`);
            if (!download) {
              holes.add(`${m} ${v}: listed, but its download document is missing (${when})`);
              continue;
            }
            const archive = await rgw.get(BUCKET, `${prefix}v1/modules/${m}/${v}/${download.location.replace(/^\.\//, '')}`);
            if (!archive || archive.body.length === 0) holes.add(`${m} ${v}: listed, but its archive ${download.location} is missing (${when})`);
            else whole.add(`${m} ${v}`);
          }
        }),
      );
    };

    for (let round = 1; round <= rounds; round++) {
      const jobs = [
        { module: 'acme/k0/aws', version: `1.${round}.0` },
        { module: 'acme/k0/aws', version: `1.${round}.1` },
        { module: 'acme/k1/aws', version: `1.${round}.0` },
        { module: `acme/k${round}a/aws`, version: '1.0.0' },
        { module: `acme/k${round}b/aws`, version: '1.0.0' },
      ];
      for (const j of jobs) known.add(j.module);
      const delays = jobs.map(() => Math.round(next() * window));
      console.log(`kills, round ${round}: ${jobs.map((j, i) => `${j.module} ${j.version} after ${delays[i]} ms`).join('; ')}`);
      roundStart = performance.now();
      firstSeen.length = 0;
      let running = true;
      const poller = (async () => {
        const deadline = performance.now() + 20_000;
        while (running && performance.now() < deadline) {
          await look(`round ${round}`);
          await new Promise((r) => setTimeout(r, 10));
        }
      })();
      const runs = jobs.map((j) => spawnKillable(publishTo(prefix, j.module, j.version), dir, rgw.env));
      const timers = runs.map((r, i) => setTimeout(() => r.kill(), delays[i]));
      const results = await Promise.all(runs.map((r) => r.done));
      timers.forEach(clearTimeout);
      running = false;
      await poller;
      await look(`round ${round}, after its writers`);
      console.log(`kills, round ${round}: ${results.map(outcome).join(', ')}; first listed: ${firstSeen.join(', ') || 'nothing new'}`);
      // A writer that finished before its kill must have done its job: its version is in the manifest and listed.
      const manifest = await manifestOf(prefix);
      for (const [i, r] of results.entries()) {
        const { module, version } = jobs[i]!;
        if (r.signal) continue;
        if (r.code !== 0) problems.push(`round ${round}: unkilled publish ${module} ${version} exit ${r.code}: ${said(r)}`);
        else if (!versionsOf(manifest, module).includes(version)) problems.push(`round ${round}: ${module} ${version} exited 0 but its state lacks it`);
        else if (!everListed.get(module)?.has(version))
          problems.push(`round ${round}: ${module} ${version} exited 0 but its versions document never listed it`);
      }
    }
    const after = await cli(publishTo(prefix, 'acme/after/aws', '1.0.0'));
    if (after.code !== 0) problems.push(`after the kills: publish acme/after/aws 1.0.0 exit ${after.code}: ${said(after)}`);
    await look('after the kills', true);
    await verify(prefix, problems, 'after the kills');
    console.log(`kills: ${reads} versions documents read while writers ran`);
    expect([...problems, ...holes, ...unlisted]).toEqual([]);
  }, 150_000);

  it('lands a push and a publish of other modules at once, and the next publish writes the prefix', async () => {
    const problems: string[] = [];
    const mods = join(dir, 'push-mods');
    const folder = join(dir, 'push-dist');
    const addModules = (names: string[]) => {
      for (const n of names) writeFiles(join(mods, 'acme', n, 'aws', '1.0.0'), { 'main.tf': `output "v" {\n  value = "${n}"\n}\n` });
    };
    const build = async () => {
      const built = await cli(['build', '--modules', mods, '--mirror', folder, '--json']);
      expect(built.code, built.stderr).toBe(0);
    };
    addModules(['p0']);
    await build();
    // Where the publish meets the push: at its start, once its first archive is stored, once its first document is.
    const meetings = ['at once', 'archive', 'document'];
    for (const [r, meeting] of meetings.entries()) {
      const round = r + 1;
      const prefix = `push${round}/`;
      const base = await cli(['push', url(prefix), '--mirror', folder, ...rgw.flags]);
      expect(base.code, base.stderr).toBe(0);
      // Many new modules, stored one at a time: the push takes longer than a publish, which lands meanwhile.
      const added = Array.from({ length: 60 }, (_, i) => `r${round}p${i}`);
      addModules(added);
      await build();
      const t0 = performance.now();
      const push = spawned(['push', url(prefix), '--mirror', folder, ...rgw.flags, '--concurrency', '1', '--json']);
      let pushed: Awaited<typeof push> | undefined;
      void push.then((r) => (pushed = r));
      const first = `${prefix}v1/modules/acme/${added[0]}/aws/1.0.0/${meeting === 'archive' ? `${added[0]}-aws-1.0.0.tar.gz` : 'download'}`;
      while (meeting !== 'at once' && !pushed && !(await rgw.get(BUCKET, first))) await new Promise((r) => setTimeout(r, 10));
      const met = Math.round(performance.now() - t0);
      const publish = await spawned(publishTo(prefix, 'acme/other/aws', '1.0.0'));
      pushed = await push;
      console.log(
        `push against publish, round ${round} (publish started ${meeting}, at ${met} ms): push ${outcome(pushed)}: ${said(pushed)}; publish ${outcome(publish)}`,
      );
      // The push and the publish change different modules: each stores its own states, and neither refuses the other.
      if (pushed.code !== 0) problems.push(`round ${round}: the push exit ${pushed.code}: ${said(pushed)}`);
      if (publish.code !== 0) problems.push(`round ${round}: the publish exit ${publish.code}: ${said(publish)}`);
      const again = await cli(publishTo(prefix, 'acme/next/aws', '1.0.0'));
      if (again.code !== 0)
        problems.push(`round ${round}: the next publish exit ${again.code}: ${said(again)} (push: ${outcome(pushed)}, publish: ${outcome(publish)})`);
      await verify(prefix, problems, `round ${round}`);
      const manifest = await manifestOf(prefix);
      for (const [m, { versions }] of Object.entries(manifest.modules))
        if (versions.length === 0) problems.push(`round ${round}: ${m} has a state with no versions`);
      for (const m of [...added.map((n) => `acme/${n}/aws`), 'acme/other/aws', 'acme/next/aws'])
        if (!versionsOf(manifest, m).includes('1.0.0')) problems.push(`round ${round}: the states lack ${m} 1.0.0`);
    }
    expect(problems).toEqual([]);
  }, 240_000);
});
