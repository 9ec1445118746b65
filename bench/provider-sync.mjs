// Provider sync throughput: `modmirror sync --provider` against a providers.v1
// server on 127.0.0.1 (the same answers as test/sync/provider-upstream.ts:
// shasum, SHA256SUMS with a binary detached signature, signing key), the
// whole command timed, against `sha256sum` of the same zips in the same run.
// sync hashes each zip while downloading it (its sha256 is the zh:) and then
// every inflated entry for h1:, which is Go's dirhash over the unpacked
// content: about 3.8 times the zip's bytes here, as for real provider
// binaries. That work alone bounds the ratio near 0.2 on one core, hence the
// target of 0.1.

import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as openpgp from 'openpgp';
import yazl from 'yazl';
import { log, makeTempDir, median, removeTempDir, runCommand } from './util.mjs';

const CLI = fileURLToPath(new URL('../bin/modmirror.js', import.meta.url));
const TARGET = 0.1;

/** A provider-like zip: one executable of `mb` MB that deflates about 3:1, as Go binaries do. */
async function writeProviderZip(file, name, mb) {
  const zip = new yazl.ZipFile();
  const chunk = randomBytes(1024 * 1024);
  // Repeated random runs of 64 bytes among text: compressible, but not trivially.
  const body = Buffer.alloc(mb * 1024 * 1024);
  for (let at = 0; at < body.length; at += 256) chunk.copy(body, at, (at * 7) % (chunk.length - 64), ((at * 7) % (chunk.length - 64)) + 64);
  zip.addBuffer(body, name, { mtime: new Date('2024-01-01T00:00:00Z'), mode: 0o100755 });
  zip.end();
  await once(zip.outputStream.pipe(createWriteStream(file)), 'finish');
}

export async function benchProviderSync({ quick = false, runs } = {}) {
  runs ??= quick ? 2 : 5;
  const [versions, mb] = quick ? [2, 8] : [3, 32];
  const platforms = ['linux_amd64', 'darwin_arm64'];
  const tmp = makeTempDir();
  const server = createServer();
  try {
    const files = [];
    for (let i = 0; i < versions; i++) {
      for (const platform of platforms) {
        const version = `1.${i}.0`;
        const file = join(tmp, `terraform-provider-big_${version}_${platform}.zip`);
        await writeProviderZip(file, `terraform-provider-big_v${version}`, mb);
        files.push({ version, platform, file, name: file.split('/').pop(), sha: createHash('sha256').update(readFileSync(file)).digest('hex') });
      }
    }
    const totalMB = files.reduce((n, f) => n + statSync(f.file).size, 0) / 1024 / 1024;
    log(`provider sync: ${files.length} packages, ${totalMB.toFixed(1)} MB of zips`);
    const key = await openpgp.generateKey({ type: 'ecc', curve: 'curve25519Legacy', userIDs: [{ name: 'Bench' }], format: 'object' });
    const sums = new Map();
    for (const version of new Set(files.map((f) => f.version))) {
      const doc = Buffer.from(
        files
          .filter((f) => f.version === version)
          .map((f) => `${f.sha}  ${f.name}\n`)
          .join(''),
      );
      const sig = Buffer.from(
        await openpgp.sign({ message: await openpgp.createMessage({ binary: doc }), signingKeys: key.privateKey, detached: true, format: 'binary' }),
      );
      sums.set(version, { doc, sig });
    }
    server.on('request', (req, res) => {
      const path = req.url ?? '/';
      const json = (v) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(v));
      if (path === '/.well-known/terraform.json') return json({ 'providers.v1': '/v1/providers/' });
      if (path === '/v1/providers/bench/big/versions') return json({ versions: [...sums.keys()].map((version) => ({ version, protocols: ['5.0'] })) });
      const m = /^\/v1\/providers\/bench\/big\/([^/]+)\/download\/([^/]+)\/([^/]+)$/.exec(path);
      const f = m && files.find((x) => x.version === m[1] && x.platform === `${m[2]}_${m[3]}`);
      if (f) {
        return json({
          filename: f.name,
          download_url: `/files/${f.name}`,
          shasums_url: `/files/${f.version}_SHA256SUMS`,
          shasums_signature_url: `/files/${f.version}_SHA256SUMS.sig`,
          shasum: f.sha,
          signing_keys: { gpg_public_keys: [{ key_id: key.publicKey.getKeyID().toHex().toUpperCase(), ascii_armor: key.publicKey.armor() }] },
        });
      }
      const s = /^\/files\/([^/]+)_SHA256SUMS(\.sig)?$/.exec(path);
      if (s && sums.has(s[1])) return res.writeHead(200).end(s[2] ? sums.get(s[1]).sig : sums.get(s[1]).doc);
      const zip = files.find((x) => path === `/files/${x.name}`);
      if (zip) return res.writeHead(200, { 'content-type': 'application/zip', 'content-length': String(statSync(zip.file).size) }).end(readFileSync(zip.file));
      res.writeHead(404).end();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const from = `http://127.0.0.1:${server.address().port}/`;

    const sync = [];
    const base = [];
    for (let i = 0; i < runs; i++) {
      const into = join(tmp, `out-${i}`);
      sync.push(
        (
          await runCommand(
            process.execPath,
            [
              ...(process.env.BENCH_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_PROF] : []),
              CLI,
              'sync',
              '--from',
              from,
              '--provider',
              'bench/big',
              ...platforms.flatMap((p) => ['--platform', p]),
              '--providers-into',
              into,
            ],
            { cwd: tmp },
          )
        ).seconds,
      );
      base.push(
        (
          await runCommand(
            'sha256sum',
            files.map((f) => f.file),
          )
        ).seconds,
      );
      log(`provider sync run ${i + 1}/${runs}: ${sync.at(-1).toFixed(2)} s, sha256sum ${base.at(-1).toFixed(2)} s`);
    }
    const modmirror = totalMB / median(sync);
    const baseline = totalMB / median(base);
    return [
      {
        name: `provider sync, ${versions} versions × ${platforms.length} platforms, ${mb} MB binaries (verify, h1:, zh:, write)`,
        modmirror,
        baseline,
        ratio: modmirror / baseline,
        target: `≥ ${TARGET}× sha256sum`,
        pass: modmirror / baseline >= TARGET,
        unit: 'MB/s',
        detail: { totalMB, syncSeconds: sync, sha256sumSeconds: base },
      },
    ];
  } finally {
    server.close();
    removeTempDir(tmp);
  }
}
