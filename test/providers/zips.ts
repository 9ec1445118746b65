// Tiny provider packages for tests: to `terraform init` a provider is a zip
// holding an executable named terraform-provider-TYPE_vVERSION, so a few
// bytes stand in for the binary.

import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { createWriteStream, mkdirSync, writeFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { once } from 'node:events';
import yazl from 'yazl';
import { buildGoProgram } from '../clients/go-build.js';

/** The compiled test/clients/provider-hash: Go's dirhash, the h1: Terraform computes. */
export async function goHashProgram(): Promise<string> {
  return (await buildGoProgram(`${import.meta.dirname}/../clients/provider-hash`)).binary;
}

export async function goH1(file: string): Promise<string> {
  const { stdout } = await promisify(execFile)(await goHashProgram(), [file]);
  return stdout.split('  ')[0]!;
}

export interface ZipEntry {
  name: string;
  /** Omitted for a directory entry (the name ends in "/"). */
  content?: string | Buffer;
  /** Stored without compression. */
  store?: boolean;
  mode?: number;
}

export async function writeZip(file: string, entries: ZipEntry[]): Promise<void> {
  mkdirSync(dirname(file), { recursive: true });
  const zip = new yazl.ZipFile();
  const mtime = new Date('2024-01-02T03:04:05Z');
  for (const entry of entries) {
    if (entry.content === undefined) zip.addEmptyDirectory(entry.name, { mtime });
    else zip.addBuffer(Buffer.from(entry.content), entry.name, { mtime, compress: !entry.store, mode: entry.mode ?? 0o100755 });
  }
  zip.end();
  const out = zip.outputStream.pipe(createWriteStream(file));
  await once(out, 'finish');
}

/** A provider package as a release would name it: terraform-provider-TYPE_VERSION_OS_ARCH.zip. */
export async function writeProviderZip(dir: string, type: string, version: string, platform: string): Promise<string> {
  const file = `${dir}/terraform-provider-${type}_${version}_${platform}.zip`;
  await writeZip(file, [{ name: `terraform-provider-${type}_v${version}`, content: `#!/bin/sh\necho ${type} ${version} ${platform}\n` }]);
  return file;
}

export interface FixturePackage {
  hostname: string;
  namespace: string;
  type: string;
  version: string;
  platform: string;
}

/**
 * A folder as `terraform providers mirror DIR` writes it (hashicorp/terraform
 * internal/command/providers_mirror.go): HOSTNAME/NAMESPACE/TYPE/ holds the
 * zips, index.json {"versions": {V: {}}} and V.json {"archives": {OS_ARCH:
 * {"hashes": [h1 only], "url": zip file name}}}, indented by two spaces with
 * keys in Go's map order. `h1Of` gives the h1: (the test passes Go's dirhash).
 */
export async function writeTerraformMirrorFolder(dir: string, packages: FixturePackage[], h1Of: (file: string) => Promise<string>): Promise<void> {
  const byProvider = new Map<string, FixturePackage[]>();
  for (const p of packages) byProvider.set(`${p.hostname}/${p.namespace}/${p.type}`, [...(byProvider.get(`${p.hostname}/${p.namespace}/${p.type}`) ?? []), p]);
  for (const [key, list] of byProvider) {
    const typeDir = `${dir}/${key}`;
    const versions: Record<string, Record<string, { hashes: string[]; url: string }>> = {};
    for (const p of list) {
      const file = await writeProviderZip(typeDir, p.type, p.version, p.platform);
      (versions[p.version] ??= {})[p.platform] = { hashes: [await h1Of(file)], url: file.slice(typeDir.length + 1) };
    }
    const sorted = <T>(o: Record<string, T>) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1)));
    writeFileSync(`${typeDir}/index.json`, JSON.stringify({ versions: sorted(Object.fromEntries(Object.keys(versions).map((v) => [v, {}]))) }, null, 2));
    for (const [version, archives] of Object.entries(versions))
      writeFileSync(`${typeDir}/${version}.json`, JSON.stringify({ archives: sorted(archives) }, null, 2));
  }
}

/**
 * A provider release as its publisher ships it: the zips, their
 * terraform-provider-TYPE_VERSION_SHA256SUMS made by `sha256sum`, and a
 * `_manifest.json` it also lists.
 */
export async function writeReleaseFolder(dir: string, type: string, version: string, platforms: string[]): Promise<string[]> {
  mkdirSync(dir, { recursive: true });
  const zips = [];
  for (const platform of platforms) zips.push(basename(await writeProviderZip(dir, type, version, platform)));
  const manifest = `terraform-provider-${type}_${version}_manifest.json`;
  writeFileSync(`${dir}/${manifest}`, JSON.stringify({ version: 1, metadata: { protocol_versions: ['5.0'] } }));
  const sums = execFileSync('sha256sum', [...zips, manifest], { cwd: dir, encoding: 'utf8' });
  writeFileSync(`${dir}/terraform-provider-${type}_${version}_SHA256SUMS`, sums);
  return zips.map((z) => `${dir}/${z}`);
}

/** The packages writeProviderInputs makes, as HOSTNAME/NAMESPACE/TYPE@VERSION:OS_ARCH with their input file. */
export const INPUT_PACKAGES: Record<string, string> = {
  'registry.terraform.io/hashicorp/random@3.6.0:linux_amd64':
    'tf-mirror/registry.terraform.io/hashicorp/random/terraform-provider-random_3.6.0_linux_amd64.zip',
  'registry.terraform.io/hashicorp/random@3.6.0:darwin_arm64':
    'tf-mirror/registry.terraform.io/hashicorp/random/terraform-provider-random_3.6.0_darwin_arm64.zip',
  'registry.terraform.io/hashicorp/random@3.5.1:linux_amd64':
    'tf-mirror/registry.terraform.io/hashicorp/random/terraform-provider-random_3.5.1_linux_amd64.zip',
  'registry.opentofu.org/hashicorp/null@3.2.2:linux_amd64': 'tf-mirror/registry.opentofu.org/hashicorp/null/terraform-provider-null_3.2.2_linux_amd64.zip',
  'registry.terraform.io/acme/widgets@0.4.0:linux_amd64': 'releases/terraform-provider-widgets_0.4.0_linux_amd64.zip',
  'registry.terraform.io/acme/widgets@0.4.0:darwin_arm64': 'releases/terraform-provider-widgets_0.4.0_darwin_arm64.zip',
};

/**
 * A config with one module and both kinds of provider folder: `tf-mirror` as
 * `terraform providers mirror` writes it (h1: from Go's dirhash) and
 * `releases`, the acme/widgets release with its SHA256SUMS.
 */
export async function writeProviderInputs(dir: string): Promise<void> {
  mkdirSync(`${dir}/mods/acme/net/aws/1.0.0`, { recursive: true });
  writeFileSync(`${dir}/mods/acme/net/aws/1.0.0/main.tf`, 'variable "x" {}\n');
  writeFileSync(
    `${dir}/mirror.config.yaml`,
    'sources:\n  - folder: mods\nproviders:\n  - folder: tf-mirror\n  - folder: releases\n    namespace: acme\nplatforms: [linux_amd64, darwin_arm64]\n',
  );
  const packages = Object.keys(INPUT_PACKAGES)
    .filter((spec) => !spec.includes('/acme/'))
    .map((spec) => {
      const [, hostname = '', namespace = '', type = '', version = '', platform = ''] = /^([^/]+)\/([^/]+)\/([^@]+)@([^:]+):(.+)$/.exec(spec)!;
      return { hostname, namespace, type, version, platform };
    });
  await writeTerraformMirrorFolder(`${dir}/tf-mirror`, packages, goH1);
  await writeReleaseFolder(`${dir}/releases`, 'widgets', '0.4.0', ['linux_amd64', 'darwin_arm64']);
}
