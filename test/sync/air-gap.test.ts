// Issue 13's "done when", end to end: a configuration calls a registry
// module, which calls a second, which calls a third that requires two
// providers. Outside, `sync --for` against one upstream (discovery naming a
// `modmirror serve` of another mirror for modules.v1 and a providers.v1
// server of the test's own), build, bundle; inside, unbundle and serve; then
// the Go client (test/clients/module-install, with the `host` override for
// registry.terraform.io) installs every module of the closure from the mirror,
// and the provider-install client (Terraform's network mirror source: index.json,
// VERSION.json, the zip, h1: with Go's dirhash and zh:) installs the synced
// providers from the mirror's network mirror over HTTPS, in both the
// registry.terraform.io and registry.opentofu.org trees. The same mirror also
// holds a folder as `terraform providers mirror` writes it and a folder of
// release zips, and every package passes the client's checks from `serve` and
// from nginx with the block `hosting nginx` prints.

import { execFile } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/serve/index.js';
import { startPrintedNginx } from '../hosting/nginx-server.js';
import { INPUT_PACKAGES, writeProviderInputs } from '../providers/zips.js';
import { buildGoProgram } from '../clients/go-build.js';
import { expectSameFiles, install, installProviders, moduleInstallClient } from '../clients/install.js';
import { makeCertificates, runCli, serveMirror, tempDir, writeFiles } from '../helpers.js';
import { startProviderUpstream, type ProviderUpstream } from './provider-upstream.js';
import { startUpstream } from './upstream.js';

const run = promisify(execFile);
const upstreamDir = tempDir('mm-airgap-upstream-');
const outside = tempDir('mm-airgap-outside-');
const inside = tempDir('mm-airgap-inside-');
let modules: RunningServer;
let providers: ProviderUpstream;
let mirror: RunningServer | undefined;
let goHash = '';

const call = (name: string, source: string, version: string) => `module "${name}" {\n  source  = "${source}"\n  version = "${version}"\n}\n`;
const REQUIRES =
  'terraform {\n  required_providers {\n    widget = {\n      source  = "acme/widget"\n      version = "~> 1.0"\n    }\n    gadget = {\n      source = "registry.terraform.io/acme/gadget"\n    }\n  }\n}\n';
const MODULES: Record<string, string> = {
  'mirror.config.yaml': 'sources:\n  - folder: mods\n',
  'mods/acme/app/null/1.0.0/main.tf': call('net', 'acme/net/null', '~> 1.0'),
  'mods/acme/net/null/1.0.0/main.tf': 'output "old" {\n  value = 1\n}\n',
  'mods/acme/net/null/1.1.0/main.tf': call('base', 'registry.terraform.io/acme/base/null', '>= 0.1'),
  'mods/acme/base/null/0.1.0/main.tf': `${REQUIRES}resource "widget_thing" "t" {}\n`,
  'mods/acme/base/null/0.1.0/README.md': '# base\n',
};

beforeAll(async () => {
  await moduleInstallClient();
  goHash = (await buildGoProgram(join(import.meta.dirname, '../clients/provider-hash'))).binary;
  modules = await startUpstream(upstreamDir, MODULES);
  // One registry host answering both protocols, as registry.terraform.io does: modules.v1 may name another origin.
  providers = await startProviderUpstream(
    upstreamDir,
    [
      { namespace: 'acme', type: 'widget', versions: { '1.0.0': ['linux_amd64'], '1.1.0': ['linux_amd64', 'darwin_arm64'], '2.0.0': ['linux_amd64'] } },
      { namespace: 'acme', type: 'gadget', versions: { '3.0.0': ['linux_amd64', 'windows_amd64'] } },
    ],
    { modules: new URL('v1/modules/', modules.url).href },
  );
}, 240_000);
afterAll(async () => {
  await mirror?.close();
  await modules?.close();
  providers?.close();
});

it('outside: sync --for fetches the closure of modules and the providers the third requires', async () => {
  writeFiles(outside, {
    'mirror.config.yaml':
      'sources:\n  - folder: modules\nproviders:\n  - folder: providers\n  - folder: inputs/tf-mirror\n  - folder: inputs/releases\n    namespace: acme\nplatforms: [linux_amd64]\n',
    'modules/.keep': '',
    'providers/.keep': '',
    'infra/main.tf': call('app', 'acme/app/null', '1.0.0'),
  });
  // The other two kinds of provider folder: `terraform providers mirror` output and a release.
  await writeProviderInputs(join(outside, 'inputs'));
  const r = await runCli(['sync', '--from', providers.url, '--for', 'infra'], outside);
  expect(r.stderr).not.toMatch(/error:/);
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(
    /^Fetched 3 version\(s\) into modules\/ \(0 already there\) from http:\/\/127\.0\.0\.1:\d+\.\nFetched 2 provider package\(s\) into providers\/ \(0 already there\) from http:\/\/127\.0\.0\.1:\d+\. Run modmirror build to serve them\./,
  );
  expect(r.stdout).toContain('  registry.terraform.io/acme/widget 1.1.0 linux_amd64  (called from acme/base/null 0.1.0: required_providers)');
  expect(r.stdout).toContain('  registry.terraform.io/acme/gadget 3.0.0 linux_amd64  (called from acme/base/null 0.1.0: required_providers)');

  // `acme/widget`, without a host, is registry.opentofu.org's to OpenTofu: the same packages, hard-linked, in its tree too.
  const tf = join(outside, 'providers/registry.terraform.io/acme/widget');
  const tofu = join(outside, 'providers/registry.opentofu.org/acme/widget');
  expect(readFileSync(join(tofu, '1.1.0.json'), 'utf8')).toBe(readFileSync(join(tf, '1.1.0.json'), 'utf8'));
  expect(readFileSync(join(tofu, 'index.json'), 'utf8')).toBe(readFileSync(join(tf, 'index.json'), 'utf8'));
  expect(statSync(join(tofu, 'terraform-provider-widget_1.1.0_linux_amd64.zip')).ino).toBe(
    statSync(join(tf, 'terraform-provider-widget_1.1.0_linux_amd64.zip')).ino,
  );
  // `registry.terraform.io/acme/gadget` names its host: one tree.
  expect(existsSync(join(outside, 'providers/registry.opentofu.org/acme/gadget'))).toBe(false);

  for (const [type, version] of [
    ['widget', '1.1.0'],
    ['gadget', '3.0.0'],
  ]) {
    const folder = join(outside, 'providers/registry.terraform.io/acme', type!);
    const zip = join(folder, `terraform-provider-${type}_${version}_linux_amd64.zip`);
    const listed = JSON.parse(readFileSync(join(folder, `${version}.json`), 'utf8')).archives.linux_amd64.hashes;
    expect(listed[0]).toBe((await run(goHash, [zip])).stdout.split('  ')[0]);
  }
});

it('inside: bundle, unbundle and serve; the Go client installs every module of the closure with the host override', async () => {
  expect((await runCli(['build'], outside)).code).toBe(0);
  const bundle = join(outside, 'mirror.tar.gz');
  expect((await runCli(['bundle', '--out', bundle], outside)).code).toBe(0);
  const unbundled = await runCli(['unbundle', bundle, '--mirror', join(inside, 'dist')], inside);
  expect(unbundled.code, unbundled.stderr).toBe(0);
  // Every module version's required providers are in the mirror, for the config's platforms.
  const complete = await runCli(['verify', '--complete', '--mirror', join(inside, 'dist'), '--config', join(outside, 'mirror.config.yaml')], inside);
  expect(complete.code, complete.stdout + complete.stderr).toBe(0);
  mirror = await serveMirror(inside);
  // `host "registry.terraform.io" { services = { "modules.v1" = ".../v1/modules/" } }`
  const modulesUrl = new URL('v1/modules/', mirror.url).href;
  for (const [source, constraint, version] of [
    ['registry.terraform.io/acme/app/null', '1.0.0', '1.0.0'],
    ['registry.terraform.io/acme/net/null', '~> 1.0', '1.1.0'],
    ['registry.terraform.io/acme/base/null', '>= 0.1', '0.1.0'],
  ] as const) {
    const installed = await install({ source, version: constraint, dest: join(inside, 'init', source.split('/')[2]!), modulesUrl });
    expect(installed.version).toBe(version);
    expectSameFiles(installed, join(upstreamDir, 'mods', source.split('/').slice(1).join('/'), version));
  }
});

it("inside: every provider package (synced, `terraform providers mirror` folder, release) passes the Go client's checks over HTTPS from serve and nginx", async () => {
  const certs = makeCertificates(inside);
  const tls = await startServer({
    dir: join(inside, 'dist'),
    host: '127.0.0.1',
    port: 0,
    dataDir: join(inside, 'data-tls'),
    tls: { cert: certs.cert, key: certs.key },
    log: () => {},
  });
  const nginx = await startPrintedNginx(join(inside, 'nginx'), join(inside, 'dist'), certs);
  try {
    const synced = [
      'registry.terraform.io/acme/widget@1.1.0:linux_amd64',
      'registry.opentofu.org/acme/widget@1.1.0:linux_amd64',
      'registry.terraform.io/acme/gadget@3.0.0:linux_amd64',
    ];
    const specs = [...synced, ...Object.keys(INPUT_PACKAGES)];
    for (const [host, base] of [
      ['serve', new URL('providers/', tls.url).href],
      ['nginx', `https://127.0.0.1:${nginx.tlsPort}/providers/`],
    ] as const) {
      const installed = await installProviders(base, specs, join(inside, 'provider-install', host), certs.ca);
      expect(
        installed.map((i) => `${i.provider}@${i.version}`),
        host,
      ).toEqual(specs.map((s) => s.split(':')[0]));
      for (const i of installed) expect(i.hashes, `${host} ${i.provider}`).toContain(i.h1);
      // Synced packages carry both hashes; a `terraform providers mirror` folder has only h1:, which the mirror completes.
      for (const i of installed) expect(i.hashes, `${host} ${i.provider}`).toContain(i.zh);
    }
  } finally {
    nginx.stop();
    await tls.close();
  }
});

it('from an upstream serving modules only, the providers modules require are reported, not failed', async () => {
  const r = await runCli(['sync', '--from', modules.url, '--for', 'infra', '--into', 'modules-only', '--providers-into', 'providers-none', '--json'], outside);
  expect(r.code).toBe(0);
  const report = JSON.parse(r.stdout).upstreams[0];
  expect(report.fetched.map((f: { module: string }) => f.module).sort()).toEqual(['acme/app/null', 'acme/base/null', 'acme/net/null']);
  expect(
    report.notMirrored
      .filter((n: { reason: string }) => n.reason === 'no-providers-service')
      .map((n: { source: string }) => n.source)
      .sort(),
  ).toEqual(['registry.terraform.io/acme/gadget', 'registry.terraform.io/acme/widget']);
  const named = await runCli(['sync', '--from', modules.url, '--provider', 'acme/widget', '--providers-into', 'providers-none'], outside);
  expect(named.code).toBe(1);
  expect(named.stderr).toMatch(/names no "providers\.v1" service, so http:\/\/127\.0\.0\.1:\d+\/ serves no providers/);
});
