// Provider folders into the mirror through the CLI, as a user meets it: a
// folder as `terraform providers mirror` writes it (h1: only) and a folder of
// release zips with their SHA256SUMS (made by sha256sum) become one network
// mirror under providers/ with h1: and zh:, listed in manifest.json, that
// `verify` accepts; a wrong h1:, a zip that does not match its SHA256SUMS and
// a tampered mirror are each refused with the file named.

import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir, writeFiles, mirrorManifest } from '../helpers.js';
import { goH1, goHashProgram, writeProviderInputs, writeZip } from './zips.js';

const run = promisify(execFile);
const sha256sum = async (file: string) => (await run('sha256sum', [file])).stdout.split(' ')[0]!;

const makeInputs = writeProviderInputs;

// Compile (or find) the Go hash program first: on a fresh machine this is the slow part.
beforeAll(() => goHashProgram(), 240_000);

describe('build with provider folders', () => {
  it('writes one network mirror from a terraform providers mirror folder and a release folder', async () => {
    const dir = tempDir('mm-prov-');
    await makeInputs(dir);
    const r = await runCli(['build', '--json'], dir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ modules: 1, providerPackages: 6, providerHashing: { zips: 6 } });

    const base = join(dir, 'dist/providers');
    // The protocol's shapes (Terraform's http_mirror_source.go reads these): values of versions are empty objects.
    expect(JSON.parse(readFileSync(join(base, 'registry.terraform.io/hashicorp/random/index.json'), 'utf8'))).toEqual({
      versions: { '3.6.0': {}, '3.5.1': {} },
    });
    const v360 = JSON.parse(readFileSync(join(base, 'registry.terraform.io/hashicorp/random/3.6.0.json'), 'utf8'));
    expect(Object.keys(v360.archives).sort()).toEqual(['darwin_arm64', 'linux_amd64']);
    const linux = v360.archives.linux_amd64;
    expect(linux.url).toBe('terraform-provider-random_3.6.0_linux_amd64.zip');
    const input = join(dir, 'tf-mirror/registry.terraform.io/hashicorp/random', linux.url);
    // The input's h1: (Go's), and a zh: that is sha256sum's digest of the same bytes.
    expect(linux.hashes).toEqual([await goH1(input), `zh:${await sha256sum(input)}`]);
    // A copy of the input, not a link to it: a later write to the input must not change a published zip.
    const copy = join(base, 'registry.terraform.io/hashicorp/random', linux.url);
    expect(statSync(copy).ino).not.toBe(statSync(input).ino);
    expect(readFileSync(copy).equals(readFileSync(input))).toBe(true);
    expect(existsSync(join(base, 'registry.opentofu.org/hashicorp/null/3.2.2.json'))).toBe(true);
    const widgets = JSON.parse(readFileSync(join(base, 'registry.terraform.io/acme/widgets/0.4.0.json'), 'utf8'));
    const release = join(dir, 'releases/terraform-provider-widgets_0.4.0_darwin_arm64.zip');
    expect(widgets.archives.darwin_arm64).toEqual({
      url: 'terraform-provider-widgets_0.4.0_darwin_arm64.zip',
      hashes: [await goH1(release), `zh:${await sha256sum(release)}`],
    });

    const manifest = mirrorManifest(join(dir, 'dist'));
    expect(manifest.providers_path).toBe('providers');
    expect(Object.keys(manifest.providers)).toEqual([
      'registry.opentofu.org/hashicorp/null',
      'registry.terraform.io/acme/widgets',
      'registry.terraform.io/hashicorp/random',
    ]);
    expect(manifest.providers['registry.terraform.io/hashicorp/random'].versions.map((v: { version: string }) => v.version)).toEqual(['3.6.0', '3.5.1']);
    expect(manifest.providers['registry.terraform.io/acme/widgets'].versions[0].archives[1]).toEqual({
      platform: 'linux_amd64',
      archive: 'providers/registry.terraform.io/acme/widgets/terraform-provider-widgets_0.4.0_linux_amd64.zip',
      sha256: await sha256sum(join(dir, 'releases/terraform-provider-widgets_0.4.0_linux_amd64.zip')),
      size: statSync(join(dir, 'releases/terraform-provider-widgets_0.4.0_linux_amd64.zip')).size,
      hashes: expect.arrayContaining([expect.stringMatching(/^h1:/), expect.stringMatching(/^zh:/)]),
    });
    expect((await runCli(['verify', '--mirror', 'dist'], dir)).code).toBe(0);
    // Hosts that read _headers match no suffix pattern: each zip gets its own rule with its type and a long cache life.
    expect((await runCli(['hosting', 'headers'], dir)).code).toBe(0);
    expect(readFileSync(join(dir, 'dist/_headers'), 'utf8')).toContain(
      '\n/providers/registry.terraform.io/acme/widgets/terraform-provider-widgets_0.4.0_linux_amd64.zip\n  Content-Type: application/zip\n  Cache-Control: public, max-age=31536000, immutable\n',
    );

    // Unchanged inputs: up to date; a build for another reason takes every hash from the cache by file stamp; --clean hashes again.
    expect(JSON.parse((await runCli(['build', '--json'], dir)).stdout)).toMatchObject({ upToDate: true, providerPackages: 6 });
    writeFiles(dir, { 'mods/acme/net/aws/1.1.0/main.tf': 'variable "y" {}\n' });
    expect(JSON.parse((await runCli(['build', '--json'], dir)).stdout)).toMatchObject({ upToDate: false, providerHashing: { zips: 0, bytes: 0 } });
    expect(JSON.parse((await runCli(['build', '--clean', '--json'], dir)).stdout)).toMatchObject({ upToDate: false, providerHashing: { zips: 6 } });
    // A replaced zip is hashed again, and checked again.
    await writeZip(input, [{ name: 'terraform-provider-random_v3.6.0', content: 'changed' }]);
    const changed = await runCli(['build', '--json'], dir);
    expect(changed.code).toBe(1);
    expect(changed.stderr).toContain(
      `registry.terraform.io/hashicorp/random/3.6.0.json: linux_amd64 lists ${linux.hashes[0]} for ${input}, but the zip's h1: is`,
    );
  }, 120_000);

  it('refuses a wrong h1: in a terraform providers mirror folder, naming the file; nothing is written', async () => {
    const dir = tempDir('mm-prov-');
    await makeInputs(dir);
    const file = join(dir, 'tf-mirror/registry.terraform.io/hashicorp/random/3.5.1.json');
    const doc = JSON.parse(readFileSync(file, 'utf8'));
    doc.archives.linux_amd64.hashes = ['h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA='];
    writeFileSync(file, JSON.stringify(doc));
    const r = await runCli(['build'], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('1 problem(s) in the provider folders; nothing was written');
    expect(r.stderr).toContain(
      `${file}: linux_amd64 lists h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA= for ${join(dir, 'tf-mirror/registry.terraform.io/hashicorp/random/terraform-provider-random_3.5.1_linux_amd64.zip')}, but the zip's h1: is h1:`,
    );
    expect(existsSync(join(dir, 'dist'))).toBe(false);
  }, 120_000);

  it('refuses a release zip that does not match its SHA256SUMS, and one with no SHA256SUMS', async () => {
    const dir = tempDir('mm-prov-');
    await makeInputs(dir);
    const zip = join(dir, 'releases/terraform-provider-widgets_0.4.0_linux_amd64.zip');
    await writeZip(zip, [{ name: 'terraform-provider-widgets_v0.4.0', content: 'not the release' }]);
    await writeZip(join(dir, 'releases/terraform-provider-gadgets_1.0.0_linux_amd64.zip'), [{ name: 'x', content: 'y' }]);
    const r = await runCli(['build'], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(
        `releases/terraform-provider-widgets_0\\.4\\.0_SHA256SUMS: lists sha256 [0-9a-f]{64} for ${zip}, but the zip's sha256 is ${await sha256sum(zip)}`,
      ),
    );
    expect(r.stderr).toContain(
      'terraform-provider-gadgets_1.0.0_linux_amd64.zip: no terraform-provider-gadgets_1.0.0_SHA256SUMS beside it to check it against',
    );
  }, 120_000);

  it('verify recomputes zh: from the bytes and h1: from the entries, and names each problem', async () => {
    const dir = tempDir('mm-prov-');
    await makeInputs(dir);
    expect((await runCli(['build'], dir)).code).toBe(0);
    const rel = 'providers/registry.terraform.io/acme/widgets/terraform-provider-widgets_0.4.0_linux_amd64.zip';
    const zip = join(dir, 'dist', rel);
    // A new file in place of the hard link, the same size, other entries.
    const size = statSync(zip).size;
    rmSync(zip);
    await writeZip(zip, [{ name: 'terraform-provider-widgets_v0.4.0', content: 'Z'.repeat(10), store: true }]);
    const bytes = readFileSync(zip);
    writeFileSync(zip, Buffer.concat([bytes, Buffer.alloc(Math.max(0, size - bytes.length))]).subarray(0, Math.max(size, bytes.length)));
    const versionFile = join(dir, 'dist/providers/registry.terraform.io/hashicorp/random/3.6.0.json');
    const doc = JSON.parse(readFileSync(versionFile, 'utf8'));
    doc.archives.linux_amd64.url = '../random/other.zip';
    writeFileSync(versionFile, JSON.stringify(doc));
    const r = await runCli(['verify', '--mirror', 'dist'], dir);
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toContain(`${rel}: zh: from its bytes is zh:${await sha256sum(zip)}, the manifest lists zh:`);
    expect(r.stdout + r.stderr).toMatch(new RegExp(`${rel.replace(/\./g, '\\.')}: (h1: from its entries is h1:|not a readable zip)`));
    expect(r.stdout + r.stderr).toContain(
      'providers/registry.terraform.io/hashicorp/random/3.6.0.json: archives.linux_amd64.url "../random/other.zip" resolves to providers/registry.terraform.io/hashicorp/random/other.zip',
    );
  }, 120_000);

  it('publish keeps the providers in place and in the manifest', async () => {
    const dir = tempDir('mm-prov-');
    await makeInputs(dir);
    expect((await runCli(['build'], dir)).code).toBe(0);
    const before = mirrorManifest(join(dir, 'dist'));
    const index = readFileSync(join(dir, 'dist/providers-index.json'), 'utf8');
    writeFiles(dir, { 'new/acme/net/aws/1.1.0/main.tf': 'variable "y" {}\n' });
    const r = await runCli(['publish', '--source', 'new/acme/net/aws/1.1.0'], dir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const after = mirrorManifest(join(dir, 'dist'));
    expect(after.modules['acme/net/aws'].versions).toHaveLength(2);
    expect(after.providers).toEqual(before.providers);
    expect(after.providers_path).toBe('providers');
    expect(readFileSync(join(dir, 'dist/providers-index.json'), 'utf8')).toBe(index);
    expect((await runCli(['verify', '--mirror', 'dist'], dir)).code).toBe(0);
  }, 120_000);

  it('reads a mirror built before providers (no providers in the manifest, no providers index)', async () => {
    const dir = tempDir('mm-prov-');
    writeFiles(dir, { 'mirror.config.yaml': 'sources:\n  - folder: mods\n', 'mods/acme/net/aws/1.0.0/main.tf': '' });
    expect((await runCli(['build'], dir)).code).toBe(0);
    const manifest = mirrorManifest(join(dir, 'dist'));
    expect(manifest.providers).toBeUndefined();
    rmSync(join(dir, 'dist/providers-index.json'));
    expect((await runCli(['verify', '--mirror', 'dist'], dir)).code).toBe(0);
  }, 60_000);
});
