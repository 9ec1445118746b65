// A mirror in a bucket, against a local Ceph RGW (test/s3/rgw.sh; skipped with
// a note when Ceph is not installed):
// - push of the bench mirror (100 modules × 10 versions) into an empty bucket,
//   the whole command timed (process start, local verify, hashing, uploads),
//   as objects per second against the SDK storing the same files with the
//   same concurrency and no logic at all (the floor): the ratio;
// - push again with nothing changed (what a pipeline pays when nothing did);
// - publish of one new version into the bucket: latency and objects written.

import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { readManifest } from '../lib/mirror/manifest.js';
import { generateCorpus } from './corpus/index.mjs';
import { hasCeph, startRgw } from './rgw.mjs';
import { log, makeTempDir, mapLimited, median, removeTempDir, runCommand } from './util.mjs';

const CLI = fileURLToPath(new URL('../bin/modmirror.js', import.meta.url));
const CONCURRENCY = 16;
const PUSH_TARGET = 0.5;

export async function benchBucket({ quick = false, runs } = {}) {
  runs ??= quick ? 1 : 3;
  if (!hasCeph()) {
    log('bucket: skipped, Ceph RGW is not installed (bash .ci/deps installs it)');
    return [];
  }
  const [modules, perModule] = quick ? [10, 5] : [100, 10];
  const tmp = makeTempDir();
  let rgw;
  try {
    rgw = await startRgw(join(tmp, 'rgw'));
    const { env, client, flags } = rgw;

    const corpus = await generateCorpus({ dir: join(tmp, 'corpus'), modules, versionsPerModule: perModule, seed: 30 });
    const config = join(tmp, 'mirror.config.yaml');
    await writeFile(config, `sources:\n${corpus.repos.map((r) => `  - git: ${JSON.stringify(r)}\n    namespace: bench\n`).join('')}`);
    const dist = join(tmp, 'dist');
    await runCommand(process.execPath, [CLI, 'build', '--config', config, '--out', dist, '--json'], { env });
    const root = realpathSync(dist);
    const files = readdirSync(root, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => join(e.parentPath, e.name).slice(root.length + 1));
    log(`bucket: ${corpus.tags} versions, ${files.length} files to push`);

    let buckets = 0;
    const newBucket = async () => {
      const name = `bench-${buckets++}`;
      await client.send(new CreateBucketCommand({ Bucket: name }));
      return name;
    };
    const floor = async () => {
      const bucket = await newBucket();
      const started = performance.now();
      await mapLimited(files, CONCURRENCY, (rel) => client.send(new PutObjectCommand({ Bucket: bucket, Key: rel, Body: readFileSync(join(root, rel)) })));
      return (performance.now() - started) / 1000;
    };
    const push = async (bucket) => {
      const { stdout, seconds } = await runCommand(
        process.execPath,
        [CLI, 'push', dist, `s3://${bucket}`, ...flags, '--concurrency', String(CONCURRENCY), '--json'],
        { env },
      );
      return { seconds, result: JSON.parse(stdout.toString()) };
    };

    const pushRates = [];
    const floorRates = [];
    const again = [];
    let lastBucket;
    for (let i = 0; i < runs; i++) {
      // Alternated, so drift in the shared machine's load hits both alike.
      const f = await floor();
      lastBucket = await newBucket();
      const p = await push(lastBucket);
      if (p.result.uploaded !== files.length) throw new Error(`push uploaded ${p.result.uploaded} of ${files.length} files`);
      floorRates.push(files.length / f);
      pushRates.push(files.length / p.seconds);
      const a = await push(lastBucket);
      if (a.result.uploaded !== 0) throw new Error(`a second push uploaded ${a.result.uploaded} objects`);
      again.push(a.seconds);
      log(
        `bucket: run ${i + 1}/${runs}: push ${(files.length / p.seconds).toFixed(0)} objects/s (${p.seconds.toFixed(2)} s), SDK alone ${(files.length / f).toFixed(0)} objects/s, push again ${a.seconds.toFixed(2)} s`,
      );
    }

    const publishSeconds = [];
    const written = [];
    for (let i = 0; i < Math.max(3, runs); i++) {
      const source = join(tmp, `src-${i}`);
      execFileSync('mkdir', ['-p', source]);
      await writeFile(join(source, 'main.tf'), `output "run" {\n  value = ${i}\n}\n`);
      // The mirror's truth as modmirror reads it: the root and every module's state.
      const [address] = Object.keys(readManifest(root).modules);
      const [namespace, name, provider] = address.split('/');
      const { stdout, seconds } = await runCommand(
        process.execPath,
        [
          CLI,
          'publish',
          '--source',
          source,
          '--namespace',
          namespace,
          '--name',
          name,
          '--provider',
          provider,
          '--version',
          `99.0.${i}`,
          '--out',
          `s3://${lastBucket}`,
          ...flags,
          '--json',
        ],
        { env },
      );
      const result = JSON.parse(stdout.toString());
      publishSeconds.push(seconds);
      written.push(result.uploaded.length);
      log(`bucket: publish ${i + 1}: ${seconds.toFixed(2)} s, ${result.uploaded.length} objects written`);
    }
    const push_ = median(pushRates);
    const floor_ = median(floorRates);
    return [
      {
        name: `push ${corpus.tags.toLocaleString('en-US')} versions (${files.length.toLocaleString('en-US')} objects) to local RGW`,
        modmirror: push_,
        baseline: floor_,
        ratio: push_ / floor_,
        target: `≥ ${PUSH_TARGET}× the SDK alone`,
        unit: 'objects/s',
        pass: push_ / floor_ >= PUSH_TARGET,
        detail: { files: files.length, concurrency: CONCURRENCY, pushRates, floorRates },
      },
      { name: 'push again, nothing changed', modmirror: median(again), baseline: null, ratio: null, target: null, unit: 's', detail: { runs: again } },
      {
        name: `publish 1 version into the bucket (${median(written)} objects written)`,
        modmirror: median(publishSeconds),
        baseline: null,
        ratio: null,
        target: null,
        unit: 's',
        detail: { runs: publishSeconds, written },
      },
    ];
  } finally {
    rgw?.stop();
    removeTempDir(tmp);
  }
}
