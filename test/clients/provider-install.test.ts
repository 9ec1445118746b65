// The provider network mirror as Terraform installs from it: the
// provider-install client (test/clients/provider-install, the steps of
// Terraform's internal/getproviders/http_mirror_source.go: index.json,
// VERSION.json as application/json, the url resolved against VERSION.json's
// URL, the zip with Go's default client asking for gzip, then h1: with
// dirhash and zh: with sha256) installs every package of a mirror built from a
// `terraform providers mirror` folder and a release-zips folder, over HTTPS
// (Terraform accepts only https for a network mirror) from `modmirror serve`
// and from nginx with the block `modmirror hosting nginx` prints.

import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/serve/index.js';
import { startPrintedNginx } from '../hosting/nginx-server.js';
import { makeCertificates, runCli, serveMirror, tempDir } from '../helpers.js';
import { INPUT_PACKAGES, writeProviderInputs } from '../providers/zips.js';
import { installProviders, providerInstallClient, refusal, type InstalledProvider } from './install.js';

const dir = tempDir('mm-provider-install-');
let certs: ReturnType<typeof makeCertificates>;
let serve: RunningServer;
let tampered: RunningServer;
let nginx: { stop: () => void } | undefined;
let nginxBase: string;

function install(base: string, specs: string[], dest: string): Promise<InstalledProvider[]> {
  return installProviders(base, specs, dest, certs.ca);
}

function installFails(base: string, spec: string): Promise<string> {
  return refusal(install(base, [spec], join(dir, 'fail')));
}

beforeAll(async () => {
  await providerInstallClient();
  certs = makeCertificates(dir);
  await writeProviderInputs(dir);
  const built = await runCli(['build', '--json'], dir);
  expect(built.stderr).toBe('');
  expect(built.code).toBe(0);
  serve = await serveMirror(dir, { tls: { cert: certs.cert, key: certs.key }, log: () => {} });

  // A copy whose VERSION.json lists a wrong h1: for one platform, as a corrupted mirror would.
  cpSync(join(dir, 'dist'), join(dir, 'dist-bad'), { recursive: true, dereference: true });
  const bad = join(dir, 'dist-bad/providers/registry.terraform.io/hashicorp/random/3.6.0.json');
  const doc = JSON.parse(readFileSync(bad, 'utf8'));
  doc.archives.linux_amd64.hashes[0] = 'h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';
  writeFileSync(bad, JSON.stringify(doc));
  tampered = await startServer({
    dir: join(dir, 'dist-bad'),
    host: '127.0.0.1',
    port: 0,
    dataDir: join(dir, 'data-bad'),
    tls: { cert: certs.cert, key: certs.key },
    log: () => {},
  });

  // nginx: the printed block on a plain port, and the same block with TLS on another.
  const printed = await startPrintedNginx(join(dir, 'nginx'), join(dir, 'dist'), certs);
  nginx = printed;
  nginxBase = `https://127.0.0.1:${printed.tlsPort}/providers/`;
}, 300_000);

afterAll(async () => {
  nginx?.stop();
  await serve?.close();
  await tampered?.close();
});

describe.each([
  ['modmirror serve', () => new URL('providers/', serve.url).href],
  ['nginx (hosting nginx)', () => nginxBase],
])('provider-install from %s over HTTPS', (host, baseOf) => {
  it('installs every package of both input folders, byte for byte, passing the h1: and zh: checks', async () => {
    const specs = Object.keys(INPUT_PACKAGES);
    const installed = await install(baseOf(), specs, join(dir, `installed-${host.split(' ')[0]}`));
    expect(installed.map((i) => `${i.provider}@${i.version}:${i.platform}`)).toEqual(specs);
    for (const got of installed) {
      const input = join(dir, INPUT_PACKAGES[`${got.provider}@${got.version}:${got.platform}`]!);
      expect(readFileSync(got.file).equals(readFileSync(input))).toBe(true);
      // Both hashes listed, each matched by the client's own computation.
      expect(got.hashes).toEqual([got.h1, got.zh]);
      // The url is the zip's name, resolved against VERSION.json's URL to the file beside it.
      expect(got.url).toBe(new URL(input.slice(input.lastIndexOf('/') + 1), `${baseOf()}${got.provider}/`).href);
      // Go asked for gzip; the zip came as stored.
      expect(got.contentEncoding).toBe('');
      expect(got.contentType).toBe('application/zip');
      expect(got.executable).toBe(`terraform-provider-${got.provider.split('/')[2]}_v${got.version}`);
    }
  });

  it('finds no provider the mirror lacks (404 on index.json: the next installation method is tried)', async () => {
    expect(await installFails(baseOf(), 'registry.terraform.io/hashicorp/aws@5.31.0:linux_amd64')).toContain(
      'provider registry.terraform.io/hashicorp/aws not found in the mirror (404)',
    );
  });

  it('reports a platform the mirror does not carry', async () => {
    expect(await installFails(baseOf(), 'registry.opentofu.org/hashicorp/null@3.2.2:windows_amd64')).toContain('is not available for windows_amd64');
  });
});

describe('provider-install against a mirror with a wrong h1:', () => {
  it('refuses the package, as Terraform refuses one that matches no listed checksum', async () => {
    const stderr = await installFails(new URL('providers/', tampered.url).href, 'registry.terraform.io/hashicorp/random@3.6.0:linux_amd64');
    expect(stderr).toContain("doesn't match the checksum h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=");
    // verify names the same problem in the tree.
    const verify = await runCli(['verify', '--mirror', 'dist-bad'], dir);
    expect(verify.code).toBe(1);
    expect(verify.stdout + verify.stderr).toContain('providers/registry.terraform.io/hashicorp/random/3.6.0.json: archives.linux_amd64.hashes');
  });
});

describe('download counts', () => {
  it('counts each provider zip fetched through serve under its provider, in the data folder', async () => {
    await install(new URL('providers/', serve.url).href, ['registry.terraform.io/acme/widgets@0.4.0:darwin_arm64'], join(dir, 'count'));
    await serve.close();
    const counts = JSON.parse(readFileSync(join(dir, 'data/downloads.json'), 'utf8')) as Record<string, Record<string, number>>;
    const total = (key: string) => Object.values(counts[key] ?? {}).reduce((a, b) => a + b, 0);
    // Two from the install test above, one here.
    expect(total('provider:registry.terraform.io/acme/widgets')).toBe(3);
    expect(total('provider:registry.terraform.io/hashicorp/random')).toBe(3);
    expect(total('provider:registry.opentofu.org/hashicorp/null')).toBe(1);
  });
});
