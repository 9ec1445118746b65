// `verify --complete` through the CLI: each mirrored module version whose
// required providers (root and submodules) the mirror lacks, has in no
// matching version, or has without a package for one of the config's
// platforms is reported with its detail file; a complete mirror passes.
// A source "NS/TYPE" means registry.terraform.io/NS/TYPE to Terraform and
// registry.opentofu.org/NS/TYPE to OpenTofu (checked: opentofu.org/docs/cli/
// oci_registries/provider-mirror, "hashicorp/tls is a shorthand for
// registry.opentofu.org/hashicorp/tls"), so either tree satisfies it.

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempDir, writeFiles } from '../helpers.js';
import { writeReleaseFolder } from '../providers/zips.js';

const requires = (providers: Record<string, [string, string]>) =>
  `terraform {\n  required_providers {\n${Object.entries(providers)
    .map(([name, [source, version]]) => `    ${name} = {\n      source  = "${source}"\n      version = "${version}"\n    }\n`)
    .join('')}  }\n}\n`;

describe('verify --complete', () => {
  it('reports module versions whose required providers are missing for a configured platform, and passes a complete mirror', async () => {
    const dir = tempDir('mm-complete-');
    writeFiles(dir, {
      'mirror.config.yaml': 'sources:\n  - folder: mods\nproviders:\n  - folder: hashicorp\n    namespace: hashicorp\nplatforms: [linux_amd64, darwin_arm64]\n',
      'mods/acme/net/aws/1.0.0/main.tf': requires({ aws: ['hashicorp/aws', '>= 5.0, < 6.0'] }),
      'mods/acme/net/aws/1.0.0/modules/ids/main.tf': requires({ random: ['registry.terraform.io/hashicorp/random', '~> 3.5'] }),
      'mods/acme/net/aws/2.0.0/main.tf': requires({ aws: ['hashicorp/aws', '>= 6.0'] }),
      'mods/acme/dns/google/1.0.0/main.tf': requires({ google: ['hashicorp/google', '~> 5.0'] }),
    });
    await writeReleaseFolder(join(dir, 'hashicorp'), 'aws', '5.31.0', ['linux_amd64', 'darwin_arm64']);
    await writeReleaseFolder(join(dir, 'hashicorp'), 'random', '3.6.0', ['linux_amd64']);
    expect((await runCli(['build'], dir)).code).toBe(0);
    expect((await runCli(['verify', '--mirror', 'dist'], dir)).code).toBe(0);

    const r = await runCli(['verify', '--mirror', 'dist', '--complete', '--json'], dir);
    expect(r.code).toBe(1);
    const { problems } = JSON.parse(r.stdout) as { problems: { path: string; message: string }[] };
    expect(problems).toEqual([
      {
        path: 'v1/modules/acme/dns/google/1.0.0/index.json',
        message:
          'acme/dns/google 1.0.0 root requires hashicorp/google ~> 5.0: the mirror carries no registry.terraform.io/hashicorp/google or registry.opentofu.org/hashicorp/google',
      },
      {
        path: 'v1/modules/acme/net/aws/2.0.0/index.json',
        message: 'acme/net/aws 2.0.0 root requires hashicorp/aws >= 6.0: registry.terraform.io/hashicorp/aws has no version matching it (mirrored: 5.31.0)',
      },
      {
        path: 'v1/modules/acme/net/aws/1.0.0/index.json',
        message:
          'acme/net/aws 1.0.0 modules/ids requires registry.terraform.io/hashicorp/random ~> 3.5: registry.terraform.io/hashicorp/random 3.6.0 has no package for darwin_arm64',
      },
    ]);

    // With only linux_amd64 configured, the random provider is complete.
    writeFiles(dir, { 'linux.yaml': 'sources:\n  - folder: mods\nplatforms: [linux_amd64]\n' });
    const linux = await runCli(['verify', '--mirror', 'dist', '--complete', '--config', 'linux.yaml'], dir);
    expect(linux.stderr).not.toContain('hashicorp/random');
    expect(linux.stderr).toContain('dist/v1/modules/acme/dns/google/1.0.0/index.json: acme/dns/google 1.0.0 root requires hashicorp/google ~> 5.0');
    expect(linux.stdout).toContain('2 problem(s) in dist/.');
  }, 60_000);

  it('reports a provider that only resources and data sources imply, and never the built-in terraform', async () => {
    const dir = tempDir('mm-complete-implied-');
    writeFiles(dir, {
      'mirror.config.yaml': 'sources:\n  - folder: mods\nproviders:\n  - folder: hashicorp\n    namespace: hashicorp\n',
      // Written before Terraform 0.13: no required_providers, no provider block.
      'mods/acme/old/aws/1.0.0/main.tf': 'resource "aws_vpc" "this" {}\ndata "terraform_remote_state" "net" {\n  backend = "local"\n}\n',
      'mods/acme/old/aws/1.0.0/modules/dns/main.tf': 'data "google_dns_managed_zone" "zone" {\n  name = "z"\n}\n',
    });
    await writeReleaseFolder(join(dir, 'hashicorp'), 'aws', '5.31.0', ['linux_amd64']);
    expect((await runCli(['build'], dir)).code).toBe(0);

    const r = await runCli(['verify', '--mirror', 'dist', '--complete', '--json'], dir);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).problems).toEqual([
      {
        path: 'v1/modules/acme/old/aws/1.0.0/index.json',
        message:
          'acme/old/aws 1.0.0 modules/dns requires hashicorp/google: the mirror carries no registry.terraform.io/hashicorp/google or registry.opentofu.org/hashicorp/google',
      },
    ]);

    // Without the aws provider (pruned on purpose: a build keeps what is published), the root's implied aws is missing too.
    writeFiles(dir, { 'none.yaml': 'sources:\n  - folder: mods\n' });
    expect((await runCli(['build', '--config', 'none.yaml', '--prune'], dir)).code).toBe(0);
    const bare = await runCli(['verify', '--mirror', 'dist', '--complete', '--json', '--config', 'none.yaml'], dir);
    expect(JSON.parse(bare.stdout).problems.map((p: { message: string }) => p.message.split(':')[0])).toEqual([
      'acme/old/aws 1.0.0 root requires hashicorp/aws',
      'acme/old/aws 1.0.0 modules/dns requires hashicorp/google',
    ]);
  }, 60_000);
});
