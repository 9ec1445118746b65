// What Terraform itself gets from a mirror that fills itself: `terraform
// init` of a configuration with public-style addresses, through a cache whose
// upstream is another modmirror serve over HTTPS with a CA of its own (the
// cache trusts it as --upstream-ca makes it, Terraform only the cache's). The called
// module's module call is followed by Terraform through the same cache. With
// the upstream stopped, a fresh init still succeeds from what the cache
// holds, and the cache's mirror verifies. Runs when terraform is on PATH.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/serve/index.js';
import { makeCertificatesIn } from '../certificates.js';
import { hasTerraform, makeCertificates, mirrorManifest, runCli, tempDir, terraformInit, type TerraformResult } from '../helpers.js';
import { emptyMirror, startCache, startUpstream } from './site.js';

const servers: RunningServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
});

const UPSTREAM_FILES = {
  'mods/acme/net/aws/1.0.0/main.tf':
    'variable "cidr" {\n  default = "10.0.0.0/16"\n}\n\nmodule "subnets" {\n  source  = "acme/subnets/aws"\n  version = "~> 1.0"\n}\n',
  'mods/acme/subnets/aws/1.0.0/main.tf': 'output "count" {\n  value = 1\n}\n',
  'mods/acme/subnets/aws/1.2.0/main.tf': 'output "count" {\n  value = 2\n}\n',
  'mods/acme/subnets/aws/2.0.0/main.tf': 'output "count" {\n  value = 3\n}\n',
};

function init(dir: string, cache: RunningServer, ca: string): Promise<TerraformResult> {
  const files = {
    'cli.tfrc': `host "registry.terraform.io" {\n  services = {\n    "modules.v1" = "${cache.url}v1/modules/"\n  }\n}\n`,
    'infra/main.tf': 'module "net" {\n  source  = "registry.terraform.io/acme/net/aws"\n  version = "1.0.0"\n}\n',
  };
  return terraformInit(dir, files, { SSL_CERT_FILE: ca });
}

describe.skipIf(!hasTerraform)('terraform init through a mirror that fills itself (real client)', () => {
  it('installs a module and the module it calls through the cache, and again once the upstream is gone', async () => {
    const dir = tempDir('mm-upstream-tf-');
    const cacheCerts = makeCertificates(dir);
    const upstreamCerts = makeCertificatesIn(tempDir('mm-upstream-ca-'));
    const upstream = await startUpstream(join(dir, 'upstream'), UPSTREAM_FILES, { cert: upstreamCerts.cert, key: upstreamCerts.key });
    await emptyMirror(dir);
    const log: string[] = [];
    const cache = await startCache(dir, { url: new URL(upstream.url), ttlSeconds: 1, ca: [readFileSync(upstreamCerts.ca, 'utf8')] }, log, {
      cert: cacheCerts.cert,
      key: cacheCerts.key,
    });
    servers.push(cache);

    const first = await init(join(dir, 'first'), cache, cacheCerts.ca);
    expect(first.output).toContain('Terraform has been successfully initialized');
    expect(first.code).toBe(0);
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

    await upstream.close();
    // Past the version lists' TTL: the cache asks the upstream, which is gone, and answers from what it holds.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const second = await init(join(dir, 'second'), cache, cacheCerts.ca);
    expect(second.output).toContain('Terraform has been successfully initialized');
    expect(second.code).toBe(0);
    expect(installed('second')).toEqual(installed('first'));
    expect(log.some((l) => /could not give the versions of acme\/net\/aws.*answering from what the mirror holds/.test(l))).toBe(true);

    const verified = await runCli(['verify', '--mirror', 'cache'], dir);
    expect(verified.stdout + verified.stderr).toContain('is consistent');
    expect(verified.code).toBe(0);
  }, 120_000);
});
