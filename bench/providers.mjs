// Provider build benchmark: a build of provider release folders hashes every
// zip twice over (zh: the zip's sha256; h1: each entry inflated and hashed),
// measured as MB of zips per second of the whole `build --clean` against
// `sha256sum` of the same zips in the same run (the cheapest way to read and
// hash those bytes once). A binary inflates to about twice its zip, so the
// build hashes about three times the bytes sha256sum does, and inflates them
// too: the target is a third of sha256sum's rate.

import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import yazl from 'yazl';
import { log, makeTempDir, median, removeTempDir, runCommand } from './util.mjs';

const CLI = fileURLToPath(new URL('../bin/modmirror.js', import.meta.url));
const TARGET = 0.33;

/** A provider binary compresses to about half: alternate random and repetitive megabytes. */
async function writeProviderZip(file, name, megabytes) {
  const zip = new yazl.ZipFile();
  const parts = Array.from({ length: megabytes }, (_, i) => (i % 2 === 0 ? randomBytes(1 << 20) : Buffer.alloc(1 << 20, i & 0xff)));
  zip.addBuffer(Buffer.concat(parts), name, { mtime: new Date('2024-01-01T00:00:00Z'), mode: 0o100755 });
  zip.end();
  await once(zip.outputStream.pipe(createWriteStream(file)), 'finish');
}

export async function benchProviderBuild({ quick = false, runs } = {}) {
  runs ??= quick ? 2 : 5;
  const [count, megabytes] = quick ? [4, 24] : [12, 32];
  const tmp = makeTempDir();
  try {
    const releases = join(tmp, 'releases');
    mkdirSync(releases, { recursive: true });
    const zips = [];
    for (let i = 0; i < count; i++) {
      const name = `terraform-provider-bench${i}_1.0.0_linux_amd64.zip`;
      await writeProviderZip(join(releases, name), `terraform-provider-bench${i}_v1.0.0`, megabytes);
      writeFileSync(join(releases, `terraform-provider-bench${i}_1.0.0_SHA256SUMS`), execFileSync('sha256sum', [name], { cwd: releases }));
      zips.push(name);
    }
    const bytes = zips.reduce((n, z) => n + statSync(join(releases, z)).size, 0);
    const mb = bytes / 1e6;
    writeFileSync(join(tmp, 'mirror.config.yaml'), 'providers:\n  - folder: releases\n    namespace: bench\n');
    log(`provider build: ${count} zips, ${mb.toFixed(0)} MB`);

    const build = [];
    const baseline = [];
    for (let run = 0; run < runs; run++) {
      // Alternate, so both see the same page cache and load.
      const { seconds } = await runCommand('sha256sum', zips, { cwd: releases });
      baseline.push(mb / seconds);
      const out = await runCommand(process.execPath, [CLI, 'build', '--clean', '--json', '--out', join(tmp, `dist-${run}`)], { cwd: tmp });
      const summary = JSON.parse(out.stdout.toString('utf8').trim().split('\n').pop());
      if (summary.providerPackages !== count || summary.providerHashing.zips !== count)
        throw new Error(`provider build hashed ${summary.providerHashing.zips} of ${count} zips`);
      build.push(mb / out.seconds);
    }
    const modmirror = median(build);
    const base = median(baseline);
    return [
      {
        name: `provider build, ${count} zips (${mb.toFixed(0)} MB): hashing throughput (h1: and zh:)`,
        modmirror,
        baseline: base,
        ratio: modmirror / base,
        target: `≥ ${TARGET}× sha256sum`,
        pass: modmirror / base >= TARGET,
        unit: 'MB/s',
        detail: { runs: build, baselineRuns: baseline },
      },
    ];
  } finally {
    removeTempDir(tmp);
  }
}
