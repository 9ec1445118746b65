// The build end to end through the CLI: real git repositories made here,
// the folder layout, the bundled sample modules, and every bad input.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { list } from 'tar';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeRepo, ROOT, runCli, settled, spawnCli, tempDir, writeFiles, type CliResult, treeOf, mirrorManifest } from '../helpers.js';

const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8'));

async function archiveEntries(file: string): Promise<string[]> {
  const entries: string[] = [];
  await list({ file, onReadEntry: (e) => entries.push(e.path) });
  return entries.sort();
}

const VARIABLES_V1 = `
variable "cidr" {
  description = "The VPC CIDR block."
  type        = string
}

variable "azs" {
  description = <<-EOT
    Availability zones
    to spread subnets over.
  EOT
  type    = list(string)
  default = ["a", "b"]
}

variable "limits" {
  type = object({
    max = optional(number, 1e3) # upper bound
  })
  default = { max = 1e3 }
}
`;

describe('build from git repositories', () => {
  const dir = tempDir();
  const out = join(dir, 'dist');
  let result: CliResult;
  let summary: { modules: number; versions: number; archives: number; warnings: string[]; errors: { message: string }[]; seconds: number };

  beforeAll(async () => {
    const base = {
      'main.tf': 'resource "aws_vpc" "this" {\n  cidr_block = var.cidr\n}\ndata "aws_region" "current" {}\n',
      'variables.tf': VARIABLES_V1,
      'outputs.tf': 'output "vpc_id" {\n  description = "ID of the VPC"\n  value = aws_vpc.this.id\n}\n',
      'versions.tf':
        'terraform {\n  required_version = ">= 1.3"\n  required_providers {\n    aws = {\n      source  = "hashicorp/aws"\n      version = ">= 5.0"\n    }\n  }\n}\n',
      'README.md': '# VPC\n\nA small VPC module for tests.\n\n## Usage\n',
      'modules/nat/main.tf': 'variable "subnet_id" {}\nresource "aws_nat_gateway" "this" {\n  subnet_id = var.subnet_id\n}\n',
      'examples/basic/main.tf': 'module "vpc" {\n  source = "../../"\n  cidr   = "10.0.0.0/16"\n}\n',
      '.terraformignore': '*.tfvars\n',
      'secret.tfvars': 'password = "hunter2"\n',
    };
    makeRepo(join(dir, 'terraform-aws-vpc'), [
      { date: '2024-01-02T03:04:05Z', files: base, tags: ['v1.0.0', 'latest'] },
      {
        date: '2024-02-01T00:00:00Z',
        files: { 'outputs.tf': base['outputs.tf'] + 'output "cidr" {\n  value = var.cidr\n  sensitive = true\n}\n' },
        tags: ['1.1.0'],
      },
      { date: '2024-03-01T00:00:00Z', files: { 'README.md': '# VPC\n\nRelease candidate.\n' }, tags: ['v2.0.0-rc.1'] },
      { date: '2024-04-01T12:30:00Z', files: { 'README.md': '# VPC\n\nVersion two.\n' }, tags: ['v2.0.0'], annotated: true },
      { date: '2024-05-01T00:00:00Z', files: { 'main.tf': 'resource "aws_vpc" "this" {\n  cidr_block = \n}\n' }, tags: ['v3.0.0'] },
    ]);
    makeRepo(join(dir, 'platform'), [
      {
        date: '2024-01-01T00:00:00Z',
        files: { 'vpc/main.tf': 'variable "a" {}\n', 'dns/main.tf': 'variable "zone" {}\n' },
        tags: ['vpc/v1.0.0', 'dns/v0.1.0'],
      },
      { date: '2024-06-01T00:00:00Z', files: { 'vpc/main.tf': 'variable "a" {}\nvariable "b" { default = 2 }\n' }, tags: ['vpc/v1.1.0', 'vpc/not-a-version'] },
    ]);
    writeFiles(dir, {
      'mirror.config.yaml': [
        'sources:',
        '  - git: terraform-aws-vpc',
        '    namespace: acme',
        '    description: Configured description',
        '  - git: platform',
        '    namespace: acme',
        '    name: mono-vpc',
        '    provider: aws',
        '    path: vpc',
        '    tagPrefix: vpc/',
        '  - git: platform',
        '    namespace: other',
        '    name: dns',
        '    provider: google',
        '    path: dns',
        '    tagPrefix: dns/',
        'modules:',
        '  acme/vpc/aws:',
        '    owner: team-net',
        '    verified: true',
        '    source: https://git.example.com/terraform-aws-vpc',
        '',
      ].join('\n'),
    });
    // --strict keeps the behaviour these tests describe: a version with a syntax error is left out (see history.test.ts for the default).
    result = await runCli(['build', '--strict', '--json', '--mirror', out], dir);
    if (!result.stdout) throw new Error(result.stderr);
    summary = JSON.parse(result.stdout);
  });

  it('with --strict, reports the broken version, builds the others and exits 1', () => {
    expect(result.code).toBe(1);
    expect(summary.errors).toHaveLength(1);
    expect(summary.errors[0]!.message).toMatch(/acme\/vpc\/aws 3\.0\.0 .*main\.tf:2:16: Expected an expression/);
    expect(summary).toMatchObject({ modules: 3, versions: 7, archives: 7 });
    expect(typeof summary.seconds).toBe('number');
    expect(result.stderr).toBe('');
  });

  it('warns about tags that are not versions, naming them', () => {
    expect(summary.warnings.some((w) => w.includes('"latest"') && w.includes('not a semver version'))).toBe(true);
    expect(summary.warnings.some((w) => w.includes('"vpc/not-a-version"'))).toBe(true);
    expect(summary.warnings.some((w) => w.includes('dns/'))).toBe(false);
  });

  it('writes service discovery', () => {
    expect(readJson(join(out, '.well-known/terraform.json'))).toEqual({ 'modules.v1': '/v1/modules/' });
  });

  it('writes the versions document newest first with provider dependencies (spec 2.8)', () => {
    const doc = readJson(join(out, 'v1/modules/acme/vpc/aws/versions'));
    expect(doc.modules).toHaveLength(1);
    expect(doc.modules[0].source).toBe('acme/vpc/aws');
    expect(doc.modules[0].versions.map((v: { version: string }) => v.version)).toEqual(['2.0.0', '2.0.0-rc.1', '1.1.0', '1.0.0']);
    expect(doc.modules[0].versions[0]).toEqual({
      version: '2.0.0',
      root: { providers: [{ name: 'aws', namespace: 'hashicorp', source: 'hashicorp/aws', version: '>= 5.0' }], dependencies: [] },
      // Implied by aws_nat_gateway: no declaration, so no source and an empty version, as the public registry lists it.
      submodules: [{ path: 'modules/nat', providers: [{ name: 'aws', namespace: '', source: '', version: '' }], dependencies: [] }],
    });
  });

  it('writes the detail of every version and of the latest release (spec 2.6, 2.7)', () => {
    const latest = readJson(join(out, 'v1/modules/acme/vpc/aws/index.json'));
    const v2 = readJson(join(out, 'v1/modules/acme/vpc/aws/2.0.0/index.json'));
    expect(latest).toEqual(v2);
    expect(v2).toMatchObject({
      id: 'acme/vpc/aws/2.0.0',
      owner: 'team-net',
      namespace: 'acme',
      name: 'vpc',
      version: '2.0.0',
      provider: 'aws',
      description: 'Configured description',
      source: 'https://git.example.com/terraform-aws-vpc',
      tag: 'v2.0.0',
      published_at: '2024-04-01T12:30:00.000Z',
      downloads: 0,
      verified: true,
      providers: ['aws'],
      versions: ['2.0.0', '2.0.0-rc.1', '1.1.0', '1.0.0'],
    });
    expect(Object.keys(v2).slice(0, 11)).toEqual([
      'id',
      'owner',
      'namespace',
      'name',
      'version',
      'provider',
      'description',
      'source',
      'tag',
      'published_at',
      'downloads',
    ]);
    const root = v2.root;
    expect(root.path).toBe('');
    expect(root.empty).toBe(false);
    expect(root.readme).toBe('# VPC\n\nVersion two.\n');
    expect(root.inputs).toEqual([
      {
        name: 'azs',
        type: 'list(string)',
        description: 'Availability zones\nto spread subnets over.\n',
        default: '["a","b"]',
        required: false,
        sensitive: false,
        nullable: true,
      },
      { name: 'cidr', type: 'string', description: 'The VPC CIDR block.', default: '', required: true, sensitive: false, nullable: true },
      {
        name: 'limits',
        type: 'object({\n    max = optional(number, 1e3) # upper bound\n  })',
        description: '',
        default: '{"max":1000}',
        required: false,
        sensitive: false,
        nullable: true,
      },
    ]);
    expect(root.outputs).toEqual([
      { name: 'cidr', description: '', sensitive: true },
      { name: 'vpc_id', description: 'ID of the VPC', sensitive: false },
    ]);
    expect(root.resources).toEqual([{ name: 'this', type: 'aws_vpc' }]);
    expect(root.data_sources).toEqual([{ name: 'current', type: 'aws_region' }]);
    expect(root.dependencies).toEqual([]);
    expect(root.provider_dependencies).toEqual([{ name: 'aws', namespace: 'hashicorp', source: 'hashicorp/aws', version: '>= 5.0' }]);
    expect(root.required_version).toBe('>= 1.3');
    expect(v2.submodules).toHaveLength(1);
    expect(v2.submodules[0]).toMatchObject({
      path: 'modules/nat',
      name: 'nat',
      resources: [{ name: 'this', type: 'aws_nat_gateway' }],
      provider_dependencies: [{ name: 'aws', namespace: '', source: '', version: '' }],
    });
    expect(v2.submodules[0].inputs[0]).toMatchObject({ name: 'subnet_id', type: '', required: true, default: '' });
    expect(v2.examples).toHaveLength(1);
    expect(v2.examples[0]).toMatchObject({ path: 'examples/basic', dependencies: [{ name: 'vpc', source: '../../', version: '' }] });
    const old = readJson(join(out, 'v1/modules/acme/vpc/aws/1.0.0/index.json'));
    expect(old.published_at).toBe('2024-01-02T03:04:05.000Z');
    expect(old.root.outputs.map((o: { name: string }) => o.name)).toEqual(['vpc_id']);
    expect(readJson(join(out, 'v1/modules/acme/vpc/aws/1.1.0/index.json')).tag).toBe('1.1.0');
  });

  it('never makes a pre-release the latest', () => {
    expect(readJson(join(out, 'v1/modules/acme/vpc/aws/2.0.0-rc.1/index.json')).version).toBe('2.0.0-rc.1');
    expect(readJson(join(out, 'v1/modules/acme/vpc/aws/index.json')).version).toBe('2.0.0');
  });

  it('writes download locations next to deterministic archives listed in the manifest', async () => {
    expect(readJson(join(out, 'v1/modules/acme/vpc/aws/2.0.0/download'))).toEqual({ location: './vpc-aws-2.0.0.tar.gz' });
    const archive = join(out, 'v1/modules/acme/vpc/aws/2.0.0/vpc-aws-2.0.0.tar.gz');
    expect(await archiveEntries(archive)).toEqual([
      '.terraformignore',
      'README.md',
      'examples/basic/main.tf',
      'main.tf',
      'modules/nat/main.tf',
      'outputs.tf',
      'variables.tf',
      'versions.tf',
    ]);
    const manifest = mirrorManifest(out);
    const entry = manifest.modules['acme/vpc/aws'].versions.find((v: { version: string }) => v.version === '2.0.0');
    const bytes = readFileSync(archive);
    expect(entry).toEqual({
      version: '2.0.0',
      tag: 'v2.0.0',
      archive: 'v1/modules/acme/vpc/aws/2.0.0/vpc-aws-2.0.0.tar.gz',
      sha256: createHash('sha256').update(bytes).digest('hex'),
      size: bytes.length,
      published_at: '2024-04-01T12:30:00.000Z',
    });
    expect(Object.keys(manifest.modules)).toEqual(['acme/mono-vpc/aws', 'acme/vpc/aws', 'other/dns/google']);
    // Each module's truth is a file of its own, whose versions the versions document lists; manifest.json is the root.
    for (const [key, m] of Object.entries(manifest.modules)) {
      const [namespace, name, provider] = key.split('/');
      const state = readJson(join(out, `state/${namespace}/${name}.${provider}.json`));
      expect(state).toMatchObject({ format: 3, module: key, versions: (m as { versions: unknown[] }).versions });
      const listed = readJson(join(out, `v1/modules/${key}/versions`)).modules[0].versions.map((v: { version: string }) => v.version);
      expect(state.versions.map((v: { version: string }) => v.version)).toEqual(listed);
    }
    expect(readJson(join(out, 'manifest.json')).modules).toBeUndefined();
    for (const gone of ['search-index.json', 'versions-index.json', 'deprecations.json', 'browse/recent.json'])
      expect(existsSync(join(out, gone)), gone).toBe(false);
    expect(existsSync(join(out, 'v1/modules/acme/vpc/aws/3.0.0'))).toBe(false);
  });

  it('reads monorepo tags with a prefix from the module folder', async () => {
    const versions = readJson(join(out, 'v1/modules/acme/mono-vpc/aws/versions'));
    expect(versions.modules[0].versions.map((v: { version: string }) => v.version)).toEqual(['1.1.0', '1.0.0']);
    const detail = readJson(join(out, 'v1/modules/acme/mono-vpc/aws/1.1.0/index.json'));
    expect(detail.root.inputs.map((i: { name: string }) => i.name)).toEqual(['a', 'b']);
    expect(detail.tag).toBe('vpc/v1.1.0');
    expect(await archiveEntries(join(out, 'v1/modules/acme/mono-vpc/aws/1.1.0/mono-vpc-aws-1.1.0.tar.gz'))).toEqual(['main.tf']);
    expect(readJson(join(out, 'v1/modules/other/dns/google/versions')).modules[0].versions.map((v: { version: string }) => v.version)).toEqual(['0.1.0']);
  });

  it('writes the first page of every listing with the spec meta block (spec 8)', () => {
    const all = readJson(join(out, 'v1/modules/index.json'));
    expect(all.meta).toEqual({ limit: 15, current_offset: 0 });
    expect(all.modules.map((m: { id: string }) => m.id)).toEqual(['acme/mono-vpc/aws/1.1.0', 'acme/vpc/aws/2.0.0', 'other/dns/google/0.1.0']);
    expect(all.modules[1]).toEqual({
      id: 'acme/vpc/aws/2.0.0',
      owner: 'team-net',
      namespace: 'acme',
      name: 'vpc',
      version: '2.0.0',
      provider: 'aws',
      description: 'Configured description',
      source: 'https://git.example.com/terraform-aws-vpc',
      published_at: '2024-04-01T12:30:00.000Z',
      downloads: 0,
      verified: true,
    });
    expect(readJson(join(out, 'v1/modules/acme/index.json')).modules).toHaveLength(2);
    expect(readJson(join(out, 'v1/modules/other/index.json')).modules).toHaveLength(1);
    const perProvider = readJson(join(out, 'v1/modules/acme/vpc/index.json'));
    expect(perProvider.meta).toEqual({ limit: 15, current_offset: 0 });
    expect(perProvider.modules.map((m: { id: string }) => m.id)).toEqual(['acme/vpc/aws/2.0.0']);
    // The listings show each module's summary as its state records it.
    expect(Object.values(mirrorManifest(out).modules).map((m) => (m as { latest: unknown }).latest)).toEqual(all.modules);
  });

  it('writes a zeroed v2 downloads summary (spec 2.9)', () => {
    expect(readJson(join(out, 'v2/modules/acme/vpc/aws/downloads/summary'))).toEqual({
      data: { type: 'module-downloads-summary', id: 'acme/vpc/aws', attributes: { week: 0, month: 0, year: 0, total: 0 } },
    });
  });

  it('gives identical trees and archive bytes on a second build', async () => {
    const again = join(dir, 'dist-again');
    await runCli(['build', '--strict', '--json', '--mirror', again], dir);
    expect(treeOf(again)).toEqual(treeOf(out));
  });

  it('rebuilds into an existing mirror, replacing it whole', async () => {
    writeFileSync(join(out, 'stale-file'), 'x');
    const again = await runCli(['build', '--strict', '--json'], dir);
    expect(JSON.parse(again.stdout).versions).toBe(7);
    const second = await runCli(['build', '--strict', '--json', '--mirror', out], dir);
    expect(second.code).toBe(1);
    expect(existsSync(join(out, 'stale-file'))).toBe(false);
    expect(await settled(() => readdirSync(dir).filter((n) => n.includes('staging') || n.includes('.old-')))).toEqual([]);
  });

  it('uses absolute locations under --base-url', async () => {
    const abs = join(dir, 'dist-abs');
    await runCli(['build', '--json', '--mirror', abs, '--base-url', 'https://registry.example.com/mirror'], dir);
    expect(readJson(join(abs, '.well-known/terraform.json'))).toEqual({ 'modules.v1': 'https://registry.example.com/mirror/v1/modules/' });
    expect(readJson(join(abs, 'v1/modules/acme/vpc/aws/1.0.0/download'))).toEqual({
      location: 'https://registry.example.com/mirror/v1/modules/acme/vpc/aws/1.0.0/vpc-aws-1.0.0.tar.gz',
    });
  });

  it('clones a repository given by URL', async () => {
    const urlDir = join(dir, 'by-url');
    writeFiles(urlDir, {
      'mirror.config.yaml': `sources:\n  - git: file://${join(dir, 'platform')}\n    namespace: acme\n    name: mono\n    provider: aws\n    path: vpc\n    tagPrefix: vpc/\n`,
    });
    const r = await runCli(['build', '--json'], urlDir);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).versions).toBe(2);
    expect(existsSync(join(urlDir, '.modmirror-cache/git'))).toBe(true);
    expect((await runCli(['build', '--json'], urlDir)).code).toBe(0);
  });
});

describe('build from the folder layout', () => {
  it('builds a folder given by --modules with no config file', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'drop/corp/queue/aws/0.1.0/main.tf': 'variable "name" {\n  type = string\n}\n',
      'drop/corp/queue/aws/0.1.0/README.md': '# Queue\n\n[![badge](x.svg)](y)\n\nAn SQS queue\nwith a dead-letter queue.\n\nMore text.\n',
      'drop/corp/queue/aws/0.2.0/main.tf': 'variable "name" {}\n',
      'drop/corp/queue/aws/nightly/main.tf': 'variable "name" {}\n',
      'drop/corp/queue/aws/0.2.0/.git/config': 'not part of the module',
    });
    const r = await runCli(['build', '--modules', 'drop', '--mirror', 'site/nested/out', '--json'], dir);
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout);
    expect(summary).toMatchObject({ modules: 1, versions: 2, errors: [] });
    expect(summary.warnings).toEqual([expect.stringMatching(/nightly.*not a semver version/)]);
    const detail = readJson(join(dir, 'site/nested/out/v1/modules/corp/queue/aws/0.1.0/index.json'));
    expect(detail.description).toBe('An SQS queue with a dead-letter queue.');
    expect(await archiveEntries(join(dir, 'site/nested/out/v1/modules/corp/queue/aws/0.2.0/queue-aws-0.2.0.tar.gz'))).toEqual(['main.tf']);
  });

  it('names a folder laid out without its provider level, with the layout expected, on stderr and in --json warnings', async () => {
    const dir = realpathSync(tempDir());
    writeFiles(dir, { 'modules/acme/hello/1.0.0/main.tf': 'variable "name" {}\n' });
    const warning =
      `${join(dir, 'modules/acme/hello/1.0.0')}: skipping: no folder in it, so no version: the layout is NAMESPACE/NAME/PROVIDER/VERSION/ ` +
      '(e.g. acme/network/aws/1.0.0/main.tf), and "1.0.0" is at the PROVIDER level';

    const human = await runCli(['build', '--modules', 'modules'], dir);
    expect(human.code).toBe(0);
    expect(human.stderr).toBe(`warning: ${warning}\n`);
    expect(human.stdout).toMatch(/^Built 0 modules, 0 versions/);
    const json = await runCli(['build', '--modules', 'modules', '--mirror', 'dist-json', '--json'], dir);
    expect(JSON.parse(json.stdout)).toMatchObject({ modules: 0, warnings: [warning] });
  });

  it('warns about a namespace folder whose name is not UTF-8 as about any other invalid name', async () => {
    const dir = realpathSync(tempDir());
    const bad = Buffer.concat([Buffer.from(`${dir}/mods/ns`), Buffer.of(0xff), Buffer.from('/vpc/aws/1.0.0')]);
    mkdirSync(bad, { recursive: true });
    writeFileSync(Buffer.concat([bad, Buffer.from('/main.tf')]), 'variable "a" {}\n');
    writeFiles(dir, { 'mods/Acme Corp/vpc/aws/1.0.0/main.tf': '' });

    const r = await runCli(['build', '--modules', 'mods', '--json'], dir);
    expect(JSON.parse(r.stdout).warnings).toEqual([
      `${join(dir, 'mods/Acme Corp/vpc/aws/1.0.0')}: skipping: "Acme Corp/vpc/aws" is not a valid module address`,
      `${join(dir, 'mods/ns\\xff/vpc/aws/1.0.0')}: skipping: "ns\\xff/vpc/aws" is not a valid module address`,
    ]);
  });
});

describe('build of the bundled sample modules', () => {
  it('builds every sample module with its hard HCL cases and no errors', async () => {
    const out = join(tempDir(), 'dist');
    const r = await runCli(['build', '--mirror', out, '--json'], ROOT);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout);
    expect(summary.errors).toEqual([]);
    expect(summary.modules).toBeGreaterThanOrEqual(3);
    const all = readJson(join(out, 'v1/modules/index.json'));
    const byName = new Map<string, string[]>();
    for (const m of all.modules) byName.set(`${m.namespace}/${m.name}`, [...(byName.get(`${m.namespace}/${m.name}`) ?? []), m.provider]);
    expect([...byName.values()].some((providers) => providers.length >= 2)).toBe(true);
    const manifest = mirrorManifest(out);
    const counts = Object.values(manifest.modules as Record<string, { versions: unknown[] }>).map((m) => m.versions.length);
    expect(Math.max(...counts)).toBeGreaterThanOrEqual(3);
  });
});

describe('build errors', () => {
  async function buildWithConfig(config: string, files: Record<string, string> = {}): Promise<CliResult & { dir: string }> {
    const dir = tempDir();
    writeFiles(dir, { 'mirror.config.yaml': config, 'mods/a/b/c/1.0.0/main.tf': 'variable "x" {}\n', ...files });
    return { ...(await runCli(['build'], dir)), dir };
  }

  it('refuses to replace an output folder that is not a mirror', async () => {
    const r = await buildWithConfig('sources:\n  - folder: mods\nout: precious\n', { 'precious/thesis.txt': 'do not delete' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/not empty and holds no modmirror mirror/);
    expect(readFileSync(join(r.dir, 'precious/thesis.txt'), 'utf8')).toBe('do not delete');
  });

  it('exits 2 on usage errors and 0 on help and version', async () => {
    // The binary itself, whose exit code is the one a shell sees.
    expect((await spawnCli(['frobnicate'])).code).toBe(2);
    const badFlag = await spawnCli(['build', '--frob']);
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toMatch(/Unknown option --frob\./);
    expect((await spawnCli([])).code).toBe(2);
    const help = await spawnCli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/Usage: modmirror <command>/);
    expect((await spawnCli(['build', '--help'])).stdout).toMatch(/--modules DIR/);
    const version = await spawnCli(['--version']);
    expect(version.stdout.trim()).toBe(readJson(join(ROOT, 'package.json')).version);
  });
});

describe('build progress', () => {
  it('shows versions done of total on a terminal, and nothing of it with --json', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'mods/a/b/c/1.0.0/main.tf': '', 'mods/a/b/c/1.1.0/main.tf': '' });
    // `script` gives the CLI a pseudo-terminal, as a person at a shell has.
    const onTty = execFileSync('script', ['-qec', `${process.execPath} ${join(ROOT, 'bin/modmirror.js')} build --modules mods`, '/dev/null'], {
      cwd: dir,
      encoding: 'utf8',
    });
    expect(onTty).toMatch(/\[1\/2\] a\/b\/c \d\.\d\.0/);
    // The line is cleared before the summary (a later count may be skipped: the line is rewritten at most ten times a second).
    expect(onTty).toContain('\r\x1b[KBuilt 1 module, 2 versions');
    const json = execFileSync(
      'script',
      ['-qec', `${process.execPath} ${join(ROOT, 'bin/modmirror.js')} build --modules mods --mirror d2 --json`, '/dev/null'],
      {
        cwd: dir,
        encoding: 'utf8',
      },
    );
    expect(json).not.toMatch(/\[1\/2\]/);
    expect(JSON.parse(json.trim()).versions).toBe(2);
  });
});

describe('the summary line', () => {
  it('counts what the run built: nothing "from the cache" on a first build, and what the mirror keeps beside a failed version', async () => {
    const dir = tempDir();
    // Three versions of the same content: one may find another's cache entry, made by this very build, which is no earlier build's.
    writeFiles(dir, {
      'mods/acme/a/null/1.0.0/main.tf': 'variable "a" {}\n',
      'mods/acme/a/null/1.1.0/main.tf': 'variable "a" {}\n',
      'mods/acme/a/null/1.2.0/main.tf': 'variable "a" {}\n',
      'mods/acme/b/null/1.0.0/main.tf': 'variable "b" {\n',
    });
    const first = await runCli(['build', '--modules', 'mods'], dir);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^Built 2 modules, 4 versions into dist\/ in \d+\.\d\d s\.\n$/);

    // Strict, b's published version fails and is kept: the line says what was built, and what the mirror holds.
    const strict = await runCli(['build', '--modules', 'mods', '--strict'], dir);
    expect(strict.code).toBe(1);
    expect(strict.stdout).toMatch(
      /^Built 1 module, 3 versions \(3 from the cache\) into dist\/ in \d+\.\d\d s; with the published versions it keeps, it holds 2 modules, 4 versions\.\n$/,
    );
    expect(strict.stderr).toMatch(/^1 version failed: a new one is left out, a published one keeps what it published/m);
  });
});

describe('first contact', () => {
  it('names a --modules folder that does not exist as such, not as a config key', async () => {
    const r = await runCli(['build', '--modules', './nope'], tempDir());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/error: The folder ".*\/nope" \(--modules\) does not exist\.\nhint: --modules takes a folder/);
    expect(r.stderr).not.toMatch(/config|sources\[0\]/);
  });

  it('suggests the command or flag that was meant', async () => {
    const flag = await runCli(['build', '--claen']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/error: Unknown option --claen\. Did you mean --clean\?\nhint: modmirror build --help lists its options\./);
    const command = await runCli(['biuld']);
    expect(command.code).toBe(2);
    expect(command.stderr).toMatch(/Unknown command "biuld"\. Did you mean "build"\?/);
    expect((await runCli(['frobnicate'])).stderr).not.toMatch(/Did you mean/);
  });
});
