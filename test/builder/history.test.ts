// A real module history through the CLI: a Terraform 0.11 version in HCL1, a
// version whose example folder is made of git symlinks (with a link that
// leaves the module and one that loops), and a version with a file no parser
// reads. The build mirrors every tag; --strict leaves the broken one out.

import { existsSync, lstatSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { extract, list } from 'tar';
import { beforeAll, describe, expect, it } from 'vitest';
import { archiveFile, downloadFile, versionDetailFile, versionsFile } from '../../src/protocol/paths.js';
import { APP, HCL1, V1, V1_LINKS } from '../fixtures/history.js';
import { makeRepo, runCli, tempDir, treeOf, writeFiles } from '../helpers.js';

const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8'));
const EKS = { namespace: 'acme', name: 'eks', provider: 'aws' };

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
    const r = await runCli(['build', '--json', '--mirror', out], dir);
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
      {
        name: 'userdata',
        type: '',
        description: "Shell appended to the workers' user data.\n",
        default: JSON.stringify('#!/bin/bash\necho "${HOSTNAME:-unknown}"\n'),
        required: false,
        sensitive: false,
        nullable: true,
      },
      {
        name: 'workers',
        type: 'list',
        description: '',
        default: '[{"instance_type":"m4.large","asg_max_size":3}]',
        required: false,
        sensitive: false,
        nullable: true,
      },
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
    expect(v2['inputs']).toEqual([
      { name: 'name', type: 'string', description: 'Application name.', default: '', required: true, sensitive: false, nullable: true },
    ]);
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
    const again = await runCli(['build', '--json', '--mirror', join(dir, 'dist-clean'), '--clean'], dir);
    expect(treeOf(join(dir, 'dist-clean'))).toEqual(treeOf(out));
    const upToDate = JSON.parse((await runCli(['build', '--json', '--mirror', out], dir)).stdout);
    expect(upToDate.upToDate).toBe(true);
    expect(upToDate.partial).toEqual(summary.partial);
    expect(upToDate.warnings).toEqual(summary.warnings);
    expect(JSON.parse(again.stdout).partial).toEqual(summary.partial);
  });

  it('with --strict, leaves the broken version out and exits 1, as before', async () => {
    const strictOut = join(dir, 'dist-strict');
    const r = await runCli(['build', '--strict', '--json', '--mirror', strictOut], dir);
    expect(r.code).toBe(1);
    const strict = JSON.parse(r.stdout);
    expect(strict.partial).toEqual([]);
    expect(strict.errors).toEqual([{ code: 'HCL_SYNTAX', message: expect.stringMatching(/acme\/eks\/aws 1\.1\.0 .*main\.tf:2:10: Expected an expression/) }]);
    expect(readJson(join(strictOut, versionsFile(EKS))).modules[0].versions.map((v: { version: string }) => v.version)).toEqual(['1.0.0', '0.1.0']);
    // And a strict build over the lenient mirror is not "up to date": it has work to do.
    expect((await runCli(['build', '--strict', '--json', '--mirror', out], dir)).code).toBe(1);
  });

  it('publish stays strict', async () => {
    const r = await runCli(
      [
        'publish',
        '--git',
        repo,
        '--ref',
        'v1.1.0',
        '--namespace',
        'acme',
        '--name',
        'eks',
        '--provider',
        'aws',
        '--mirror',
        join(dir, 'dist-pub'),
        '--new-mirror',
      ],
      dir,
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/main\.tf:2:10: Expected an expression/);
  });

  it('prints the partial version and the links in its human summary', async () => {
    const r = await runCli(['build', '--mirror', join(dir, 'dist-human')], dir);
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
    expect(await archiveEntries(join(dir, 'dist', archiveFile(address, '1.0.0')))).toEqual({
      'examples/basic/vars.tf': 'File',
      'shared/vars.tf': 'File',
      'vars.tf': 'File',
    });
  });
});
