// In-house providers as Terraform installs them from a registry: the
// provider-registry-install client (test/clients/provider-registry-install:
// terraform-svchost's disco for providers.v1, the versions and download
// documents, URLs resolved against the download document, then Terraform's
// three checks with golang.org/x/crypto/openpgp) installs every package of a
// mirror built from a signed release folder and extended by `publish
// --provider-release` (an unsigned release signed by modmirror with a second
// key: rotation), over HTTPS from `modmirror serve` and from nginx with the
// block `modmirror hosting nginx` prints. A tampered zip, a tampered
// SHA256SUMS and a signature by an unknown key are each refused by the
// client and named by `verify`.

import { execFile, execFileSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/serve/index.js';
import { startPrintedNginx } from '../hosting/nginx-server.js';
import { makeCertificates, runCli, serveMirror, tempDir, writeFiles } from '../helpers.js';
import { testKey, signRelease, type TestKey } from '../providers/keys.js';
import { writeReleaseFolder, writeZip } from '../providers/zips.js';
import { buildGoProgram } from './go-build.js';
import { refusal, runProviderClient } from './install.js';

const run = promisify(execFile);
const dir = tempDir('mm-registry-install-');
let client: string;
let certs: ReturnType<typeof makeCertificates>;
let acme: TestKey;
let site: TestKey;
let serve: RunningServer;
let tampered: RunningServer;
let nginx: { stop: () => void } | undefined;
let nginxHost: string;

interface Installed {
  provider: string;
  version: string;
  platform: string;
  protocols: string[];
  downloadUrl: string;
  shasumsUrl: string;
  signatureUrl: string;
  shasum: string;
  keyId: string;
  file: string;
  contentType: string;
  contentEncoding: string;
  executable: string;
}

const PACKAGES = ['1.0.0:linux_amd64', '1.0.0:darwin_arm64', '1.1.0:linux_amd64', '2.0.0:linux_amd64'];

async function install(host: string, specs: string[], dest: string): Promise<Installed[]> {
  mkdirSync(dest, { recursive: true });
  return runProviderClient<Installed>(client, [dest, ...specs.map((s) => `${host}/acme/widgets@${s}`)], certs.ca);
}

function installFails(host: string, spec: string): Promise<string> {
  return refusal(install(host, [spec], join(dir, 'fail')));
}

beforeAll(async () => {
  client = (await buildGoProgram(join(import.meta.dirname, 'provider-registry-install'))).binary;
  certs = makeCertificates(dir);
  [acme, site] = await Promise.all([testKey(dir, 'Acme Release'), testKey(dir, 'Site Signing')]);
  writeFiles(dir, {
    'mirror.config.yaml': `providers:\n  - folder: releases\n    namespace: acme\n    registry: true\n    hostname: registry.example.com\n    keys: [${acme.publicFile}]\nplatforms: [linux_amd64, darwin_arm64]\n`,
  });
  await writeReleaseFolder(join(dir, 'releases'), 'widgets', '1.0.0', ['linux_amd64', 'darwin_arm64']);
  await writeReleaseFolder(join(dir, 'releases'), 'widgets', '1.1.0', ['linux_amd64']);
  await signRelease(join(dir, 'releases'), 'widgets', '1.0.0', acme);
  await signRelease(join(dir, 'releases'), 'widgets', '1.1.0', acme);
  const built = await runCli(['build'], dir);
  expect(built.stderr).toBe('');
  expect(built.code).toBe(0);
  // The next release comes from a pipeline that does not sign: modmirror signs it with the site's key.
  await writeReleaseFolder(join(dir, 'pipeline'), 'widgets', '2.0.0', ['linux_amd64']);
  const published = await runCli(
    ['publish', '--provider-release', 'pipeline', '--namespace', 'acme', '--type', 'widgets', '--signing-key', site.privateFile],
    dir,
    { MODMIRROR_SIGNING_PASSPHRASE: site.passphrase },
  );
  expect(published.stderr).toBe('');
  expect(published.code).toBe(0);
  const tls = { cert: certs.cert, key: certs.key };
  serve = await serveMirror(dir, { tls });

  // A copy with one fault per version: 1.0.0's linux zip replaced, 1.1.0 signed by an unknown key, 2.0.0's SHA256SUMS changed after signing.
  cpSync(join(dir, 'dist'), join(dir, 'dist-bad'), { recursive: true, dereference: true });
  const folder = join(dir, 'dist-bad/providers/registry.example.com/acme/widgets');
  execFileSync('rm', [join(folder, 'terraform-provider-widgets_1.0.0_linux_amd64.zip')]);
  await writeZip(join(folder, 'terraform-provider-widgets_1.0.0_linux_amd64.zip'), [
    { name: 'terraform-provider-widgets_v1.0.0', content: 'not what was signed' },
  ]);
  const stranger = await testKey(dir, 'Stranger');
  const resign = join(dir, 'resign');
  cpSync(join(dir, 'releases'), resign, { recursive: true });
  await signRelease(resign, 'widgets', '1.1.0', stranger);
  execFileSync('rm', [join(folder, 'terraform-provider-widgets_1.1.0_SHA256SUMS.sig')]);
  writeFileSync(join(folder, 'terraform-provider-widgets_1.1.0_SHA256SUMS.sig'), readFileSync(join(resign, 'terraform-provider-widgets_1.1.0_SHA256SUMS.sig')));
  const sums = join(folder, 'terraform-provider-widgets_2.0.0_SHA256SUMS');
  const text = readFileSync(sums, 'utf8');
  execFileSync('rm', [sums]);
  writeFileSync(sums, text);
  appendFileSync(sums, `${'0'.repeat(64)}  terraform-provider-widgets_2.0.0_windows_amd64.zip\n`);
  tampered = await startServer({ dir: join(dir, 'dist-bad'), host: '127.0.0.1', port: 0, dataDir: join(dir, 'data-bad'), tls });

  // nginx: the printed block with TLS (Terraform discovers hosts over HTTPS only).
  const printed = await startPrintedNginx(join(dir, 'nginx'), join(dir, 'dist'), certs);
  nginx = printed;
  nginxHost = `localhost:${printed.tlsPort}`;
}, 300_000);

afterAll(async () => {
  nginx?.stop();
  await serve?.close();
  await tampered?.close();
});

describe.each([
  ['modmirror serve', () => `localhost:${new URL(serve.url).port}`],
  ['nginx (hosting nginx)', () => nginxHost],
])('provider-registry-install from %s over HTTPS', (server, hostOf) => {
  it('installs every version and platform, byte for byte, each signature checked against the key its document lists', async () => {
    const installed = await install(hostOf(), PACKAGES, join(dir, `installed-${server.split(' ')[0]}`));
    expect(installed.map((i) => `${i.version}:${i.platform}`)).toEqual(PACKAGES);
    for (const got of installed) {
      const input = join(dir, got.version === '2.0.0' ? 'pipeline' : 'releases', `terraform-provider-widgets_${got.version}_${got.platform}.zip`);
      expect(readFileSync(got.file).equals(readFileSync(input))).toBe(true);
      // Rotation: the old releases stay signed by the publisher's key, the new one by the site's.
      expect(got.keyId).toBe(got.version === '2.0.0' ? site.keyId : acme.keyId);
      expect(got.protocols).toEqual(['5.0']);
      // The relative URLs resolved against the download document: files of the network mirror's folder.
      expect(new URL(got.downloadUrl).pathname).toBe(
        `/providers/registry.example.com/acme/widgets/terraform-provider-widgets_${got.version}_${got.platform}.zip`,
      );
      expect(new URL(got.signatureUrl).pathname).toBe(`/providers/registry.example.com/acme/widgets/terraform-provider-widgets_${got.version}_SHA256SUMS.sig`);
      expect(got.contentType).toBe('application/zip');
      expect(got.contentEncoding).toBe('');
      expect(got.executable).toBe(`terraform-provider-widgets_v${got.version}`);
    }
  });

  it('reports a platform without a package (404 on download) and a provider the registry lacks (404 on versions)', async () => {
    expect(await installFails(hostOf(), '1.1.0:darwin_arm64')).toContain('provider localhost');
    expect(await installFails(hostOf(), '1.1.0:darwin_arm64')).toContain('is not available for darwin_arm64');
    const unknown = await refusal(runProviderClient(client, [join(dir, 'fail'), `${hostOf()}/acme/gadgets@1.0.0:linux_amd64`], certs.ca));
    expect(unknown).toContain('does not have a provider named');
  });
});

describe('provider-registry-install against a tampered mirror', () => {
  const host = () => `localhost:${new URL(tampered.url).port}`;
  it('refuses a zip that is not what SHA256SUMS lists', async () => {
    expect(await installFails(host(), '1.0.0:linux_amd64')).toMatch(/archive has incorrect SHA-256 checksum [0-9a-f]{64} \(expected [0-9a-f]{64}\)/);
  });
  it('refuses a signature by a key the document does not list', async () => {
    expect(await installFails(host(), '1.1.0:linux_amd64')).toContain('authentication signature from unknown issuer');
  });
  it('refuses a SHA256SUMS changed after it was signed', async () => {
    expect(await installFails(host(), '2.0.0:linux_amd64')).toContain('error checking signature');
  });
  it('verify names each of the three files', async () => {
    const r = await runCli(['verify', '--mirror', 'dist-bad'], dir);
    expect(r.code).toBe(1);
    const out = r.stdout + r.stderr;
    expect(out).toContain('providers/registry.example.com/acme/widgets/terraform-provider-widgets_1.0.0_linux_amd64.zip: sha256');
    expect(out).toContain(
      'providers/registry.example.com/acme/widgets/terraform-provider-widgets_1.1.0_SHA256SUMS.sig: authentication signature from unknown issuer',
    );
    expect(out).toContain('providers/registry.example.com/acme/widgets/terraform-provider-widgets_2.0.0_SHA256SUMS: sha256');
    expect((await runCli(['verify', '--mirror', 'dist'], dir)).code).toBe(0);
  });
});

describe('content types from serve and nginx', () => {
  it('answers the documents as JSON and the release files as stored, with their types', async () => {
    const bases = [serve.url, `https://${nginxHost}/`];
    const files: [string, string][] = [
      ['v1/providers/acme/widgets/versions', 'application/json'],
      ['v1/providers/acme/widgets/1.0.0/download/linux/amd64', 'application/json'],
      ['providers/registry.example.com/acme/widgets/terraform-provider-widgets_1.0.0_SHA256SUMS', 'text/plain; charset=utf-8'],
      ['providers/registry.example.com/acme/widgets/terraform-provider-widgets_1.0.0_SHA256SUMS.sig', 'application/pgp-signature'],
    ];
    for (const base of bases) {
      for (const [file, type] of files) {
        const { stdout } = await run('curl', [
          '-sS',
          '--cacert',
          certs.ca,
          '-H',
          'Accept-Encoding: gzip',
          '-o',
          '/dev/null',
          '-w',
          '%{http_code} %{content_type}',
          `${base}${file}`,
        ]);
        expect(stdout, `${base}${file}`).toBe(`200 ${type}`);
      }
      const sums = await run('curl', [
        '-sS',
        '--cacert',
        certs.ca,
        '-H',
        'Accept-Encoding: gzip',
        '-D',
        '-',
        '-o',
        '/dev/null',
        `${base}providers/registry.example.com/acme/widgets/terraform-provider-widgets_1.0.0_SHA256SUMS`,
      ]);
      expect(sums.stdout.toLowerCase()).not.toContain('content-encoding');
    }
  });
});

describe('download counts', () => {
  it('counts each in-house zip fetched through serve under its provider', async () => {
    await serve.close();
    const counts = JSON.parse(readFileSync(join(dir, 'data/downloads.json'), 'utf8')) as Record<string, Record<string, number>>;
    // The four packages of the install test from serve.
    expect(Object.values(counts['provider:registry.example.com/acme/widgets'] ?? {}).reduce((a, b) => a + b, 0)).toBe(4);
  });
});
