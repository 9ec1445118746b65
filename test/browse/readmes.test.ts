// The browse page's READMEs: each distinct rendering stored once, named by
// the sha256 of its HTML, with every version pointing at its renderings.

import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { expect, it } from 'vitest';
import { readmeHtml, runCli, tempDir, writeFiles } from '../helpers.js';

it('stores each distinct rendering once, across versions and modules, and points every version at its own', async () => {
  const dir = tempDir();
  const shared = '# Shared\n\n| a | b |\n|---|---|\n| 1 | 2 |\n';
  const example = '# Example\n\nRun *it*.\n';
  writeFiles(dir, {
    'mirror.config.yaml': 'sources:\n  - folder: mods\n',
    'mods/acme/a/aws/1.0.0/main.tf': 'variable "x" {}\n',
    'mods/acme/a/aws/1.0.0/README.md': shared,
    'mods/acme/a/aws/1.1.0/main.tf': 'variable "x" {}\nvariable "y" {}\n',
    'mods/acme/a/aws/1.1.0/README.md': shared,
    'mods/acme/a/aws/1.1.0/examples/basic/main.tf': 'module "a" {\n  source = "../.."\n}\n',
    'mods/acme/a/aws/1.1.0/examples/basic/README.md': example,
    // Another module with the same root README, and an example without one.
    'mods/acme/b/aws/0.1.0/main.tf': 'output "o" { value = 1 }\n',
    'mods/acme/b/aws/0.1.0/README.md': shared,
    'mods/acme/b/aws/0.1.0/examples/bare/main.tf': 'module "b" {\n  source = "../.."\n}\n',
  });
  const build = await runCli(['build', '--clean'], dir);
  expect(build.code, build.stderr).toBe(0);
  const dist = join(dir, 'dist');

  const stored = readdirSync(join(dist, 'browse/rendered')).sort();
  expect(stored).toHaveLength(2);
  for (const name of stored) {
    const html = gunzipSync(readFileSync(join(dist, 'browse/rendered', name)));
    expect(name).toBe(`${createHash('sha256').update(html).digest('hex')}.html.gz`);
  }

  const a0 = readmeHtml(dist, 'acme/a/aws', '1.0.0');
  const a1 = readmeHtml(dist, 'acme/a/aws', '1.1.0');
  const b0 = readmeHtml(dist, 'acme/b/aws', '0.1.0');
  expect(Object.keys(a0)).toEqual(['']);
  expect(Object.keys(a1).sort()).toEqual(['', 'examples/basic']);
  // An empty README has no pointer (the page shows none).
  expect(Object.keys(b0)).toEqual(['']);
  expect(a0['']).toContain('<table>');
  expect(a1['']).toBe(a0['']);
  expect(b0['']).toBe(a0['']);
  expect(a1['examples/basic']).toContain('<em>it</em>');

  const verify = await runCli(['verify', 'dist'], dir);
  expect(verify.code, verify.stderr).toBe(0);
});
