// Benchmark publish-scale: "a change costs what it changes". One CLI
// `modmirror publish --source` of a new version of an existing module, into
// a 1,000-version mirror and into a 100,000-version one of the same shape
// (modules × 10 versions, folder layout, built by the CLI): its time, its
// peak memory, and the bytes it wrote into the mirror besides the archive,
// which should follow the module, not the mirror.
//
// The bytes come from a snapshot of every file of the mirror (path, size,
// inode, mtime in ns) before and after each publish: a file that is new or
// whose inode, size or mtime changed counts with its whole size (a rename
// over it, as atomic writes do, is a new inode). The publishes alternate
// between the two mirrors, so drift in the machine's speed hits both alike.

import { lstatSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { log, makeTempDir, median, removeTempDir, runCommand, runWithPeakRss } from './util.mjs';
import { generateVersionedMirror } from './serve/mirrors.mjs';
import { CLI } from './serve/settings.mjs';

const TIME_TARGET = 1.3;
const BYTES_TARGET = 1.5;
const VERSIONS_PER_MODULE = 10;
const TOP_FILES = 8;

/**
 * Full: 1,000 and 100,000 versions (`MODMIRROR_BENCH_PUBLISH_LARGE=N` sets
 * the large size), 5 publishes into each after one warm-up; quick: 100 and
 * 1,000 versions, 3 publishes.
 * @param {{ quick?: boolean }} options
 */
export async function benchPublishScale({ quick = false } = {}) {
  const small = quick ? 100 : 1000;
  const large = Number(process.env['MODMIRROR_BENCH_PUBLISH_LARGE'] ?? (quick ? 1000 : 100_000));
  const runs = quick ? 3 : 5;
  const tmp = makeTempDir();
  try {
    const mirrors = [];
    for (const size of [small, large]) mirrors.push(await buildMirror(join(tmp, `m${size}`), size));
    const results = new Map(mirrors.map((m) => [m, []]));
    for (let i = -1; i < runs; i++) {
      for (const m of mirrors) {
        const result = await publishOne(m, VERSIONS_PER_MODULE + 1 + i);
        if (i >= 0) results.get(m).push(result);
      }
    }
    const [s, l] = mirrors.map((m) => {
      const list = results.get(m);
      const summary = { seconds: median(list.map((r) => r.seconds)), bytes: median(list.map((r) => r.bytes)), peakMB: median(list.map((r) => r.peakMB)) };
      log(
        `publish-scale: into ${m.label}: ${list.map((r) => r.seconds.toFixed(2)).join(', ')} s; ` +
          `${list.map((r) => (r.bytes / 1000).toFixed(1)).join(', ')} KB besides the archive (${list.map((r) => r.files).join(', ')} files); ` +
          `peak RSS ${list.map((r) => r.peakMB.toFixed(0)).join(', ')} MB`,
      );
      log(`publish-scale: into ${m.label}, the files the last publish wrote, by bytes: ${top(list.at(-1).written)}; by kind: ${byKind(list.at(-1).written)}`);
      return { ...summary, runs: list.map(({ written, method, ...r }) => r), top: list.at(-1).written.slice(0, TOP_FILES) };
    });
    const [sl, ll] = [mirrors[0].label, mirrors[1].label];
    return [
      {
        name: `publish-scale: CLI publish of 1 version into ${ll} (vs into ${sl})`,
        modmirror: l.seconds,
        baseline: s.seconds,
        ratio: l.seconds / s.seconds,
        target: `≤ ${TIME_TARGET}×`,
        unit: 's',
        pass: l.seconds / s.seconds <= TIME_TARGET,
        detail: { small: s.runs, large: l.runs, builds: mirrors.map((m) => ({ versions: m.versions, seconds: m.buildSeconds, files: m.files })) },
      },
      {
        name: `  ↳ bytes the publish wrote besides the archive, ${ll} vs ${sl}`,
        modmirror: l.bytes / 1000,
        baseline: s.bytes / 1000,
        ratio: l.bytes / s.bytes,
        target: `≤ ${BYTES_TARGET}×`,
        unit: 'KB',
        pass: l.bytes / s.bytes <= BYTES_TARGET,
        detail: { smallTop: s.top, largeTop: l.top },
      },
      {
        name: `  ↳ publish peak RSS, ${ll} vs ${sl}`,
        modmirror: l.peakMB,
        baseline: s.peakMB,
        ratio: l.peakMB / s.peakMB,
        target: null,
        unit: 'MB',
        detail: { measuredWith: results.get(mirrors[0])[0].method },
      },
    ];
  } finally {
    removeTempDir(tmp);
  }
}

/** Generates modules × 10 versions under `dir` and builds them with the CLI into `dir/dist`. */
async function buildMirror(dir, versions) {
  const modules = Math.max(1, Math.round(versions / VERSIONS_PER_MODULE));
  const label = `${(modules * VERSIONS_PER_MODULE).toLocaleString('en-US')} versions`;
  log(`publish-scale: generating ${modules.toLocaleString('en-US')} modules × ${VERSIONS_PER_MODULE} versions in ${dir}`);
  const started = performance.now();
  const generated = await generateVersionedMirror(join(dir, 'modules'), { modules, versions: VERSIONS_PER_MODULE });
  log(`publish-scale: generated in ${((performance.now() - started) / 1000).toFixed(1)} s; building`);
  const out = join(dir, 'dist');
  const build = await runCommand(process.execPath, [CLI, 'build', '--modules', join(dir, 'modules'), '--out', out, '--json'], { cwd: dir });
  const summary = JSON.parse(build.stdout.toString('utf8').trim().split('\n').pop());
  if (summary.errors?.length > 0 || summary.versions !== generated.versions) {
    throw new Error(`publish-scale: modmirror built ${summary.versions} of ${generated.versions} versions: ${JSON.stringify(summary.errors?.slice(0, 3))}`);
  }
  const walk = performance.now();
  const files = snapshot(out).size;
  log(
    `publish-scale: built ${label} in ${build.seconds.toFixed(1)} s (${files.toLocaleString('en-US')} files, ` +
      `each snapshot of them ${((performance.now() - walk) / 1000).toFixed(1)} s)`,
  );
  // The module every publish adds a version to: the first generated, in the most populous namespace.
  const target = generated.list[0];
  const mainTf = readFileSync(join(dir, 'modules', target.key, generated.latest, 'main.tf'), 'utf8');
  return { dir, out, label, versions: generated.versions, buildSeconds: build.seconds, files, target, mainTf };
}

/** Publishes version 1.`minor`.0 of the mirror's target module; its time, peak RSS, and what it wrote. */
async function publishOne(mirror, minor) {
  const version = `1.${minor}.0`;
  const source = join(mirror.dir, 'sources', mirror.target.key, version);
  await mkdir(source, { recursive: true });
  await writeFile(join(source, 'main.tf'), mirror.mainTf.replace(/release = "[^"]*"/, `release = "${version}"`));
  const before = snapshot(mirror.out);
  const run = await runWithPeakRss(process.execPath, [CLI, 'publish', '--source', source, '--mirror', mirror.out, '--json'], { cwd: mirror.dir });
  const result = JSON.parse(run.stdout.toString('utf8').trim().split('\n').pop());
  if (result.outcome !== 'published') throw new Error(`publish-scale: publish of ${mirror.target.key} ${version}: ${JSON.stringify(result)}`);
  const after = snapshot(mirror.out);
  const archive = `v1/modules/${mirror.target.key}/${version}/${mirror.target.name}-${mirror.target.provider}-${version}.tar.gz`;
  if (!after.has(archive)) throw new Error(`publish-scale: no archive at ${archive} after the publish`);
  const written = [];
  for (const [path, file] of after) {
    const old = before.get(path);
    if (path === archive || (old && old.ino === file.ino && old.size === file.size && old.mtimeNs === file.mtimeNs)) continue;
    written.push({ path, bytes: file.size });
  }
  written.sort((a, b) => b.bytes - a.bytes || a.path.localeCompare(b.path));
  const bytes = written.reduce((sum, f) => sum + f.bytes, 0);
  return { version, seconds: run.seconds, peakMB: run.peakMB, method: run.method, bytes, files: written.length, written };
}

/** Every file under the mirror (through its `dist` link) by path: size, inode, mtime in ns. */
function snapshot(out) {
  const root = realpathSync(out);
  const files = new Map();
  for (const entry of readdirSync(root, { withFileTypes: true, recursive: true })) {
    if (entry.isDirectory()) continue;
    const path = join(entry.parentPath ?? entry.path, entry.name);
    const st = lstatSync(path, { bigint: true });
    files.set(path.slice(root.length + 1), { size: Number(st.size), ino: st.ino, mtimeNs: st.mtimeNs });
  }
  return files;
}

const top = (written) =>
  written
    .slice(0, TOP_FILES)
    .map((f) => `${f.path} ${(f.bytes / 1000).toFixed(1)} KB`)
    .join(', ');

/** Bytes by where they were written: the module's own folder, the listings, the browse page's rows, the truth. */
function byKind(written) {
  const kinds = new Map();
  for (const { path, bytes } of written) {
    const kind = /^v[12]\/modules\/[^/]+\/[^/]+\/[^/]+\//.test(path)
      ? "the module's documents"
      : path.startsWith('v1/') || path.startsWith('v2/')
        ? 'listings'
        : path.startsWith('browse/modules/')
          ? 'browse rows'
          : path.startsWith('state/') || path === 'manifest.json'
            ? 'states and root'
            : 'other';
    kinds.set(kind, (kinds.get(kind) ?? 0) + bytes);
  }
  return [...kinds]
    .sort((a, b) => b[1] - a[1])
    .map(([kind, bytes]) => `${kind} ${(bytes / 1000).toFixed(1)} KB`)
    .join(', ');
}
