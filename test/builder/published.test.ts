// Published means permanent, through the CLI: a build keeps what publish
// added and what the sources dropped (until --prune, on record); a provider
// version offered again with other zip bytes is refused and keeps its
// published bytes; publish never guesses an address or starts a mirror by
// accident.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { moduleFiles } from '../clients/install.js';
import { runCli, tempDir, writeFiles, mirrorManifest } from '../helpers.js';
import { writeReleaseFolder, writeZip } from '../providers/zips.js';

const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8'));
const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
/** The modules that have versions: one whose every version was removed keeps its state, with none. */
const withVersions = (dist: string) =>
  Object.entries(mirrorManifest(dist).modules as Record<string, { versions: unknown[] }>)
    .filter(([, m]) => m.versions.length > 0)
    .map(([key]) => key);
const ZIP = 'providers/registry.terraform.io/hashicorp/aws/terraform-provider-aws_5.31.0_linux_amd64.zip';

describe('a build keeps what is published', () => {
  it('keeps a module publish added, until --prune removes it on record', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'mirror.config.yaml': 'sources:\n  - folder: mods\n' });
    writeFiles(join(dir, 'mods/acme/a/aws/1.0.0'), moduleFiles('1.0.0'));
    writeFiles(join(dir, 'rel/acme/b/aws/1.0.0'), moduleFiles('2.0.0'));
    expect((await runCli(['build'], dir)).code).toBe(0);
    expect((await runCli(['publish', '--source', 'rel/acme/b/aws/1.0.0'], dir)).code).toBe(0);
    const archive = readFileSync(join(dir, 'dist/v1/modules/acme/b/aws/1.0.0/b-aws-1.0.0.tar.gz'));

    const rebuilt = await runCli(['build', '--json'], dir);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(JSON.parse(rebuilt.stdout).warnings).toEqual([expect.stringMatching(/keeping 1 published version .*: acme\/b\/aws@1\.0\.0/)]);
    expect(readFileSync(join(dir, 'dist/v1/modules/acme/b/aws/1.0.0/b-aws-1.0.0.tar.gz')).equals(archive)).toBe(true);
    expect(Object.keys(mirrorManifest(join(dir, 'dist')).modules)).toEqual(['acme/a/aws', 'acme/b/aws']);
    // A clean build keeps it too, with the same documents.
    const before = readFileSync(join(dir, 'dist/v1/modules/acme/b/aws/1.0.0/index.json'), 'utf8');
    expect((await runCli(['build', '--clean'], dir)).code).toBe(0);
    expect(readFileSync(join(dir, 'dist/v1/modules/acme/b/aws/1.0.0/index.json'), 'utf8')).toBe(before);
    expect((await runCli(['verify', '--mirror', 'dist'], dir)).code).toBe(0);

    expect((await runCli(['build', '--prune'], dir)).code).toBe(0);
    const manifest = mirrorManifest(join(dir, 'dist'));
    expect(withVersions(join(dir, 'dist'))).toEqual(['acme/a/aws']);
    expect(manifest.modules['acme/b/aws']).toEqual({ versions: [] });
    expect((await runCli(['verify', '--mirror', 'dist'], dir)).code).toBe(0);
    expect(manifest.removed).toEqual([
      { module: 'acme/b/aws', version: '1.0.0', sha256: createHash('sha256').update(archive).digest('hex'), at: expect.any(String), by: expect.any(String) },
    ]);
    // What was removed cannot come back with other bytes.
    writeFiles(join(dir, 'rel/acme/b/aws/1.0.0'), { 'extra.tf': 'variable "more" {}\n' });
    const back = await runCli(['publish', '--source', 'rel/acme/b/aws/1.0.0'], dir);
    expect(back.code).toBe(1);
    expect(back.stderr).toMatch(/acme\/b\/aws 1\.0\.0: removed with sha256 [0-9a-f]{64}, and this write brings it back as [0-9a-f]{64}/);
    expect(withVersions(join(dir, 'dist'))).toEqual(['acme/a/aws']);
  });

  it('refuses a provider version offered again with other zip bytes, naming both digests, and keeps the published zip', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'mirror.config.yaml': 'sources:\n  - folder: mods\nproviders:\n  - folder: hashicorp\n    namespace: hashicorp\n' });
    writeFiles(join(dir, 'mods/acme/a/aws/1.0.0'), moduleFiles('1.0.0'));
    await writeReleaseFolder(join(dir, 'hashicorp'), 'aws', '5.31.0', ['linux_amd64']);
    expect((await runCli(['build'], dir)).code).toBe(0);
    const published = sha256(join(dir, 'dist', ZIP));

    // The same version re-zipped (another mtime, another binary): what a lock file pinned no longer matches.
    const zip = join(dir, 'hashicorp/terraform-provider-aws_5.31.0_linux_amd64.zip');
    await writeZip(zip, [{ name: 'terraform-provider-aws_v5.31.0', content: '#!/bin/sh\necho rebuilt\n' }]);
    const sums = execFileSync(
      'sha256sum',
      readdirSync(join(dir, 'hashicorp')).filter((f) => !f.endsWith('SHA256SUMS')),
      { cwd: join(dir, 'hashicorp'), encoding: 'utf8' },
    );
    writeFileSync(join(dir, 'hashicorp/terraform-provider-aws_5.31.0_SHA256SUMS'), sums);
    const offered = sha256(zip);

    const r = await runCli(['build', '--json'], dir);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).errors).toEqual([
      {
        code: 'VERSION_CONFLICT',
        message: expect.stringContaining(`registry.terraform.io/hashicorp/aws 5.31.0: the provider folder holds other bytes than the published version`),
      },
    ]);
    expect(r.stdout).toContain(`linux_amd64: published sha256 ${published}, the provider folder's ${offered}`);
    expect(sha256(join(dir, 'dist', ZIP))).toBe(published);
    expect((await runCli(['verify', '--mirror', 'dist'], dir)).code).toBe(0);

    // A provider folder that no longer has the version keeps it published.
    writeFileSync(join(dir, 'mirror.config.yaml'), 'sources:\n  - folder: mods\n');
    const kept = await runCli(['build', '--json'], dir);
    expect(kept.code, kept.stderr).toBe(0);
    expect(JSON.parse(kept.stdout).warnings).toEqual([expect.stringMatching(/keeping 1 published version .*registry\.terraform\.io\/hashicorp\/aws@5\.31\.0/)]);
    expect(sha256(join(dir, 'dist', ZIP))).toBe(published);
    expect(readJson(join(dir, 'dist/providers/registry.terraform.io/hashicorp/aws/index.json'))).toEqual({ versions: { '5.31.0': {} } });
    expect((await runCli(['verify', '--mirror', 'dist'], dir)).code).toBe(0);
  });
});

describe('publish never guesses', () => {
  it('refuses a folder outside the drop layout without the address flags, and writes nothing', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'mirror.config.yaml': 'sources:\n  - folder: mods\n' });
    writeFiles(join(dir, 'mods/acme/a/aws/1.0.0'), moduleFiles('1.0.0'));
    expect((await runCli(['build'], dir)).code).toBe(0);
    const manifest = readFileSync(join(dir, 'dist/manifest.json'));
    writeFiles(join(dir, 'tmp/x/rel-drop/build'), moduleFiles('1.1.0'));
    const r = await runCli(['publish', '--source', 'tmp/x/rel-drop/build/', '--version', '1.0.0'], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/Missing the module's namespace \(.*rel-drop\/build is not in the drop layout .*\): pass --namespace, --name and --provider/);
    expect(readFileSync(join(dir, 'dist/manifest.json')).equals(manifest)).toBe(true);
  });

  it('refuses a mirror that does not exist unless --new-mirror says to start one', async () => {
    const dir = tempDir();
    writeFiles(join(dir, 'rel/acme/a/aws/1.0.0'), moduleFiles('1.0.0'));
    const typo = await runCli(['publish', '--source', 'rel/acme/a/aws/1.0.0', '--mirror', 'mirorr/dist'], dir);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/There is no mirror at .*mirorr\/dist\.[\s\S]*--new-mirror/);
    expect(existsSync(join(dir, 'mirorr'))).toBe(false);
    const first = await runCli(['publish', '--source', 'rel/acme/a/aws/1.0.0', '--mirror', 'mirror/dist', '--new-mirror'], dir);
    expect(first.code, first.stderr).toBe(0);
    expect(Object.keys(mirrorManifest(join(dir, 'mirror/dist')).modules)).toEqual(['acme/a/aws']);
  });
});
