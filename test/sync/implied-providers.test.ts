// Providers nothing declares, end to end: a configuration (itself using a
// `gadget_*` data source and terraform_remote_state) calls a registry module
// written before Terraform 0.13, whose only provider is the one its
// `widget_*` resource implies. `sync --for` from an upstream that has
// hashicorp/widget and hashicorp/gadget brings both across (and never the
// built-in terraform), and `sync --module` of that module alone brings
// hashicorp/widget; the built mirror passes `verify --complete`; then the
// provider-install client (Terraform's network mirror source) and, where it
// is installed, `terraform init` itself install them from the mirror alone.
// The upstream is a modmirror serve of a built mirror, so its listing shows
// what our extraction gives.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/serve/index.js';
import { installProviders } from '../clients/install.js';
import { hasTerraform, makeCertificates, runCli, serveMirror, tempDir, terraformInit, writeFiles } from '../helpers.js';
import { startProviderUpstream, type ProviderUpstream } from './provider-upstream.js';
import { startUpstream } from './upstream.js';

const upstreamDir = tempDir('mm-implied-upstream-');
const outside = tempDir('mm-implied-outside-');
let modules: RunningServer;
let providers: ProviderUpstream;
let mirror: RunningServer | undefined;
let certs: ReturnType<typeof makeCertificates>;

const CONFIGURATION =
  'module "legacy" {\n  source  = "acme/legacy/null"\n  version = "1.0.0"\n}\n\ndata "gadget_info" "this" {}\n\ndata "terraform_remote_state" "net" {\n  backend = "local"\n}\n';

beforeAll(async () => {
  modules = await startUpstream(upstreamDir, {
    'mirror.config.yaml': 'sources:\n  - folder: mods\n',
    'mods/acme/legacy/null/1.0.0/main.tf': 'variable "name" {\n  default = "x"\n}\n\nresource "widget_thing" "this" {\n  name = "${var.name}"\n}\n',
  });
  providers = await startProviderUpstream(
    upstreamDir,
    [
      { namespace: 'hashicorp', type: 'widget', versions: { '1.0.0': ['linux_amd64'], '1.1.0': ['linux_amd64'] } },
      { namespace: 'hashicorp', type: 'gadget', versions: { '2.0.0': ['linux_amd64'] } },
    ],
    { modules: new URL('v1/modules/', modules.url).href },
  );
  certs = makeCertificates(outside);
}, 120_000);
afterAll(async () => {
  await mirror?.close();
  await modules?.close();
  providers?.close();
});

it('the upstream lists the implied provider in the versions listing and the detail, over HTTP', async () => {
  const widget = { name: 'widget', namespace: '', source: '', version: '' };
  const listing = await (await fetch(new URL('v1/modules/acme/legacy/null/versions', modules.url))).json();
  expect(listing.modules[0].versions[0].root.providers).toEqual([widget]);
  const detail = await (await fetch(new URL('v1/modules/acme/legacy/null/1.0.0', modules.url))).json();
  expect(detail.root.provider_dependencies).toEqual([widget]);
});

it('sync --for brings across the providers the configuration and the module it calls imply', async () => {
  writeFiles(outside, {
    'mirror.config.yaml': 'sources:\n  - folder: modules\nproviders:\n  - folder: providers\nplatforms: [linux_amd64]\n',
    'modules/.keep': '',
    'providers/.keep': '',
    'infra/main.tf': CONFIGURATION,
  });
  const r = await runCli(['sync', '--from', providers.url, '--for', 'infra'], outside);
  expect(r.stderr).not.toMatch(/error:/);
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/^Fetched 1 version\(s\) into modules\/ /);
  expect(r.stdout).toContain('  registry.terraform.io/hashicorp/widget 1.1.0 linux_amd64  (called from acme/legacy/null 1.0.0: required_providers)');
  expect(r.stdout).toContain('  registry.terraform.io/hashicorp/gadget 2.0.0 linux_amd64  (called from infra: required_providers)');
  expect(r.stdout).not.toContain('hashicorp/terraform');
  expect(providers.requests.some((p) => p.includes('/terraform/'))).toBe(false);
  // A bare hashicorp/NAME is registry.opentofu.org's to OpenTofu: that tree has it too.
  expect(existsSync(join(outside, 'providers/registry.opentofu.org/hashicorp/widget/1.1.0.json'))).toBe(true);

  expect((await runCli(['build'], outside)).code).toBe(0);
  const complete = await runCli(['verify', '--mirror', 'dist', '--complete'], outside);
  expect(complete.code, complete.stdout + complete.stderr).toBe(0);
}, 120_000);

it('sync --module brings across the provider the mirrored version implies', async () => {
  const dir = tempDir('mm-implied-module-');
  writeFiles(dir, { 'modules/.keep': '', 'providers/.keep': '' });
  const r = await runCli(['sync', '--from', providers.url, '--module', 'acme/legacy/null', '--into', 'modules', '--providers-into', 'providers'], dir);
  expect(r.stderr).not.toMatch(/error:/);
  expect(r.code).toBe(0);
  expect(r.stdout).toContain('  registry.terraform.io/hashicorp/widget 1.1.0 linux_amd64  (called from acme/legacy/null 1.0.0: required_providers)');
  expect(existsSync(join(dir, 'providers/registry.terraform.io/hashicorp/widget/1.1.0.json'))).toBe(true);
  expect(existsSync(join(dir, 'providers/registry.terraform.io/hashicorp/gadget'))).toBe(false);
}, 120_000);

it('the provider-install client installs them from the mirror alone', async () => {
  mirror = await serveMirror(outside, { tls: { cert: certs.cert, key: certs.key }, log: () => {} });
  const specs = [
    'registry.terraform.io/hashicorp/widget@1.1.0:linux_amd64',
    'registry.opentofu.org/hashicorp/widget@1.1.0:linux_amd64',
    'registry.terraform.io/hashicorp/gadget@2.0.0:linux_amd64',
  ];
  const installed = await installProviders(new URL('providers/', mirror.url).href, specs, join(outside, 'provider-install'), certs.ca);
  expect(installed.map((i) => `${i.provider}@${i.version}`)).toEqual(specs.map((s) => s.split(':')[0]));
  for (const i of installed) expect(i.hashes).toContain(i.h1);
}, 180_000);

describe.skipIf(!hasTerraform)('terraform init (real client)', () => {
  it('installs the module and its implied provider with only the mirror to reach', async () => {
    // The module host and the provider mirror both point at the mirror; nothing else is allowed.
    const files = {
      'cli.tfrc': `host "registry.terraform.io" {\n  services = {\n    "modules.v1" = "${mirror!.url}v1/modules/"\n  }\n}\nprovider_installation {\n  network_mirror {\n    url = "${mirror!.url}providers/"\n  }\n}\n`,
      'infra/main.tf': CONFIGURATION,
    };
    const env: NodeJS.ProcessEnv = { SSL_CERT_FILE: certs.ca };
    for (const k of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy', 'ALL_PROXY', 'all_proxy']) env[k] = undefined;
    const { code, output: stdout } = await terraformInit(join(outside, 'tf'), files, env);
    expect(code, `terraform init failed:\n${stdout}`).toBe(0);
    expect(stdout).toContain('Downloading registry.terraform.io/acme/legacy/null 1.0.0');
    expect(stdout).toContain('Installed hashicorp/widget v1.1.0');
    expect(stdout).toContain('Installed hashicorp/gadget v2.0.0');
    expect(stdout).not.toContain('hashicorp/terraform');
  }, 180_000);
});
