// benchBuildLargeFile (benchmark `build-large-file`): peak resident memory of
// `modmirror build --clean` on a module with one 1 GiB file, from a folder
// and from a git repository, against the same module without it built in the
// same run. The file was held about three times over (3.2 GB); it is now
// streamed into the archive (src/pack/stream.ts), so the target is < 300 MB.

import { randomBytes } from 'node:crypto';
import { mkdirSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { log, makeTempDir, removeTempDir, runCommand, runWithPeakRss } from './util.mjs';

const CLI = fileURLToPath(new URL('../bin/modmirror.js', import.meta.url));
const TARGET_MB = 300;
const MiB = 1024 * 1024;

/** A module folder: a few .tf files, and (with `bigBytes`) disk.img, random at its start, sparse after. */
function writeModule(dir, bigBytes) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'main.tf'), 'variable "image" {\n  type = string\n}\n\noutput "image" {\n  value = var.image\n}\n');
  writeFileSync(join(dir, 'README.md'), '# Disk image\n\nShips a disk image with the module.\n');
  if (bigBytes) {
    writeFileSync(join(dir, 'disk.img'), randomBytes(MiB));
    truncateSync(join(dir, 'disk.img'), bigBytes);
  }
}

async function gitRepo(dir, bigBytes) {
  writeModule(dir, bigBytes);
  const git = (...args) =>
    runCommand('git', args, {
      cwd: dir,
      env: { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@x', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@x' },
    });
  await git('init', '-q');
  await git('add', '.');
  await git('commit', '-q', '-m', 'one');
  await git('tag', 'v1.0.0');
}

async function peak(tmp, label, source) {
  const config = join(tmp, `${label}.yaml`);
  // Above the default bounds (512 MiB a file, 1 GiB a version), which would refuse the file: this measures the streaming.
  writeFileSync(config, `limits: { fileSize: 2GiB, versionSize: 2GiB }\nsources:\n${source}`);
  const run = await runWithPeakRss(process.execPath, [CLI, 'build', '--clean', '--config', config, '--out', join(tmp, `out-${label}`), '--json'], { cwd: tmp });
  const summary = JSON.parse(run.stdout.toString('utf8').trim().split('\n').pop());
  if (summary.errors.length > 0 || summary.versions !== 1) throw new Error(`build-large-file ${label}: ${JSON.stringify(summary.errors)}`);
  log(`build-large-file: ${label}: peak RSS ${run.peakMB.toFixed(0)} MB in ${run.seconds.toFixed(1)} s`);
  return run;
}

/** @param {{ quick?: boolean }} options */
export async function benchBuildLargeFile({ quick = false } = {}) {
  const bigBytes = (quick ? 256 : 1024) * MiB;
  const size = `${bigBytes / MiB >= 1024 ? `${bigBytes / MiB / 1024} GiB` : `${bigBytes / MiB} MiB`}`;
  const tmp = makeTempDir();
  try {
    writeModule(join(tmp, 'small/acme/disk/aws/1.0.0'), 0);
    writeModule(join(tmp, 'big/acme/disk/aws/1.0.0'), bigBytes);
    await gitRepo(join(tmp, 'terraform-aws-disk'), bigBytes);
    const small = await peak(tmp, 'small', `  - folder: ${JSON.stringify(join(tmp, 'small'))}\n`);
    const folder = await peak(tmp, 'folder', `  - folder: ${JSON.stringify(join(tmp, 'big'))}\n`);
    const git = await peak(tmp, 'git', `  - git: ${JSON.stringify(join(tmp, 'terraform-aws-disk'))}\n    namespace: acme\n`);
    const detail = {
      baseline: 'the same module without the large file, built in the same run',
      file: `${size}: 1 MiB random, then zeros (sparse)`,
      measuredWith: small.method,
      seconds: { small: small.seconds, folder: folder.seconds, git: git.seconds },
    };
    return [folder, git].map((run, i) => ({
      name: `build peak RSS, 1 module with one ${size} file (${i === 0 ? 'folder' : 'git'})`,
      modmirror: run.peakMB,
      baseline: small.peakMB,
      ratio: run.peakMB / small.peakMB,
      target: `< ${TARGET_MB} MB`,
      unit: 'MB',
      pass: run.peakMB < TARGET_MB,
      detail,
    }));
  } finally {
    removeTempDir(tmp);
  }
}
