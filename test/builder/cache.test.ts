// The version cache through the CLI: an entry holds each README as a
// reference (path and content id), not its text, and a build that takes
// versions from the cache reads the READMEs back from their source, git's
// objects or a folder's files, giving the same mirror as a clean build.

import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { makeRepo, runCli, tempDir, treeOf, writeFiles } from '../helpers.js';

const ROOT_README = '# Net\n\nThe **network** module, README text the cache does not keep.\n';
const EXAMPLE_README = '# Example\n\nAn example README, also only referenced.\n';

/** The cache's entry files (each beside its archive). */
function entryFiles(dir: string): string[] {
  const versions = join(dir, '.modmirror-cache/versions');
  return (readdirSync(versions, { recursive: true }) as string[]).filter((name) => name.endsWith('.json')).map((name) => join(versions, name));
}

it('keeps READMEs by reference and reads them back from git and from folders on a hit', async () => {
  const dir = tempDir();
  makeRepo(join(dir, 'terraform-aws-net'), [
    {
      date: '2024-01-01T00:00:00Z',
      files: {
        'main.tf': 'variable "a" {}\n',
        'README.md': ROOT_README,
        'examples/basic/main.tf': 'module "n" {\n  source = "../.."\n}\n',
        'examples/basic/README.md': EXAMPLE_README,
      },
      tags: ['v1.0.0'],
    },
    { date: '2024-02-01T00:00:00Z', files: { 'main.tf': 'variable "a" {}\nvariable "b" {}\n' }, tags: ['v1.1.0'] },
  ]);
  writeFiles(dir, {
    'mirror.config.yaml': 'sources:\n  - git: terraform-aws-net\n    namespace: acme\n  - folder: mods\n',
    'mods/acme/f/aws/1.0.0/main.tf': 'output "o" { value = 1 }\n',
    'mods/acme/f/aws/1.0.0/README.md': ROOT_README,
  });
  const first = JSON.parse((await runCli(['build', '--json'], dir)).stdout);
  expect(first).toMatchObject({ versions: 3, cached: 0, errors: [] });

  const stored = entryFiles(dir).map((file) => readFileSync(file, 'utf8'));
  expect(stored).toHaveLength(3);
  for (const text of stored) {
    expect(text).not.toContain('README text the cache does not keep');
    expect(text).not.toContain('only referenced');
    expect(JSON.parse(text).content.root.readme).toEqual({ path: 'README.md', id: expect.stringMatching(/^[0-9a-f]{40}$/) });
  }

  const again = JSON.parse((await runCli(['build', '--mirror', 'again', '--json'], dir)).stdout);
  expect(again).toMatchObject({ versions: 3, cached: 3, errors: [] });
  expect(treeOf(join(dir, 'again'))).toEqual(treeOf(join(dir, 'dist')));
  const detail = JSON.parse(readFileSync(join(dir, 'again/v1/modules/acme/net/aws/1.1.0/index.json'), 'utf8'));
  expect(detail.root.readme).toBe(ROOT_README);
  expect(detail.examples[0].readme).toBe(EXAMPLE_README);

  // An entry naming a README its source does not have is a miss: the version is built again, not shown wrong.
  for (const path of entryFiles(dir)) {
    const entry = JSON.parse(readFileSync(path, 'utf8'));
    entry.content.root.readme.id = '0'.repeat(40);
    writeFileSync(path, JSON.stringify(entry));
  }
  const rebuilt = JSON.parse((await runCli(['build', '--mirror', 'rebuilt', '--json'], dir)).stdout);
  expect(rebuilt).toMatchObject({ versions: 3, cached: 0, errors: [] });
  expect(treeOf(join(dir, 'rebuilt'))).toEqual(treeOf(join(dir, 'dist')));
});
