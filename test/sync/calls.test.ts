// Which module calls sync reads from a package and from a configuration
// folder: the extractor's root, modules/* and examples/*, plus the folders
// local calls lead to, as terraform init installs them.

import { describe, expect, it } from 'vitest';
import { configurationCalls, packageCalls } from '../../src/sync/calls.js';
import { tempDir, writeFiles } from '../helpers.js';

const call = (name: string, source: string) => `module "${name}" {\n  source = "${source}"\n}\n`;
const callsOf = (found: Awaited<ReturnType<typeof packageCalls>>) => found.calls.map((c) => `${c.folder || '.'}: ${c.call.name} = ${c.call.source}`);

describe('module calls of a package', () => {
  it('follows local calls inside the package, and says which lead outside or nowhere', async () => {
    const dir = tempDir('mm-calls-');
    writeFiles(dir, {
      'main.tf': call('deep', './internal/deep') + call('out', '../sibling') + call('nope', './missing'),
      'internal/deep/main.tf': call('b', 'acme/b/null') + call('back', '../../'),
      'modules/x/main.tf': call('c', 'acme/c/null'),
      'examples/e/main.tf': call('root', '../..'),
      '.terraform/modules/junk/main.tf': call('never', 'acme/never/null'),
    });
    const found = await packageCalls(dir);
    expect(callsOf(found)).toEqual([
      '.: deep = ./internal/deep',
      '.: nope = ./missing',
      '.: out = ../sibling',
      'modules/x: c = acme/c/null',
      'examples/e: root = ../..',
      'internal/deep: b = acme/b/null',
      'internal/deep: back = ../../',
    ]);
    expect(found.unreadable.map((u) => `${u.found.call.name}: ${u.why}`)).toEqual([
      'nope: the package has no .tf files there',
      'out: it leads outside the module package',
    ]);
  });

  it('names the file and line of a syntax error', async () => {
    const dir = tempDir('mm-calls-bad-');
    writeFiles(dir, { 'main.tf': 'module "x" {\n  source = \n' });
    await expect(packageCalls(dir)).rejects.toThrow(/main\.tf:\d+:\d+/);
  });
});

describe('module calls of a configuration folder', () => {
  it('reads the root and the folders it calls by local path, with their providers', async () => {
    const dir = tempDir('mm-calls-config-');
    writeFiles(dir, {
      'infra/main.tf':
        'terraform {\n  required_providers {\n    aws = {\n      source = "hashicorp/aws"\n      version = ">= 5.0"\n    }\n  }\n}\n' +
        call('net', '../shared/net'),
      'infra/modules/unused/main.tf': call('never', 'acme/never/null'),
      'shared/net/main.tf': call('vpc', 'terraform-aws-modules/vpc/aws'),
    });
    const found = await configurationCalls(`${dir}/infra`);
    expect(callsOf(found)).toEqual(['.: net = ../shared/net', '../shared/net: vpc = terraform-aws-modules/vpc/aws']);
    expect(found.providers).toEqual([{ name: 'aws', namespace: 'hashicorp', source: 'hashicorp/aws', version: '>= 5.0', folder: '' }]);
  });
});
