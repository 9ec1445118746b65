// Benchmark `history` (`--history PATH`, repeatable): builds local git
// repositories given on the command line, such as clones of real public
// modules, with the same table as the generated corpus: the full build
// against `git archive | gzip -6` of the same tags in the same run, the
// bytes it writes by kind, its peak RSS, and a publish of the newest tag
// followed by a `bundle --since` that carries it. With several paths, one
// more set of rows builds all of them from one config.
//
// The repositories are only read: tags are listed and archived in place, and
// the publish works on a clone in the temp folder.

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildRow } from './build.mjs';
import { BUILD_PEAK_TARGET_MB } from './serve/settings.mjs';
import { readManifest } from '../lib/mirror/manifest.js';
import { archiveFloor, log, makeTempDir, removeTempDir, runCommand, runWithPeakRss } from './util.mjs';

const CLI = fileURLToPath(new URL('../bin/modmirror.js', import.meta.url));
const BROWSE_SHARE_TARGET = 0.1;
const NAMESPACE = 'history';
const MB = 1024 * 1024;

/**
 * @param {{ quick?: boolean, histories: string[], runs?: number }} options
 */
export async function benchHistory({ quick = false, histories, runs }) {
  runs ??= quick ? 2 : 3;
  const paths = histories.map((p) => resolve(p));
  for (const p of paths) if (!existsSync(p)) throw new Error(`--history ${p}: no such folder`);
  const tmp = makeTempDir();
  try {
    const rows = [];
    for (const path of paths) rows.push(...(await benchSet(tmp, nameOf(path), [path], runs, { publish: true })));
    if (paths.length > 1) rows.push(...(await benchSet(tmp, `${paths.length} histories in one config`, paths, runs, { publish: false })));
    return rows;
  } finally {
    removeTempDir(tmp);
  }
}

const nameOf = (path) => basename(path).replace(/\.git$/, '');

async function benchSet(tmp, name, paths, runs, { publish }) {
  const dir = join(tmp, name.replace(/\W+/g, '-'));
  await mkdir(dir, { recursive: true });
  const config = join(dir, 'mirror.config.yaml');
  await writeFile(config, `sources:\n${paths.map((p) => `  - git: ${JSON.stringify(p)}\n    namespace: ${NAMESPACE}\n`).join('')}`);
  const out = join(dir, 'dist');
  const build = () => runWithPeakRss(process.execPath, [CLI, 'build', '--clean', '--config', config, '--out', out, '--json'], { cwd: dir });

  log(`history ${name}: first build (warm-up)`);
  const first = await build();
  const summary = lastJson(first.stdout);
  if (summary.errors.length > 0) throw new Error(`history ${name}: ${summary.errors.length} version(s) failed, e.g. ${summary.errors[0].message}`);
  // The mirror's truth as modmirror reads it: the root and every module's state.
  const manifest = readManifest(out);
  // The floor archives exactly the tags modmirror mirrored (tags that are not versions are skipped by both).
  const tags = Object.entries(manifest.modules).flatMap(([key, m]) => m.versions.map((v) => ({ repo: paths[indexOfModule(paths, key)], tag: v.tag })));
  const bytes = bytesByKind(out, join(dir, '.modmirror-cache'));
  await rm(out, { recursive: true, force: true });

  const cli = [];
  const peaks = [];
  const floor = [];
  for (let i = 0; i < runs; i++) {
    const run = await build();
    cli.push(run.seconds);
    peaks.push(run.peakMB);
    await rm(out, { recursive: true, force: true });
    floor.push(await archiveFloor(join(dir, 'floor'), tags));
    log(`history ${name}: run ${i + 1}/${runs}: modmirror ${run.seconds.toFixed(2)} s (peak ${run.peakMB.toFixed(0)} MB), floor ${floor[i].toFixed(2)} s`);
  }
  const peak = Math.max(...peaks);
  const mirror = bytes.archives + bytes.documents + bytes.browse;
  const detail = { paths, versions: tags.length, runs, modmirrorRuns: cli, floorRuns: floor, peakRunsMB: peaks, bytes, parallelism: availableParallelism() };
  const rows = [
    buildRow(`history ${name}: build ${tags.length} versions`, cli, floor, detail),
    {
      name: `history ${name}: build peak RSS`,
      modmirror: peak,
      baseline: null,
      ratio: null,
      target: `≤ ${BUILD_PEAK_TARGET_MB} MB`,
      unit: 'MB',
      pass: peak <= BUILD_PEAK_TARGET_MB,
      detail,
    },
    {
      name: `history ${name}: browse share of the mirror`,
      modmirror: bytes.browse / MB,
      baseline: mirror / MB,
      ratio: bytes.browse / mirror,
      target: `≤ ${BROWSE_SHARE_TARGET}×`,
      unit: 'MB',
      pass: bytes.browse / mirror <= BROWSE_SHARE_TARGET,
      detail,
    },
    {
      name: `history ${name}: bytes written (archives ${fmt(bytes.archives)}, documents ${fmt(bytes.documents)}, browse ${fmt(bytes.browse)}, cache ${fmt(bytes.cache)} MB) vs the archives`,
      modmirror: (mirror + bytes.cache) / MB,
      baseline: bytes.archives / MB,
      ratio: (mirror + bytes.cache) / bytes.archives,
      target: null,
      unit: 'MB',
      detail,
    },
  ];
  if (publish) rows.push(...(await publishAndBundle(dir, name, paths[0], manifest)));
  return rows;
}

const fmt = (n) => (n / MB).toFixed(1);

/** Which of `paths` a module key came from: its name is the repository's terraform-<provider>-<name>. */
function indexOfModule(paths, key) {
  if (paths.length === 1) return 0;
  const [, name, provider] = key.split('/');
  const at = paths.findIndex((p) => nameOf(p) === `terraform-${provider}-${name}`);
  if (at === -1) throw new Error(`history: cannot tell which repository ${key} came from`);
  return at;
}

function bytesByKind(out, cacheDir) {
  const bytes = { archives: 0, documents: 0, browse: 0, cache: 0 };
  const walk = (dir, add) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory()) walk(path, add);
      else if (e.isFile()) add(path, statSync(path).size);
    }
  };
  walk(out, (path, size) => {
    const rel = path.slice(out.length + 1);
    if (rel.endsWith('.tar.gz')) bytes.archives += size;
    else if (rel.startsWith('browse/') || rel === 'index.html') bytes.browse += size;
    else bytes.documents += size;
  });
  if (existsSync(cacheDir)) walk(cacheDir, (_path, size) => (bytes.cache += size));
  return bytes;
}

/**
 * The newest version published into a mirror built without it (from a clone
 * lacking its tag), then `bundle --since` the mirror's manifest from before:
 * the bundle's size next to the new archive's.
 */
async function publishAndBundle(dir, name, path, fullManifest) {
  const [key, { versions }] = Object.entries(fullManifest.modules)[0];
  const newest = versions[0];
  // Same folder name, so the config names the module the same way.
  const clone = join(dir, 'clone', basename(path));
  await runCommand('git', ['clone', '-q', '--mirror', path, clone]);
  await runCommand('git', ['tag', '-d', newest.tag], { cwd: clone });
  const config = join(dir, 'publish.config.yaml');
  await writeFile(config, `sources:\n  - git: ${JSON.stringify(clone)}\n    namespace: ${NAMESPACE}\n`);
  const out = join(dir, 'publish-dist');
  await runCommand(process.execPath, [CLI, 'build', '--config', config, '--out', out, '--json'], { cwd: dir });
  const before = join(dir, 'manifest-before.json');
  await writeFile(before, readFileSync(join(out, 'manifest.json')));
  await runCommand('git', ['fetch', '-q', path, `refs/tags/${newest.tag}:refs/tags/${newest.tag}`], { cwd: clone });
  const published = await runCommand(process.execPath, [CLI, 'publish', '--config', config, '--git', clone, '--ref', newest.tag, '--out', out, '--json'], {
    cwd: dir,
  });
  const result = lastJson(published.stdout);
  if (result.outcome !== 'published') throw new Error(`history ${name}: publish of ${newest.tag}: ${JSON.stringify(result)}`);
  const bundle = join(dir, 'since.tar.gz');
  await runCommand(process.execPath, [CLI, 'bundle', '--dir', out, '--out', bundle, '--since', before], { cwd: dir });
  const bundleBytes = statSync(bundle).size;
  log(
    `history ${name}: publish ${key} ${newest.version} ${published.seconds.toFixed(2)} s; bundle --since ${fmt(bundleBytes)} MB, the new archive ${(newest.size / 1024).toFixed(1)} KB`,
  );
  return [
    {
      name: `history ${name}: bundle --since carrying ${newest.version} vs its archive`,
      modmirror: bundleBytes / MB,
      baseline: newest.size / MB,
      ratio: bundleBytes / newest.size,
      target: null,
      unit: 'MB',
      detail: { bundleBytes, archiveBytes: newest.size, publishSeconds: published.seconds },
    },
  ];
}

function lastJson(stdout) {
  return JSON.parse(stdout.toString('utf8').trim().split('\n').pop());
}
