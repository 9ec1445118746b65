// Providers across the air gap through the CLI: a full bundle carries the
// network mirror and unbundle makes the inside mirror equal to the outside
// one; a --since bundle carries only the provider zips the inside lacks; a
// bundle that would change a provider package the inside has is refused.

import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { list } from 'tar';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir, treeOf, mirrorManifest } from '../helpers.js';
import { goHashProgram, writeProviderInputs, writeReleaseFolder, writeZip } from '../providers/zips.js';

async function pathsIn(bundle: string): Promise<string[]> {
  const paths: string[] = [];
  await list({ file: bundle, onReadEntry: (entry) => paths.push(entry.path) });
  return paths;
}

const outside = tempDir('mm-prov-outside-');
const inside = tempDir('mm-prov-inside-');

beforeAll(async () => {
  await goHashProgram();
  await writeProviderInputs(outside);
  expect((await runCli(['build'], outside)).code).toBe(0);
}, 240_000);

describe('bundle and unbundle with providers', () => {
  it('carries the network mirror whole, then only the new provider zips --since the inside manifest', async () => {
    expect((await runCli(['bundle', '--mirror', 'dist', '--out', join(inside, 'full.tar.gz')], outside)).code).toBe(0);
    const full = await pathsIn(join(inside, 'full.tar.gz'));
    expect(full.filter((p) => p.endsWith('.zip'))).toHaveLength(6);
    expect((await runCli(['unbundle', 'full.tar.gz', '--mirror', 'mirror'], inside)).code).toBe(0);
    expect(treeOf(join(inside, 'mirror'))).toEqual(treeOf(join(outside, 'dist')));
    expect((await runCli(['verify', '--mirror', 'mirror'], inside)).code).toBe(0);

    // A new release outside: only its zips cross.
    await writeReleaseFolder(join(outside, 'releases'), 'widgets', '0.5.0', ['linux_amd64']);
    expect((await runCli(['build'], outside)).code).toBe(0);
    const made = await runCli(['bundle', '--mirror', 'dist', '--out', join(inside, 'delta.tar.gz'), '--since', join(inside, 'mirror/manifest.json')], outside);
    expect(made.code).toBe(0);
    expect(made.stdout).toMatch(/0 new or changed version\(s\), 1 provider package\(s\); 7 archive\(s\) left out that the base has/);
    const delta = await pathsIn(join(inside, 'delta.tar.gz'));
    expect(delta.filter((p) => p.endsWith('.zip'))).toEqual(['providers/registry.terraform.io/acme/widgets/terraform-provider-widgets_0.5.0_linux_amd64.zip']);
    const unbundled = await runCli(['unbundle', 'delta.tar.gz', '--mirror', 'mirror'], inside);
    expect(unbundled.code).toBe(0);
    expect(unbundled.stdout).toContain('1 new provider package(s)');
    expect(treeOf(join(inside, 'mirror'))).toEqual(treeOf(join(outside, 'dist')));
    expect((await runCli(['verify', '--mirror', 'mirror'], inside)).code).toBe(0);
    const manifest = mirrorManifest(join(inside, 'mirror'));
    expect(manifest.providers['registry.terraform.io/acme/widgets'].versions.map((v: { version: string }) => v.version)).toEqual(['0.5.0', '0.4.0']);
  }, 120_000);

  it('refuses a bundle that changes a provider package the inside already has', async () => {
    const other = tempDir('mm-prov-other-');
    await writeProviderInputs(other);
    await writeReleaseFolder(join(other, 'releases'), 'widgets', '0.5.0', ['linux_amd64']);
    // Same provider, version and platform as inside, other bytes, with a SHA256SUMS that lists them.
    const releases = join(other, 'releases');
    await writeZip(join(releases, 'terraform-provider-widgets_0.4.0_linux_amd64.zip'), [{ name: 'terraform-provider-widgets_v0.4.0', content: 'rebuilt' }]);
    const zips = ['terraform-provider-widgets_0.4.0_linux_amd64.zip', 'terraform-provider-widgets_0.4.0_darwin_arm64.zip'];
    writeFileSync(join(releases, 'terraform-provider-widgets_0.4.0_SHA256SUMS'), execFileSync('sha256sum', zips, { cwd: releases, encoding: 'utf8' }));
    expect((await runCli(['build'], other)).code).toBe(0);
    expect((await runCli(['bundle', '--mirror', 'dist', '--out', join(inside, 'changed.tar.gz')], other)).code).toBe(0);
    const before = treeOf(join(inside, 'mirror'));
    const r = await runCli(['unbundle', 'changed.tar.gz', '--mirror', 'mirror'], inside);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/holds different content for 1 version\(s\) .* already has: provider:registry\.terraform\.io\/acme\/widgets@0\.4\.0:linux_amd64/);
    expect(treeOf(join(inside, 'mirror'))).toEqual(before);
  }, 120_000);
});
