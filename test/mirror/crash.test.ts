// Always a mirror: a writer killed at any point leaves the mirror's path
// serving a mirror to `modmirror serve` and to a real nginx in which every
// listed version resolves to its archive, and the next command that opens
// the mirror (here `verify`) makes it whole: a build's new generation is in
// or not, a publish's change in place is finished or undone. The crash
// points (MODMIRROR_CRASH_AT) stop a writer at each step of its commit; real
// SIGKILLs at growing delays stop it anywhere.

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/serve/index.js';
import { moduleFiles } from '../clients/install.js';
import { freePort, mirrorLeftovers, ROOT, runCli, serveMirror, tempDir, writeFiles } from '../helpers.js';
import { startNginx } from '../hosting/nginx-server.js';

const POINTS = ['locked', 'staged', 'between-renames', 'swapped'];
/** A publish changes the mirror in place: killed before its journal, after it, and half way through its renames. */
const CHANGE_POINTS = ['locked', 'journaled', 'applying'];
const KEY = 'acme/m/aws';
/** The module's truth: its versions with their archives and digests. */
const STATE = 'state/acme/m.aws.json';

let dir: string;
let dist: string;
let serve: RunningServer;
let nginx: { stop: () => void };
let nginxUrl: string;

beforeAll(async () => {
  dir = tempDir();
  dist = join(dir, 'dist');
  writeFiles(dir, { 'mirror.config.yaml': 'sources:\n  - folder: mods\n' });
  writeFiles(join(dir, 'mods/acme/m/aws/1.0.0'), moduleFiles('1.0.0'));
  expect((await runCli(['build'], dir)).code).toBe(0);
  serve = await serveMirror(dir);
  const port = await freePort();
  nginx = await startNginx(join(dir, 'nginx'), [`server {\n  listen 127.0.0.1:${port};\n  root ${dist};\n}\n`], [port]);
  nginxUrl = `http://127.0.0.1:${port}/`;
});

afterAll(async () => {
  nginx?.stop();
  await serve?.close();
});

const fetchBytes = async (url: string) => {
  const res = await request(url);
  const body = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, body };
};

/**
 * What a reader finds at the mirror's path now, through serve and nginx:
 * every version the versions document lists has its download document and
 * its archive, and every archive the module's state lists has its sha256. A
 * new generation is swapped in whole (`whole`: the listing is the state's); a
 * change in place may list a version before its state's entry lands, never
 * the other way round. Returns the listed versions. Then `verify`, which
 * first finishes or undoes what a writer left, accepts the mirror.
 */
async function readersSee(whole = true): Promise<string[]> {
  const fromServe = await fetchBytes(new URL(`v1/modules/${KEY}/versions`, serve.url).href);
  expect(fromServe.status).toBe(200);
  const versions: string[] = JSON.parse(fromServe.body.toString())
    .modules[0].versions.map((v: { version: string }) => v.version)
    .sort();
  expect((await fetchBytes(`${nginxUrl}manifest.json`)).status).toBe(200);
  const state = await fetchBytes(`${nginxUrl}${STATE}`);
  expect(state.status).toBe(200);
  const entries = JSON.parse(state.body.toString()).versions as { version: string; archive: string; sha256: string }[];
  const inState = entries.map((e) => e.version).sort();
  if (whole) expect(inState, "the module's state lists what serve lists").toEqual(versions);
  else expect(versions, "serve lists every version of the module's state").toEqual(expect.arrayContaining(inState));
  for (const version of versions) {
    const download = await fetchBytes(`${nginxUrl}v1/modules/${KEY}/${version}/download`);
    expect(download.status, `${version}/download`).toBe(200);
    const location = new URL(JSON.parse(download.body.toString()).location, `${nginxUrl}v1/modules/${KEY}/${version}/download`);
    expect((await fetchBytes(location.href)).status, location.href).toBe(200);
  }
  for (const entry of entries) {
    for (const base of [nginxUrl, serve.url]) {
      const archive = await fetchBytes(new URL(entry.archive, base).href);
      expect(archive.status, `${base}${entry.archive}`).toBe(200);
      expect(createHash('sha256').update(archive.body).digest('hex')).toBe(entry.sha256);
    }
  }
  expect((await runCli(['verify', '--mirror', 'dist', '--json'], dir)).code).toBe(0);
  return versions;
}

describe('a writer killed at each step of its commit', () => {
  it('publish: the path serves every listed version, and the next command finishes a journaled change', async () => {
    writeFiles(join(dir, 'next/acme/m/aws/1.1.0'), moduleFiles('1.1.0'));
    for (const point of CHANGE_POINTS) {
      const generation = readlinkSync(dist);
      const crashed = await runCli(['publish', '--source', 'next/acme/m/aws/1.1.0'], dir, { MODMIRROR_CRASH_AT: point });
      expect(crashed.code, point).not.toBe(0);
      // Half way through, the new version may be listed already (which of its files are in depends on how many
      // the change writes); until then, the mirror before it.
      const seen = await readersSee(false);
      if (point === 'applying') expect([['1.0.0'], ['1.0.0', '1.1.0']], point).toContainEqual(seen);
      else expect(seen, point).toEqual(['1.0.0']);
      // verify finished a journaled change.
      expect(await readersSee(), point).toEqual(point === 'locked' ? ['1.0.0'] : ['1.0.0', '1.1.0']);
      // A change in place: the same generation throughout.
      expect(readlinkSync(dist), point).toBe(generation);
      if (point !== 'locked') {
        // Back to the start for the next point: prune what the folder source lacks, on record.
        rmSync(join(dir, 'next'), { recursive: true });
        expect((await runCli(['build', '--prune'], dir)).code).toBe(0);
        writeFiles(join(dir, 'next/acme/m/aws/1.1.0'), moduleFiles('1.1.0'));
      }
    }
    // The next writer clears what the crashes left; nothing of them stays.
    expect((await runCli(['publish', '--source', 'mods/acme/m/aws/1.0.0'], dir)).code).toBe(0);
    expect(await mirrorLeftovers(dir)).toEqual([]);
  });

  it('a change an older modmirror journaled (its files in a tree of their own) is finished by the next command', async () => {
    writeFiles(join(dir, 'older/acme/m/aws/1.4.0'), moduleFiles('1.4.0'));
    expect((await runCli(['publish', '--source', 'older/acme/m/aws/1.4.0'], dir, { MODMIRROR_CRASH_AT: 'journaled' })).code).not.toBe(0);
    const [delta] = readdirSync(dir).filter((name) => name.startsWith('.dist.delta-'));
    const journalFile = join(dir, delta!, 'journal.json');
    const journal = JSON.parse(readFileSync(journalFile, 'utf8')) as { format: number; puts: [string, string][]; removals: string[] };
    expect(journal.format).toBe(2);
    // Format 1: each file at its mirror path under tree/.
    for (const [rel, staged] of journal.puts) {
      mkdirSync(dirname(join(dir, delta!, 'tree', rel)), { recursive: true });
      renameSync(join(dir, delta!, staged), join(dir, delta!, 'tree', rel));
    }
    writeFileSync(journalFile, JSON.stringify({ format: 1, puts: journal.puts.map(([rel]) => rel), removals: journal.removals }));
    expect(await readersSee(false)).toEqual(['1.0.0']);
    expect(await readersSee()).toEqual(['1.0.0', '1.4.0']);
    expect(await mirrorLeftovers(dir)).toEqual([]);
    // Back to the start for the tests below, on record.
    rmSync(join(dir, 'older'), { recursive: true });
    expect((await runCli(['build', '--prune'], dir)).code).toBe(0);
  });

  it('build: the same', async () => {
    writeFiles(join(dir, 'mods/acme/m/aws/1.2.0'), moduleFiles('1.2.0'));
    for (const point of POINTS.slice(0, 3)) {
      expect((await runCli(['build'], dir, { MODMIRROR_CRASH_AT: point })).code, point).not.toBe(0);
      expect(await readersSee(), point).toEqual(['1.0.0']);
    }
    expect((await runCli(['build'], dir, { MODMIRROR_CRASH_AT: 'swapped' })).code).not.toBe(0);
    expect(await readersSee()).toEqual(['1.0.0', '1.2.0']);
    expect((await runCli(['build'], dir)).code).toBe(0);
    expect(await mirrorLeftovers(dir)).toEqual([]);
  });

  it('SIGKILL at any moment of a build: the path always serves a whole mirror', async () => {
    const cli = join(ROOT, 'bin/modmirror.js');
    let landed = false;
    for (let delay = 40; delay < 4000 && !landed; delay = Math.round(delay * 1.5)) {
      writeFiles(join(dir, 'mods/acme/m/aws/1.3.0'), moduleFiles('1.3.0'));
      const child = spawn(process.execPath, [cli, 'build', '--clean'], { cwd: dir, stdio: 'ignore' });
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      await new Promise((r) => setTimeout(r, delay));
      child.kill('SIGKILL');
      landed = (await exited) === 0;
      const versions = await readersSee();
      expect([
        ['1.0.0', '1.2.0'],
        ['1.0.0', '1.2.0', '1.3.0'],
      ]).toContainEqual(versions);
    }
  });
});

it('a mirror written before links becomes one at its first write, and a crash in that one step is put back by any reader', async () => {
  const old = tempDir();
  writeFiles(old, { 'mirror.config.yaml': 'sources:\n  - folder: mods\n' });
  writeFiles(join(old, 'mods/acme/m/aws/1.0.0'), moduleFiles('1.0.0'));
  expect((await runCli(['build', '--mirror', 'built'], old)).code).toBe(0);
  // A plain folder, as earlier versions of modmirror wrote it.
  cpSync(join(old, 'built'), join(old, 'dist'), { recursive: true, dereference: true });
  const manifest = readFileSync(join(old, 'dist/manifest.json'));
  writeFiles(join(old, 'mods/acme/m/aws/1.1.0'), moduleFiles('1.1.0'));
  expect((await runCli(['build'], old, { MODMIRROR_CRASH_AT: 'between-renames' })).code).not.toBe(0);
  expect(existsSync(join(old, 'dist'))).toBe(false);
  // verify (like serve) puts the set-aside mirror back before it reads.
  const verified = await runCli(['verify', '--mirror', 'dist'], old);
  expect(verified.code, verified.stderr).toBe(0);
  expect(readFileSync(join(old, 'dist/manifest.json')).equals(manifest)).toBe(true);
  expect((await runCli(['build'], old)).code).toBe(0);
  expect(lstatSync(join(old, 'dist')).isSymbolicLink()).toBe(true);
  expect(await mirrorLeftovers(old)).toEqual([]);
});
