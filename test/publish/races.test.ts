// Writers racing for one mirror in a folder, each a real process of the
// compiled CLI, as release pipelines run them (the twin of
// test/s3/races.test.ts for a bucket): six publishes of six new modules at
// once all land, each in its state and its listings; of three publishes of
// one version with other bytes exactly one lands, each loser names both
// sha256 values, and the archive is the winner's; five deprecations at once
// are all kept; and publishes killed (SIGKILL) at random instants never leave
// a listed version without its download document and archive, nor unlist a
// version or a module, and the next publish recovers what they left (a lock,
// a change gathered or half applied). Each scenario runs a few rounds, checks
// every round (verify, and nothing left beside the mirror), collects what a
// round got wrong and fails on the list.
// The kill delays come from a seeded generator: RACES_SEED=N replays a run
// (the seed and delays are logged), RACES_KILL_ROUNDS=N runs more rounds.

import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mirrorLeftovers, runCli, spawnKillable, tempDir, type Ended } from '../helpers.js';
import { moduleSource, outcome, publishArgs, raceRandom, said } from '../races.js';

const dir = tempDir('mm-folder-races-');
const started = performance.now();
afterAll(() => console.log(`folder race tests: ${((performance.now() - started) / 1000).toFixed(1)} s`));

const spawned = (args: string[]) => spawnKillable(args, dir).done;
const cli = (args: string[]) => runCli(args, dir);
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** Each scenario's mirror: `dist` in a folder of its own, as a pipeline names it. */
const mirrorOf = (scenario: string) => join(dir, scenario, 'dist');
const source = (label: string, value: string) => moduleSource(join(dir, 'src', label), value);
const publishTo = (scenario: string, module: string, version: string, extra: string[] = []) =>
  publishArgs(module, version, source(`${scenario}/${module}/${version}`, `${module} ${version}`), mirrorOf(scenario), extra);

interface State {
  versions: { version: string; sha256: string; archive: string; deprecation?: { reason: string } }[];
}
interface VersionsDoc {
  modules: { versions: { version: string; deprecation?: { reason: string } | null }[] }[];
}
interface Listing {
  modules: { namespace: string; name: string; provider: string; version: string }[];
}

/** A file of the mirror as JSON, or undefined when it is not there (a torn file throws). */
async function readJson<T>(mirror: string, rel: string): Promise<T | undefined> {
  let text: string;
  try {
    text = await readFile(join(mirror, rel), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(`${rel} is not whole JSON: ${JSON.stringify(text.slice(0, 80))}`);
  }
}
/** A module's state, its truth: `state/NS/NAME.PROVIDER.json`. */
const stateFile = (module: string) => {
  const [ns, name, provider] = module.split('/');
  return `state/${ns}/${name}.${provider}.json`;
};
/** The modules the browse page's pages of a namespace have a row for (docs/browse-page.md). */
async function browseRows(mirror: string, namespace: string): Promise<Set<string>> {
  const list = await readJson<{ pages: string[] }>(mirror, `browse/modules/${namespace}/index.json`);
  const keys = new Set<string>();
  for (const page of list?.pages ?? []) {
    const rows = await readJson<{ modules: string[][] }>(mirror, `browse/modules/${namespace}/${page}.json`);
    for (const row of rows?.modules ?? []) keys.add(row.slice(0, 3).join('/'));
  }
  return keys;
}

const stateOf = (mirror: string, module: string) => readJson<State>(mirror, stateFile(module));
const versionsIn = async (mirror: string, module: string) => (await stateOf(mirror, module))?.versions.map((v) => v.version) ?? [];
const listed = async (mirror: string, module: string) =>
  (await readJson<VersionsDoc>(mirror, `v1/modules/${module}/versions`))?.modules[0]?.versions.map((v) => v.version) ?? [];
const inListing = async (mirror: string, namespace: string) =>
  new Set((await readJson<Listing>(mirror, `v1/modules/${namespace}/index.json`))?.modules.map((m) => `${m.namespace}/${m.name}/${m.provider}`));

/** After a round: the mirror verifies, and its writers left nothing beside it (a lock, staging, a change). */
async function checkMirror(mirror: string, problems: string[], when: string): Promise<void> {
  const result = await cli(['verify', '--mirror', mirror]);
  if (result.code !== 0) problems.push(`${when}: verify exit ${result.code}: ${said(result)} ${result.stdout.trim().split('\n').slice(0, 3).join(' | ')}`);
  const left = await mirrorLeftovers(dirname(mirror));
  if (left.length > 0) problems.push(`${when}: left beside the mirror: ${left.join(', ')}`);
}

/** What killed writers left beside the mirror, for the log: the lock, and each change with or without its journal. */
function leftBy(mirror: string): string[] {
  const parent = dirname(mirror);
  return readdirSync(parent)
    .filter((n) => n !== 'dist' && !n.startsWith('.dist.gen-'))
    .map((n) => (n.startsWith('.dist.delta-') ? `${n} (${existsSync(join(parent, n, 'journal.json')) ? 'journaled' : 'no journal'})` : n));
}

/**
 * What the writer `pid` is doing to the mirror at this instant, for the log, as what it has beside the mirror
 * shows: its change being gathered (`.dist.delta-PID-…`) or applied (with its journal), its file in the lock
 * folder, or its own lock prepared beside it while it waits (src/mirror/lock.ts).
 */
function doing(mirror: string, pid: number | undefined): string {
  const beside = readdirSync(dirname(mirror));
  const change = beside.find((n) => n.startsWith(`.dist.delta-${pid}-`));
  if (change) return existsSync(join(dirname(mirror), change, 'journal.json')) ? 'applying its change' : 'gathering its change';
  let holders: string[] = [];
  try {
    holders = readdirSync(`${mirror}.lock`);
  } catch {
    // No lock.
  }
  if (holders.some((n) => n.startsWith(`${pid}-`))) return 'holding the lock';
  return beside.some((n) => n.startsWith(`.dist.lock-${pid}-`)) ? 'waiting for the lock' : 'starting or ending';
}

describe('writers racing for one mirror in a folder', () => {
  it('lands six publishes of six new modules at once, every round, each in its state and listings', async () => {
    const mirror = mirrorOf('different');
    const problems: string[] = [];
    const seeded = await cli(publishTo('different', 'acme/seed/aws', '1.0.0', ['--new-mirror']));
    expect(seeded.code, seeded.stderr).toBe(0);
    const landed = new Set(['acme/seed/aws']);
    for (let round = 1; round <= 3; round++) {
      // A namespace a round: its listing's first page (15) shows every module it has.
      const modules = Array.from({ length: 6 }, (_, i) => `round${round}/m${i}/aws`);
      const t0 = performance.now();
      const results = await Promise.all(modules.map((m) => spawned(publishTo('different', m, '1.0.0'))));
      console.log(`different modules, round ${round}: ${((performance.now() - t0) / 1000).toFixed(1)} s: ${results.map(outcome).join(', ')}`);
      results.forEach((r, i) => r.code !== 0 && problems.push(`round ${round}: publish ${modules[i]} 1.0.0 exit ${r.code}: ${said(r)}`));
      for (const m of [...landed, ...modules]) {
        const was = landed.has(m) ? ' (it was there after the round before)' : '';
        const namespace = m.slice(0, m.indexOf('/'));
        if (!(await versionsIn(mirror, m)).includes('1.0.0')) problems.push(`round ${round}: ${stateFile(m)} lacks 1.0.0${was}`);
        if (!(await listed(mirror, m)).includes('1.0.0')) problems.push(`round ${round}: v1/modules/${m}/versions lacks 1.0.0${was}`);
        if (!(await inListing(mirror, namespace)).has(m)) problems.push(`round ${round}: v1/modules/${namespace}/index.json lacks ${m}${was}`);
        if (!(await browseRows(mirror, namespace)).has(m)) problems.push(`round ${round}: browse/modules/${namespace}/ lacks a row of ${m}${was}`);
      }
      for (const m of modules) if ((await versionsIn(mirror, m)).includes('1.0.0')) landed.add(m);
      await checkMirror(mirror, problems, `round ${round}`);
    }
    expect(problems).toEqual([]);
  }, 60_000);

  it('lands one of three publishes of one version with other bytes, each loser naming both sha256 values', async () => {
    const mirror = mirrorOf('same');
    const problems: string[] = [];
    expect((await cli(publishTo('same', 'acme/seed/aws', '1.0.0', ['--new-mirror']))).code).toBe(0);
    for (let round = 1; round <= 3; round++) {
      const version = `1.${round}.0`;
      const sources = [0, 1, 2].map((i) => source(`same-r${round}w${i}`, `round ${round} writer ${i}`));
      // Each writer's own sha256, from a publish of the same source into a mirror of its own.
      const own: string[] = [];
      for (const [i, src] of sources.entries()) {
        const scratch = await cli(publishArgs('acme/same/aws', version, src, join(dir, 'scratch', `r${round}w${i}`), ['--new-mirror']));
        expect(scratch.code, scratch.stderr).toBe(0);
        own.push((JSON.parse(scratch.stdout) as { sha256: string }).sha256);
      }
      expect(new Set(own).size).toBe(3);
      const results = await Promise.all(sources.map((src) => spawned(publishArgs('acme/same/aws', version, src, mirror))));
      console.log(`same version, round ${round}: ${results.map(outcome).join(', ')}`);
      const winners = results.flatMap((r, i) => (r.code === 0 ? [i] : []));
      if (winners.length !== 1) problems.push(`round ${round}: ${winners.length} publishes of acme/same/aws ${version} exited 0, not 1`);
      const entry = (await stateOf(mirror, 'acme/same/aws'))?.versions.find((v) => v.version === version);
      if (!entry) {
        problems.push(`round ${round}: state/acme/same.aws.json lacks ${version}`);
        continue;
      }
      if (!own.includes(entry.sha256)) problems.push(`round ${round}: the state's sha256 ${entry.sha256} is none of the three writers'`);
      if (winners.length === 1 && own[winners[0]!] !== entry.sha256) problems.push(`round ${round}: the writer that exited 0 is not the one the state names`);
      results.forEach((r, i) => {
        if (r.code === 0) return;
        if (r.code !== 1) problems.push(`round ${round}: loser ${i} exit ${r.code}, not 1: ${said(r)}`);
        const missing = [entry.sha256, own[i]!].filter((h) => !r.stderr.includes(h));
        if (missing.length > 0) problems.push(`round ${round}: loser ${i}'s stderr lacks sha256 ${missing.join(' and ')}: ${said(r)}`);
      });
      const archive = readFileSync(join(mirror, entry.archive));
      if (sha256(archive) !== entry.sha256) problems.push(`round ${round}: ${entry.archive} has sha256 ${sha256(archive)}, the state ${entry.sha256}`);
      await checkMirror(mirror, problems, `round ${round}`);
    }
    expect(problems).toEqual([]);
  }, 60_000);

  it('keeps all five deprecations made at once, of five versions of one module', async () => {
    const mirror = mirrorOf('deprecate');
    const problems: string[] = [];
    for (let round = 1; round <= 2; round++) {
      const module = `acme/dep${round}/aws`;
      const versions = ['1.0.0', '1.1.0', '1.2.0', '1.3.0', '1.4.0'];
      for (const [i, v] of versions.entries()) {
        const published = await cli(publishTo('deprecate', module, v, round === 1 && i === 0 ? ['--new-mirror'] : []));
        expect(published.code, published.stderr).toBe(0);
      }
      const reason = (v: string) => `round ${round}: ${v} is withdrawn`;
      const results = await Promise.all(versions.map((v) => spawned(['deprecate', module, v, '--reason', reason(v), '--mirror', mirror])));
      console.log(`deprecations, round ${round}: ${results.map(outcome).join(', ')}`);
      results.forEach((r, i) => r.code !== 0 && problems.push(`round ${round}: deprecate ${module} ${versions[i]} exit ${r.code}: ${said(r)}`));
      const state = await stateOf(mirror, module);
      const doc = await readJson<VersionsDoc>(mirror, `v1/modules/${module}/versions`);
      for (const v of versions) {
        const inState = state?.versions.find((x) => x.version === v)?.deprecation?.reason;
        if (inState !== reason(v)) problems.push(`round ${round}: the state has ${v}'s deprecation as ${JSON.stringify(inState)}`);
        const inVersions = doc?.modules[0]?.versions.find((x) => x.version === v)?.deprecation?.reason;
        if (inVersions !== reason(v)) problems.push(`round ${round}: the versions document has ${v}'s deprecation as ${JSON.stringify(inVersions)}`);
        const detail = await readJson<{ deprecation?: { reason: string } | null }>(mirror, `v1/modules/${module}/${v}/index.json`);
        if (detail?.deprecation?.reason !== reason(v)) problems.push(`round ${round}: ${v}/index.json has deprecation ${JSON.stringify(detail?.deprecation)}`);
      }
      await checkMirror(mirror, problems, `round ${round}`);
    }
    expect(problems).toEqual([]);
  }, 60_000);

  it('never lists a version without its archive, nor unlists one, while publishes are killed at random instants', async () => {
    const mirror = mirrorOf('kill');
    const problems: string[] = [];
    const { next } = raceRandom('kills');
    // Each version carries a file of random bytes (which gzip cannot shrink), so a publish spends a good part of
    // its life under the mirror's lock, packing and writing, where a kill leaves the most behind.
    const publishKilled = (module: string, version: string, extra: string[] = []) => {
      const src = source(`kill/${module}/${version}`, `${module} ${version}`);
      writeFileSync(join(src, 'blob.bin'), randomBytes(2 << 20));
      return publishArgs(module, version, src, mirror, extra);
    };
    expect((await cli(publishKilled('acme/k0/aws', '0.1.0', ['--new-mirror']))).code).toBe(0);
    const jobsOf = (round: number) => [
      { module: 'acme/k0/aws', version: `1.${round}.0` },
      { module: 'acme/k0/aws', version: `1.${round}.1` },
      { module: 'acme/k1/aws', version: `1.${round}.0` },
      { module: `round${round}/a/aws`, version: '1.0.0' },
      { module: `round${round}/b/aws`, version: '1.0.0' },
    ];
    // A round's publishes unkilled, timed: they start together and take the lock in turn, and the kills of the
    // rounds after fall anywhere from their start to the end of the last one.
    const unkilled = await Promise.all(jobsOf(0).map((j) => spawned(publishKilled(j.module, j.version))));
    for (const r of unkilled) expect(r.code, r.stderr).toBe(0);
    const window = Math.max(...unkilled.map((r) => r.ms));
    const rounds = Number(process.env['RACES_KILL_ROUNDS'] ?? 5);
    console.log(`kills: ${jobsOf(0).length} publishes at once, unkilled: ${unkilled.map(outcome).join(', ')}; kills within ${window} ms`);

    // What a reader of the folder saw: a listed version without its download document or archive, a version or a
    // module listed once and gone later, a document not whole.
    const seen = new Set<string>();
    const everListed = new Map<string, Set<string>>();
    const modules = new Set(jobsOf(0).map((j) => j.module));
    // Versions whose archive was seen: nothing here removes one, so each is read once.
    const whole = new Set<string>();
    let reads = 0;
    const kills = new Map<string, number>();
    const saw = (problem: string) => seen.add(problem);
    const remember = (key: string, now: Iterable<string>, what: string, when: string) => {
      const before = everListed.get(key) ?? new Set<string>();
      const current = new Set(now);
      for (const v of before) if (!current.has(v)) saw(`${what} listed ${v}, later not (${when})`);
      everListed.set(key, new Set([...before, ...current]));
    };
    const checkVersion = async (module: string, version: string, via: string, when: string, again: boolean) => {
      if (whole.has(`${module} ${version}`) && !again) return;
      const download = await readJson<{ location: string }>(mirror, `v1/modules/${module}/${version}/download`);
      if (!download) return saw(`${module} ${version}: listed by ${via}, but its download document is missing (${when})`);
      const archive = await readFile(join(mirror, `v1/modules/${module}/${version}`, download.location)).catch(() => undefined);
      if (!archive?.length) saw(`${module} ${version}: listed by ${via}, but its archive ${download.location} is missing (${when})`);
      else whole.add(`${module} ${version}`);
    };
    /** A read that throws (a document not whole) is something seen, not the end of the test. */
    const guarded = async (read: () => Promise<void>, when: string) => {
      try {
        await read();
      } catch (error) {
        saw(`${(error as Error).message} (${when})`);
      }
    };
    const look = async (when: string, again = false) => {
      const namespaces = new Set([...modules].map((m) => m.slice(0, m.indexOf('/'))));
      const versionsDocs = [...modules].map((m) => async () => {
        const doc = await readJson<VersionsDoc>(mirror, `v1/modules/${m}/versions`);
        if (!doc) return;
        reads++;
        const versions = doc.modules[0]?.versions.map((v) => v.version) ?? [];
        remember(m, versions, `v1/modules/${m}/versions`, when);
        for (const v of versions) await checkVersion(m, v, 'its versions document', when, again);
      });
      const listings = [...namespaces].map((ns) => async () => {
        const listing = await readJson<Listing>(mirror, `v1/modules/${ns}/index.json`);
        if (!listing) return;
        reads++;
        remember(
          ns,
          listing.modules.map((m) => `${m.name}/${m.provider}`),
          `v1/modules/${ns}/index.json`,
          when,
        );
        for (const m of listing.modules) await checkVersion(`${ns}/${m.name}/${m.provider}`, m.version, `v1/modules/${ns}/index.json`, when, again);
      });
      await Promise.all([...versionsDocs, ...listings].map((read) => guarded(read, when)));
    };

    for (let round = 1; round <= rounds; round++) {
      const jobs = jobsOf(round);
      for (const j of jobs) modules.add(j.module);
      const delays = jobs.map(() => Math.round(next() * window));
      console.log(`kills, round ${round}: ${jobs.map((j, i) => `${j.module} ${j.version} after ${delays[i]} ms`).join('; ')}`);
      let running = true;
      const poller = (async () => {
        while (running) {
          await look(`round ${round}`);
          await new Promise((r) => setTimeout(r, 5));
        }
      })();
      const runs = jobs.map((j) => spawnKillable(publishKilled(j.module, j.version), dir));
      // Killed, and what it was doing then (looked at just before), so the log shows which kills met a write.
      const killedWhile: string[] = [];
      const timers = runs.map((r, i) =>
        setTimeout(() => {
          killedWhile[i] = doing(mirror, r.pid);
          r.kill();
        }, delays[i]),
      );
      const results: Ended[] = await Promise.all(runs.map((r) => r.done));
      timers.forEach(clearTimeout);
      running = false;
      await poller;
      await look(`round ${round}, after its writers`);
      const left = leftBy(mirror);
      const ended = results.map((r, i) => (r.signal ? `${outcome(r)}, ${killedWhile[i]}` : outcome(r)));
      for (const [i, r] of results.entries()) if (r.signal) kills.set(killedWhile[i]!, (kills.get(killedWhile[i]!) ?? 0) + 1);
      console.log(`kills, round ${round}: ${ended.join('; ')}; left: ${left.join(', ') || 'nothing'}`);
      // A writer that finished before its kill did its job: its version is in its state and was listed.
      for (const [i, r] of results.entries()) {
        const { module, version } = jobs[i]!;
        if (r.signal) continue;
        if (r.code !== 0) problems.push(`round ${round}: unkilled publish ${module} ${version} exit ${r.code}: ${said(r)}`);
        else if (!(await versionsIn(mirror, module)).includes(version)) problems.push(`round ${round}: ${module} ${version} exited 0 but its state lacks it`);
        else if (!everListed.get(module)?.has(version))
          problems.push(`round ${round}: ${module} ${version} exited 0 but its versions document never listed it`);
      }
      // The next writer meets what the killed ones left, recovers it and lands; a bounded wait, so a lock never
      // taken over fails the round rather than the test's timeout.
      const after = spawnKillable(publishKilled('acme/next/aws', `1.${round}.0`), dir);
      const stuck = setTimeout(() => after.kill(), 10_000);
      const landed = await after.done;
      clearTimeout(stuck);
      modules.add('acme/next/aws');
      if (landed.code !== 0) {
        // The rounds after would only wait as long for the same lock.
        problems.push(`round ${round}: the next publish ${outcome(landed)}: ${said(landed)} (left: ${left.join(', ')})`);
        break;
      }
      await look(`round ${round}, after the next publish`, true);
      await checkMirror(mirror, problems, `round ${round}, after the next publish`);
    }
    console.log(`kills: ${[...kills].map(([what, n]) => `${n} ${what}`).join(', ')}; ${reads} listings read while writers ran`);
    expect([...problems, ...seen]).toEqual([]);
  }, 90_000);
});
