// A real module history through the CLI: a Terraform 0.11 version in HCL1, a
// version whose example folder is made of git symlinks (with a link that
// leaves the module and one that loops), and a version with a file no parser
// reads. The build mirrors every tag; --strict leaves the broken one out.

import { execFile, execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { extract, list } from 'tar';
import { beforeAll, describe, expect, it } from 'vitest';
import { archiveFile, downloadFile, versionDetailFile, versionsFile } from '../src/emit/paths.js';
import { makeRepo, runCli, tempDir, treeOf, writeFiles } from './helpers.js';

const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8'));
const EKS = { namespace: 'acme', name: 'eks', provider: 'aws' };

const HCL1 = {
  'main.tf': `provider "aws" {
  version = ">= 1.24.0"
  region  = "\${var.region}"
}

resource "aws_eks_cluster" "this" {
  name     = "\${var.cluster_name}"
  role_arn = "\${aws_iam_role.cluster.arn}"
}

resource "aws_iam_role" "cluster" { name_prefix = "\${var.cluster_name}" }

data "aws_region" "current" {}

module "workers" {
  source  = "terraform-aws-modules/autoscaling/aws"
  version = "2.2.2"
}
`,
  'local.tf': `locals {
  # pods per instance type: dotted keys, HCL1 only
  max_pods = {
    c4.large   = 29
    c4.2xlarge = 58
    m5.xlarge  = 58
  }
}
`,
  'variables.tf': `variable "cluster_name" {
  description = "Name of the EKS cluster."
}

variable "region" { default = "us-west-2" }

variable "subnets" {
  type        = "list"
  description = "Subnets to place workers in."
}

variable "tags" {
  type    = "map"
  default = {}
}

variable "workers" {
  type    = "list"
  default = [{ instance_type = "m4.large", asg_max_size = 3 }]
}

variable "userdata" {
  description = <<EOF
Shell appended to the workers' user data.
EOF
  default = <<EOF
#!/bin/bash
echo "\${HOSTNAME:-unknown}"
EOF
}
`,
  'outputs.tf': `output "cluster_id" { value = "\${aws_eks_cluster.this.id}" description = "The EKS cluster's name." }

output "kubeconfig" {
  value     = "\${local.max_pods["c4.large"]}"
  sensitive = true
}
`,
};

const APP = {
  'examples/app/main.tf': 'module "eks" {\n  source       = "../../"\n  cluster_name = var.name\n}\n\nresource "null_resource" "app" {}\n',
  'examples/app/variables.tf': 'variable "name" {\n  type        = string\n  description = "Application name."\n}\n',
  'examples/app/outputs.tf': 'output "id" {\n  description = "ID of the app."\n  value       = null_resource.app.id\n}\n',
  'examples/app/README.md': '# App\n',
};

const V1 = {
  'main.tf': 'resource "null_resource" "this" {}\n',
  'variables.tf': 'variable "cluster_name" {\n  type = string\n}\n',
  'outputs.tf': 'output "cluster_id" {\n  value = null_resource.this.id\n}\n',
  'README.md': '# EKS\n\nA cluster.\n',
  'examples/app_v2/README.md': '# App, version 2\n',
  ...APP,
};

// Like Azure/terraform-azurerm-aks 9.3.0: an example made of links to a sibling's files.
const V1_LINKS = {
  'examples/app_v2/main.tf': '../app/main.tf',
  'examples/app_v2/variables.tf': '../app/variables.tf',
  'examples/app_v2/outputs.tf': '../app/outputs.tf',
  'modules/app': '../examples/app',
  'examples/app_v2/secrets.tf': '../../../outside.tf',
  'examples/app_v2/again': '../app_v2',
};

async function archiveEntries(file: string): Promise<Record<string, string>> {
  const entries: Record<string, string> = {};
  await list({ file, onReadEntry: (e) => (entries[e.path] = e.type) });
  return entries;
}

describe('a history with HCL1, symlinks and a broken version', () => {
  const dir = tempDir();
  const out = join(dir, 'dist');
  const repo = join(dir, 'terraform-aws-eks');
  let summary: { versions: number; warnings: string[]; errors: unknown[]; partial: { module: string; version: string; source: string; problems: string[] }[] };
  let code: number;

  beforeAll(async () => {
    // What the escaping link names exists: following it would read it.
    writeFiles(dir, { 'outside.tf': 'variable "leaked" {}\n', 'mirror.config.yaml': `sources:\n  - git: terraform-aws-eks\n    namespace: acme\n` });
    makeRepo(repo, [
      { date: '2018-06-01T00:00:00Z', files: HCL1, tags: ['v0.1.0'] },
      { date: '2024-01-01T00:00:00Z', files: V1, remove: ['local.tf'], links: V1_LINKS, tags: ['v1.0.0'] },
      { date: '2024-02-01T00:00:00Z', files: { 'main.tf': 'resource "null_resource" "this" {\n  count =\n}\n' }, tags: ['v1.1.0'] },
    ]);
    const r = await runCli(['build', '--json', '--out', out], dir);
    code = r.code;
    if (!r.stdout) throw new Error(r.stderr);
    summary = JSON.parse(r.stdout);
  });

  it('mirrors every tag and exits 0, listing the partly read version under its own key', () => {
    expect(code).toBe(0);
    expect(summary.errors).toEqual([]);
    expect(summary.versions).toBe(3);
    expect(readJson(join(out, versionsFile(EKS))).modules[0].versions.map((v: { version: string }) => v.version)).toEqual(['1.1.0', '1.0.0', '0.1.0']);
    expect(summary.partial).toEqual([
      { module: 'acme/eks/aws', version: '1.1.0', source: `${repo}@v1.1.0`, problems: ['main.tf:2:10: Expected an expression, found newline'] },
    ]);
  });

  it('serves the partly read version with what could be read, and its archive', () => {
    const detail = readJson(join(out, versionDetailFile(EKS, '1.1.0')));
    expect(detail.root.inputs.map((i: { name: string }) => i.name)).toEqual(['cluster_name']);
    expect(detail.root.outputs.map((o: { name: string }) => o.name)).toEqual(['cluster_id']);
    expect(detail.root.resources).toEqual([]);
    expect(readJson(join(out, downloadFile(EKS, '1.1.0'))).location).toBe('./eks-aws-1.1.0.tar.gz');
    expect(existsSync(join(out, archiveFile(EKS, '1.1.0')))).toBe(true);
  });

  it('reads the HCL1 version as terraform-config-inspect does', () => {
    const { root } = readJson(join(out, versionDetailFile(EKS, '0.1.0')));
    expect(root.inputs).toEqual([
      { name: 'cluster_name', type: '', description: 'Name of the EKS cluster.', default: '', required: true, sensitive: false, nullable: true },
      { name: 'region', type: '', description: '', default: '"us-west-2"', required: false, sensitive: false, nullable: true },
      { name: 'subnets', type: 'list', description: 'Subnets to place workers in.', default: '', required: true, sensitive: false, nullable: true },
      { name: 'tags', type: 'map', description: '', default: '{}', required: false, sensitive: false, nullable: true },
      { name: 'userdata', type: '', description: "Shell appended to the workers' user data.\n", default: JSON.stringify('#!/bin/bash\necho "${HOSTNAME:-unknown}"\n'), required: false, sensitive: false, nullable: true },
      { name: 'workers', type: 'list', description: '', default: '[{"instance_type":"m4.large","asg_max_size":3}]', required: false, sensitive: false, nullable: true },
    ]);
    expect(root.outputs).toEqual([
      { name: 'cluster_id', description: "The EKS cluster's name.", sensitive: false },
      { name: 'kubeconfig', description: '', sensitive: true },
    ]);
    expect(root.resources).toEqual([
      { name: 'this', type: 'aws_eks_cluster' },
      { name: 'cluster', type: 'aws_iam_role' },
    ]);
    expect(root.data_sources).toEqual([{ name: 'current', type: 'aws_region' }]);
    expect(root.dependencies).toEqual([{ name: 'workers', source: 'terraform-aws-modules/autoscaling/aws', version: '2.2.2' }]);
    expect(root.provider_dependencies).toEqual([{ name: 'aws', namespace: '', source: '', version: '>= 1.24.0' }]);
  });

  it('shows an example made of links with the inputs, outputs and resources of the files they point to', () => {
    const detail = readJson(join(out, versionDetailFile(EKS, '1.0.0')));
    const byPath = (list: { path: string }[], path: string) => list.find((m) => m.path === path) as Record<string, unknown> | undefined;
    const app = byPath(detail.examples, 'examples/app')!;
    const v2 = byPath(detail.examples, 'examples/app_v2')!;
    expect(v2['inputs']).toEqual([{ name: 'name', type: 'string', description: 'Application name.', default: '', required: true, sensitive: false, nullable: true }]);
    expect(v2['outputs']).toEqual([{ name: 'id', description: 'ID of the app.', sensitive: false }]);
    expect(v2['resources']).toEqual([{ name: 'app', type: 'null_resource' }]);
    expect(v2['readme']).toBe('# App, version 2\n');
    for (const key of ['inputs', 'outputs', 'resources', 'dependencies']) expect(v2[key]).toEqual(app[key]);
    // A link to a folder is a folder: the submodule shows the example's content.
    expect(byPath(detail.submodules, 'modules/app')!['inputs']).toEqual(app['inputs']);
    // Nothing from outside the module, nothing through the loop.
    expect(JSON.stringify(detail)).not.toContain('leaked');
  });

  it('carries each link as the regular file it points to, and leaves out the escaping link and the loop', async () => {
    const archive = join(out, archiveFile(EKS, '1.0.0'));
    const entries = await archiveEntries(archive);
    expect(Object.entries(entries).filter(([path]) => path.startsWith('examples/app_v2/') || path.startsWith('modules/'))).toEqual([
      ['examples/app_v2/README.md', 'File'],
      ['examples/app_v2/main.tf', 'File'],
      ['examples/app_v2/outputs.tf', 'File'],
      ['examples/app_v2/variables.tf', 'File'],
      ['modules/app/README.md', 'File'],
      ['modules/app/main.tf', 'File'],
      ['modules/app/outputs.tf', 'File'],
      ['modules/app/variables.tf', 'File'],
    ]);
    const unpacked = join(dir, 'unpacked');
    mkdirSync(unpacked);
    await extract({ file: archive, cwd: unpacked });
    for (const name of ['main.tf', 'variables.tf', 'outputs.tf']) {
      expect(readFileSync(join(unpacked, 'examples/app_v2', name), 'utf8')).toBe(APP[`examples/app/${name}` as keyof typeof APP]);
    }
  });

  it('warns naming the escaping link and the loop, without failing', () => {
    expect(summary.warnings).toEqual(
      expect.arrayContaining([
        `${repo}@v1.0.0: examples/app_v2/secrets.tf: left out: the link points outside the module (-> ../../../outside.tf)`,
        `${repo}@v1.0.0: examples/app_v2/again: left out: the link loops: it points to a folder that contains it (-> ../app_v2)`,
      ]),
    );
  });

  it('gives the same archives from the cache, from a clean build, and when up to date (repeating its report)', async () => {
    const again = await runCli(['build', '--json', '--out', join(dir, 'dist-clean'), '--clean'], dir);
    expect(treeOf(join(dir, 'dist-clean'))).toEqual(treeOf(out));
    const upToDate = JSON.parse((await runCli(['build', '--json', '--out', out], dir)).stdout);
    expect(upToDate.upToDate).toBe(true);
    expect(upToDate.partial).toEqual(summary.partial);
    expect(upToDate.warnings).toEqual(summary.warnings);
    expect(JSON.parse(again.stdout).partial).toEqual(summary.partial);
  });

  it('with --strict, leaves the broken version out and exits 1, as before', async () => {
    const strictOut = join(dir, 'dist-strict');
    const r = await runCli(['build', '--strict', '--json', '--out', strictOut], dir);
    expect(r.code).toBe(1);
    const strict = JSON.parse(r.stdout);
    expect(strict.partial).toEqual([]);
    expect(strict.errors).toEqual([{ code: 'HCL_SYNTAX', message: expect.stringMatching(/acme\/eks\/aws 1\.1\.0 .*main\.tf:2:10: Expected an expression/) }]);
    expect(readJson(join(strictOut, versionsFile(EKS))).modules[0].versions.map((v: { version: string }) => v.version)).toEqual(['1.0.0', '0.1.0']);
    // And a strict build over the lenient mirror is not "up to date": it has work to do.
    expect((await runCli(['build', '--strict', '--json', '--out', out], dir)).code).toBe(1);
  });

  it('publish stays strict', async () => {
    const r = await runCli(['publish', '--git', repo, '--ref', 'v1.1.0', '--namespace', 'acme', '--name', 'eks', '--provider', 'aws', '--out', join(dir, 'dist-pub')], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/main\.tf:2:10: Expected an expression/);
  });

  it('prints the partial version and the links in its human summary', async () => {
    const r = await runCli(['build', '--out', join(dir, 'dist-human')], dir);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('warning: acme/eks/aws 1.1.0');
    expect(r.stderr).toContain('main.tf:2:10: Expected an expression');
    expect(r.stderr).toContain('examples/app_v2/secrets.tf: left out');
  });
});

describe('a folder version with symlinks', () => {
  it('follows links inside the version folder and never one that leaves it', async () => {
    const dir = tempDir();
    const version = join(dir, 'drop/acme/app/null/1.0.0');
    writeFiles(dir, { 'secret.tf': 'variable "leaked" {}\n', 'drop/acme/app/null/1.0.0/shared/vars.tf': 'variable "shared" {}\n' });
    mkdirSync(join(version, 'examples/basic'), { recursive: true });
    symlinkSync('../../shared/vars.tf', join(version, 'examples/basic/vars.tf'));
    symlinkSync('shared/vars.tf', join(version, 'vars.tf'));
    symlinkSync('../../../../../secret.tf', join(version, 'secret.tf'));
    expect(lstatSync(join(version, 'secret.tf')).isSymbolicLink()).toBe(true);
    const r = await runCli(['build', '--modules', 'drop', '--json'], dir);
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout);
    expect(summary.warnings).toEqual([`${version}: secret.tf: left out: the link points outside the module (-> ../../../../../secret.tf)`]);
    const address = { namespace: 'acme', name: 'app', provider: 'null' };
    const detail = readJson(join(dir, 'dist', versionDetailFile(address, '1.0.0')));
    expect(detail.root.inputs.map((i: { name: string }) => i.name)).toEqual(['shared']);
    expect(detail.examples[0].inputs.map((i: { name: string }) => i.name)).toEqual(['shared']);
    expect(await archiveEntries(join(dir, 'dist', archiveFile(address, '1.0.0')))).toEqual({ 'examples/basic/vars.tf': 'File', 'shared/vars.tf': 'File', 'vars.tf': 'File' });
  });
});

// Terraform itself, when it is installed: what its go-getter makes of our archive, and of one that keeps links.
const terraform = (() => {
  try {
    execFileSync('terraform', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe.skipIf(!terraform)('terraform get with the archive (real client)', () => {
  it('installs an example made of links with every file; a tarball keeping the links installs empty files', async () => {
    const dir = tempDir();
    const repo = join(dir, 'repo');
    makeRepo(repo, [{ date: '2024-01-01T00:00:00Z', files: V1, links: V1_LINKS, tags: ['v1.0.0'] }]);
    writeFiles(dir, { 'mirror.config.yaml': 'sources:\n  - git: repo\n    namespace: acme\n    name: eks\n    provider: aws\n' });
    expect((await runCli(['build', '--json'], dir)).code).toBe(0);
    // What git archive (and a GitHub tarball) gives: symlink entries.
    execFileSync('git', ['archive', '--format=tar.gz', '-o', join(dir, 'git-archive.tar.gz'), 'v1.0.0'], { cwd: repo });
    const { createServer } = await import('node:http');
    const files: Record<string, string> = { '/mirror.tar.gz': join(dir, 'dist', archiveFile(EKS, '1.0.0')), '/git-archive.tar.gz': join(dir, 'git-archive.tar.gz') };
    // Plain bytes, no Content-Encoding: the archive as a static host serves it.
    const server = createServer((req, res) => {
      const file = files[req.url ?? ''];
      if (!file) return res.writeHead(404).end();
      res.writeHead(200, { 'Content-Type': 'application/gzip' }).end(readFileSync(file));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const root = join(dir, 'config');
      writeFiles(root, {
        'main.tf': `module "mirrored" {\n  source = "http://127.0.0.1:${port}/mirror.tar.gz//examples/app_v2"\n}\n\nmodule "linked" {\n  source = "http://127.0.0.1:${port}/git-archive.tar.gz//examples/app_v2"\n}\n`,
        'cli.tfrc': '',
      });
      const env = { ...process.env, TF_CLI_CONFIG_FILE: join(root, 'cli.tfrc'), CHECKPOINT_DISABLE: '1', TF_IN_AUTOMATION: '1' };
      // Not execFileSync: the server answering terraform runs in this process.
      await promisify(execFile)('terraform', ['get'], { cwd: root, env, timeout: 60_000 });
      const installed = (module: string, name: string) => join(root, '.terraform/modules', module, 'examples/app_v2', name);
      for (const name of ['main.tf', 'variables.tf', 'outputs.tf']) {
        expect(lstatSync(installed('mirrored', name)).isFile()).toBe(true);
        expect(readFileSync(installed('mirrored', name), 'utf8')).toBe(APP[`examples/app/${name}` as keyof typeof APP]);
        // The evidence for carrying links as files: go-getter writes a link entry as an empty file.
        expect(readFileSync(installed('linked', name), 'utf8')).toBe('');
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
