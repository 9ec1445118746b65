// In-house providers across the air gap: a bundle carries the provider
// registry protocol (versions and download documents, zips, SHA256SUMS and
// signatures) and unbundle makes the inside equal to the outside, signatures
// still verified there; a --since bundle after `publish --provider-release`
// carries the new version's zips and its signed SHA256SUMS.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { list } from 'tar';
import { describe, expect, it } from 'vitest';
import { runCli, tempDir, treeOf, writeFiles } from '../helpers.js';
import { testKey, signRelease } from '../providers/keys.js';
import { writeReleaseFolder } from '../providers/zips.js';

async function pathsIn(bundle: string): Promise<string[]> {
  const paths: string[] = [];
  await list({ file: bundle, onReadEntry: (entry) => paths.push(entry.path) });
  return paths;
}

describe('bundle and unbundle with in-house providers', () => {
  it('carries the registry protocol and its signatures whole, then a published version --since', async () => {
    const outside = tempDir('mm-inhouse-outside-');
    const inside = tempDir('mm-inhouse-inside-');
    const acme = await testKey(outside, 'Acme');
    writeFiles(outside, {
      'mirror.config.yaml': `baseUrl: https://registry.example.com/\nproviders:\n  - folder: releases\n    namespace: acme\n    registry: true\n    keys: [${acme.publicFile}]\n`,
    });
    await writeReleaseFolder(join(outside, 'releases'), 'widgets', '1.0.0', ['linux_amd64']);
    await signRelease(join(outside, 'releases'), 'widgets', '1.0.0', acme);
    expect((await runCli(['build'], outside)).code).toBe(0);

    expect((await runCli(['bundle', '--mirror', 'dist', '--out', join(inside, 'full.tar.gz')], outside)).code).toBe(0);
    const full = await pathsIn(join(inside, 'full.tar.gz'));
    for (const file of [
      'v1/providers/acme/widgets/versions',
      'v1/providers/acme/widgets/1.0.0/download/linux/amd64',
      'providers/registry.example.com/acme/widgets/terraform-provider-widgets_1.0.0_SHA256SUMS.sig',
    ]) {
      expect(full).toContain(file);
    }
    expect((await runCli(['unbundle', 'full.tar.gz', '--mirror', 'mirror'], inside)).code).toBe(0);
    expect(treeOf(join(inside, 'mirror'))).toEqual(treeOf(join(outside, 'dist')));
    expect((await runCli(['verify', '--mirror', 'mirror'], inside)).code).toBe(0);

    await writeReleaseFolder(join(outside, 'next'), 'widgets', '1.1.0', ['linux_amd64']);
    await signRelease(join(outside, 'next'), 'widgets', '1.1.0', acme);
    const published = await runCli(['publish', '--provider-release', 'next', '--namespace', 'acme', '--type', 'widgets'], outside);
    expect(published.stderr).toBe('');
    expect(published.code).toBe(0);
    const made = await runCli(['bundle', '--mirror', 'dist', '--out', join(inside, 'delta.tar.gz'), '--since', join(inside, 'mirror/manifest.json')], outside);
    expect(made.code, made.stderr).toBe(0);
    const delta = await pathsIn(join(inside, 'delta.tar.gz'));
    expect(delta.filter((p) => p.endsWith('.zip'))).toEqual(['providers/registry.example.com/acme/widgets/terraform-provider-widgets_1.1.0_linux_amd64.zip']);
    expect(delta).toContain('providers/registry.example.com/acme/widgets/terraform-provider-widgets_1.1.0_SHA256SUMS.sig');
    expect((await runCli(['unbundle', 'delta.tar.gz', '--mirror', 'mirror'], inside)).code).toBe(0);
    expect(treeOf(join(inside, 'mirror'))).toEqual(treeOf(join(outside, 'dist')));
    expect((await runCli(['verify', '--mirror', 'mirror'], inside)).code).toBe(0);
    expect(
      JSON.parse(readFileSync(join(inside, 'mirror/v1/providers/acme/widgets/versions'), 'utf8')).versions.map((v: { version: string }) => v.version),
    ).toEqual(['1.1.0', '1.0.0']);
  }, 120_000);
});
