// What Terraform itself gets from a mirror that fills itself: `terraform
// init` of a configuration with public-style addresses, through a cache whose
// upstream is another modmirror serve over HTTPS with a CA of its own (the
// cache trusts it as --upstream-ca makes it, Terraform only the cache's),
// serving modules and a signed provider release (providers.v1). The called
// module's module call is followed by Terraform through the same cache, and
// the provider comes through the cache's providers.v1 for the public host
// (a host block), with a lock file byte-identical to one made straight from
// the upstream, or through its network mirror. With the upstream stopped,
// fresh inits in new folders still succeed from what the cache holds, with
// the same dependency lock file as an init straight from the upstream; the
// cache's mirror verifies, complete. Runs when terraform is on PATH.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/serve/index.js';
import { makeCertificatesIn } from '../certificates.js';
import { resolveMirrorConfig } from '../../src/config/index.js';
import { takeInProviders } from '../../src/upstream/providers.js';
import { hasTerraform, makeCertificates, mirrorManifest, runCli, tempDir, terraformInit, type TerraformResult } from '../helpers.js';
import { signRelease, testKey } from '../providers/keys.js';
import { writeReleaseFolder } from '../providers/zips.js';
import { emptyMirror, startCache, startUpstream } from './site.js';

const servers: RunningServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
});

const REQUIRES_WIDGETS = 'terraform {\n  required_providers {\n    widgets = { source = "acme/widgets", version = "~> 1.0" }\n  }\n}\n';
const UPSTREAM_FILES = {
  'mods/acme/net/aws/1.0.0/main.tf':
    REQUIRES_WIDGETS + 'variable "cidr" {\n  default = "10.0.0.0/16"\n}\n\nmodule "subnets" {\n  source  = "acme/subnets/aws"\n  version = "~> 1.0"\n}\n',
  'mods/acme/subnets/aws/1.0.0/main.tf': 'output "count" {\n  value = 1\n}\n',
  'mods/acme/subnets/aws/1.2.0/main.tf': 'output "count" {\n  value = 2\n}\n',
  'mods/acme/subnets/aws/2.0.0/main.tf': 'output "count" {\n  value = 3\n}\n',
};

const CONFIGURATION = `${REQUIRES_WIDGETS}\nmodule "net" {\n  source  = "registry.terraform.io/acme/net/aws"\n  version = "1.0.0"\n}\n`;

/** Modules through the cache's modules.v1, providers through its network mirror: nothing from anywhere else. */
function init(dir: string, cache: RunningServer, ca: string): Promise<TerraformResult> {
  const files = {
    'cli.tfrc':
      `host "registry.terraform.io" {\n  services = {\n    "modules.v1" = "${cache.url}v1/modules/"\n  }\n}\n` +
      `provider_installation {\n  network_mirror {\n    url = "${cache.url}providers/"\n  }\n}\n`,
    'infra/main.tf': CONFIGURATION,
  };
  return terraformInit(dir, files, { SSL_CERT_FILE: ca });
}

/** Modules and providers through the cache's registry protocols for the public host: a host block, no provider_installation. */
function initRegistry(dir: string, cache: RunningServer, ca: string): Promise<TerraformResult> {
  const services = `    "modules.v1" = "${cache.url}v1/modules/"\n    "providers.v1" = "${cache.url}providers/registry.terraform.io/"\n`;
  return terraformInit(
    dir,
    { 'cli.tfrc': `host "registry.terraform.io" {\n  services = {\n${services}  }\n}\n`, 'infra/main.tf': CONFIGURATION },
    { SSL_CERT_FILE: ca },
  );
}

/** Straight from the upstream, as without a cache: its modules.v1 and providers.v1 for the public host, the provider installed directly. */
function initDirect(dir: string, upstream: RunningServer, ca: string): Promise<TerraformResult> {
  const services = `    "modules.v1" = "${upstream.url}v1/modules/"\n    "providers.v1" = "${upstream.url}v1/providers/"\n`;
  return terraformInit(
    dir,
    { 'cli.tfrc': `host "registry.terraform.io" {\n  services = {\n${services}  }\n}\n`, 'infra/main.tf': CONFIGURATION },
    { SSL_CERT_FILE: ca },
  );
}

describe.skipIf(!hasTerraform)('terraform init through a mirror that fills itself (real client)', () => {
  it('installs modules and a provider through the cache, and again in a new folder once the upstream is gone, with the lock file made upstream', async () => {
    const dir = tempDir('mm-upstream-tf-');
    const cacheCerts = makeCertificates(dir);
    const upstreamCerts = makeCertificatesIn(tempDir('mm-upstream-ca-'));
    // The upstream publishes acme/widgets 1.1.0 as the public registry would: signed SHA256SUMS, the key in its download documents.
    const key = await testKey(tempDir('mm-upstream-keys-'), 'Acme Release');
    const releases = join(dir, 'upstream/releases');
    // Two platforms: the lock file made upstream has a zh: hash for each line of SHA256SUMS, and the h1: of the one installed.
    await writeReleaseFolder(releases, 'widgets', '1.1.0', ['linux_amd64', 'darwin_arm64']);
    await signRelease(releases, 'widgets', '1.1.0', key);
    const upstream = await startUpstream(
      join(dir, 'upstream'),
      {
        ...UPSTREAM_FILES,
        'mirror.config.yaml': `sources:\n  - folder: mods\nproviders:\n  - folder: releases\n    namespace: acme\n    registry: true\n    hostname: registry.terraform.io\n    keys: [${key.publicFile}]\n`,
      },
      { cert: upstreamCerts.cert, key: upstreamCerts.key },
    );
    await emptyMirror(dir);
    const log: string[] = [];
    const config = resolveMirrorConfig({ out: join(dir, 'cache') }, dir);
    const into = join(dir, 'data/upstream-providers');
    const cache = await startCache(
      dir,
      {
        url: new URL(upstream.url),
        ttlSeconds: 1,
        ca: [readFileSync(upstreamCerts.ca, 'utf8')],
        providers: { into, platforms: config.platforms, path: config.providersPath, commit: takeInProviders(config, into) },
      },
      log,
      { cert: cacheCerts.cert, key: cacheCerts.key },
    );
    servers.push(cache);

    const direct = await initDirect(join(dir, 'direct'), upstream, upstreamCerts.ca);
    expect(direct.output).toContain('Installed acme/widgets v1.1.0 (self-signed');
    expect(direct.code).toBe(0);
    const lockOf = (folder: string) => readFileSync(join(dir, folder, 'infra/.terraform.lock.hcl'), 'utf8');

    // Through the cache's providers.v1: the provider is filled with the upstream's signed SHA256SUMS, which
    // Terraform checks as it does upstream and records a zh: hash for each line of: the same lock file, byte for byte.
    const registry = await initRegistry(join(dir, 'registry'), cache, cacheCerts.ca);
    expect(registry.output).toContain('Installed acme/widgets v1.1.0 (self-signed');
    expect(registry.code).toBe(0);
    // One zh: per line of the upstream's SHA256SUMS: the two zips and the release manifest.
    expect(lockOf('direct').match(/"zh:/g)).toHaveLength(3);
    expect(lockOf('registry')).toBe(lockOf('direct'));
    expect(readFileSync(join(dir, 'cache/providers/registry.terraform.io/acme/widgets/terraform-provider-widgets_1.1.0_SHA256SUMS'))).toEqual(
      readFileSync(join(releases, 'terraform-provider-widgets_1.1.0_SHA256SUMS')),
    );

    const first = await init(join(dir, 'first'), cache, cacheCerts.ca);
    expect(first.output).toContain('Terraform has been successfully initialized');
    expect(first.output).toContain('Installed acme/widgets v1.1.0');
    expect(first.code).toBe(0);
    // Through the network mirror: the same selections and the same package hash. Terraform records the zh: hashes
    // of every package only from a registry's signed SHA256SUMS; from a network mirror, only the h1: of the package it installed.
    const withoutZh = (lock: string) => lock.replace(/^ +"zh:[0-9a-f]{64}",\n/gm, '');
    expect(lockOf('first')).toBe(withoutZh(lockOf('direct')));
    const installed = (folder: string) =>
      (JSON.parse(readFileSync(join(dir, folder, 'infra/.terraform/modules/modules.json'), 'utf8')) as { Modules: { Key: string; Version?: string }[] })
        .Modules;
    expect(installed('first')).toEqual(
      expect.arrayContaining([expect.objectContaining({ Key: 'net', Version: '1.0.0' }), expect.objectContaining({ Key: 'net.subnets', Version: '1.2.0' })]),
    );
    // Only what Terraform asked for was fetched: the versions it did not pick stay upstream.
    const held = (mirrorManifest(join(dir, 'cache')) as { modules: Record<string, { versions: { version: string }[] }> }).modules;
    expect(Object.fromEntries(Object.entries(held).map(([k, m]) => [k, m.versions.map((v) => v.version)]))).toEqual({
      'acme/net/aws': ['1.0.0'],
      'acme/subnets/aws': ['1.2.0'],
    });
    expect(log.filter((l) => l.includes('fetched from'))).toHaveLength(2);
    expect(Object.keys(mirrorManifest(join(dir, 'cache')).providers as object)).toEqual(['registry.terraform.io/acme/widgets']);

    await upstream.close();
    // Past the version lists' TTL: the cache asks the upstream, which is gone, and answers from what it holds.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    // A new folder holding the lock file made straight from the upstream, as a repository commits it: kept as it is.
    mkdirSync(join(dir, 'second/infra'), { recursive: true });
    writeFileSync(join(dir, 'second/infra/.terraform.lock.hcl'), lockOf('direct'));
    const second = await init(join(dir, 'second'), cache, cacheCerts.ca);
    expect(second.output).toContain('Terraform has been successfully initialized');
    expect(second.code).toBe(0);
    expect(installed('second')).toEqual(installed('first'));
    expect(lockOf('second')).toBe(lockOf('direct'));
    expect(log.some((l) => /could not give the versions of acme\/net\/aws.*answering from what the mirror holds/.test(l))).toBe(true);
    // A new folder with no lock file, through the cache's registry protocols: the lock file made upstream.
    const third = await initRegistry(join(dir, 'third'), cache, cacheCerts.ca);
    expect(third.output).toContain('Installed acme/widgets v1.1.0 (self-signed');
    expect(third.code).toBe(0);
    expect(lockOf('third')).toBe(lockOf('direct'));

    // Complete: the provider the cached module requires is in the mirror, so the mirror carried inside serves the same init.
    const verified = await runCli(['verify', '--mirror', 'cache', '--complete'], dir);
    expect(verified.stdout + verified.stderr).toContain('is consistent');
    expect(verified.code).toBe(0);
    // Closed here, so the last uses noted are written for cache list.
    servers.splice(servers.indexOf(cache), 1);
    await cache.close();
    const listed = await runCli(['cache', 'list', '--mirror', 'cache', '--json'], dir);
    const holdings = JSON.parse(listed.stdout) as {
      modules: { module: string; last_used: string | null }[];
      providers: { fetched: string | null; last_used: string | null }[];
    };
    expect(holdings.modules.map((m) => m.module)).toEqual(['acme/net/aws', 'acme/subnets/aws']);
    // Both inits downloaded every archive through the cache.
    expect(holdings.modules.every((m) => m.last_used !== null)).toBe(true);
    expect(holdings.providers).toEqual([
      expect.objectContaining({ platform: 'linux_amd64', fetched: expect.any(String) as unknown, last_used: expect.any(String) as unknown }),
    ]);

    // A build over the cache's mirror carries what it fetched as it is, providers.v1 documents included.
    const rebuilt = await runCli(['build', '--modules', 'empty', '--mirror', 'cache'], dir);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    const reverified = await runCli(['verify', '--mirror', 'cache', '--complete'], dir);
    expect(reverified.code, reverified.stdout + reverified.stderr).toBe(0);
    // The cache's mirror carried inside and served as it is (no upstream): the same host block, the same lock file.
    const inside = await startServer({
      dir: join(dir, 'cache'),
      dataDir: join(dir, 'inside-data'),
      host: '127.0.0.1',
      port: 0,
      log: () => {},
      tls: { cert: cacheCerts.cert, key: cacheCerts.key },
    });
    servers.push(inside);
    const fourth = await initRegistry(join(dir, 'fourth'), inside, cacheCerts.ca);
    expect(fourth.output).toContain('Installed acme/widgets v1.1.0 (self-signed');
    expect(fourth.code).toBe(0);
    expect(lockOf('fourth')).toBe(lockOf('direct'));
  }, 120_000);
});
