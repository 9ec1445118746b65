// sync's plain-text summary stays short for a module with many versions:
// each version calls its own folders (./modules/...) and the same git
// source, and the summary counts the local calls on one line and names the
// git source once; --verbose lists every call with its caller, and --json
// carries them all whatever the flag.

import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RunningServer } from '../../src/serve/index.js';
import { runCli, tempDir } from '../helpers.js';
import { startUpstream } from './upstream.js';

const VERSIONS = ['1.0.0', '1.1.0', '1.2.0', '1.3.0', '1.4.0'];
const call = (name: string, source: string) => `module "${name}" {\n  source = "${source}"\n}\n`;

const upstreamDir = tempDir('mm-summary-upstream-');
const here = tempDir('mm-summary-');
let upstream: RunningServer;

beforeAll(async () => {
  const files: Record<string, string> = { 'mirror.config.yaml': 'sources:\n  - folder: mods\n' };
  for (const v of VERSIONS) {
    files[`mods/acme/net/null/${v}/main.tf`] =
      call('subnets', './modules/subnets') + call('routes', './modules/routes') + call('vcs', 'git::https://git.example.com/vcs.git?ref=v1');
    files[`mods/acme/net/null/${v}/outputs.tf`] = `output "v" {\n  value = "${v}"\n}\n`;
    files[`mods/acme/net/null/${v}/modules/subnets/main.tf`] = 'variable "cidr" {}\n';
    files[`mods/acme/net/null/${v}/modules/routes/main.tf`] = 'variable "table" {}\n';
  }
  upstream = await startUpstream(upstreamDir, files);
});
afterAll(async () => {
  await upstream?.close();
});

it('counts the calls to local folders on one line and names a repeated source once; --verbose lists each call', async () => {
  const r = await runCli(['sync', '--from', upstream.url, '--module', 'acme/net/null', '--into', 'mods', '--dependency-versions', 'every'], here);
  expect(r.code, r.stderr).toBe(0);
  const section = r.stdout.slice(r.stdout.indexOf('Not mirrored:'));
  expect(section.split('\n').filter((line) => line.startsWith('  '))).toEqual([
    '  10 calls to a local folder (./..., ../...): part of the caller, its calls are followed (--verbose lists them)',
    expect.stringMatching(
      /^ {2}git::https:\/\/git\.example\.com\/vcs\.git\?ref=v1 \(acme\/net\/null 1\.\d\.0: module "vcs", and 4 other callers\): not a registry source/,
    ),
  ]);

  const verbose = await runCli(['sync', '--from', upstream.url, '--module', 'acme/net/null', '--into', 'mods', '--verbose'], here);
  expect(verbose.code, verbose.stderr).toBe(0);
  const listed = verbose.stdout
    .slice(verbose.stdout.indexOf('Not mirrored:'))
    .split('\n')
    .filter((line) => line.startsWith('  '));
  expect(listed).toHaveLength(15);
  for (const v of VERSIONS) {
    expect(listed).toContain(`  ./modules/subnets (acme/net/null ${v}: module "subnets"): local path: part of the caller, its calls are followed`);
  }

  const json = await runCli(['sync', '--from', upstream.url, '--module', 'acme/net/null', '--into', 'mods', '--json'], here);
  expect((JSON.parse(json.stdout) as { upstreams: { notMirrored: unknown[] }[] }).upstreams[0]!.notMirrored).toHaveLength(15);
});
