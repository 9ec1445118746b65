// removeModuleVersions: what a removal keeps on record and leaves behind,
// and what the record then holds the mirror to: a removed version comes back
// (a build of the same sources) only with the bytes it had.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { removeModuleVersions } from '../../src/publish/remove.js';
import { runCli, tempDir, writeFiles, mirrorManifest } from '../helpers.js';

const manifest = (dir: string) => mirrorManifest(join(dir, 'dist'));

async function mirror() {
  const dir = tempDir('mm-remove-');
  writeFiles(dir, {
    'mirror.config.yaml': 'sources:\n  - folder: mods\n',
    'mods/acme/net/aws/1.0.0/main.tf': 'variable "a" {}\n',
    'mods/acme/net/aws/1.1.0/main.tf': 'variable "b" {}\n',
    'mods/acme/net/google/1.0.0/main.tf': 'variable "g" {}\n',
  });
  expect((await runCli(['build', '--json'], dir)).code).toBe(0);
  return dir;
}

describe('removeModuleVersions', () => {
  it('removes one version on record, rewrites the module without it, and a rebuild may bring back only the same bytes', async () => {
    const dir = await mirror();
    const sha = manifest(dir).modules['acme/net/aws'].versions.find((v: { version: string }) => v.version === '1.1.0').sha256;
    const result = await removeModuleVersions(
      { namespace: 'acme', name: 'net', provider: 'aws', version: '1.1.0' },
      { outDir: join(dir, 'dist'), imageHosts: [], by: 'user:alice' },
    );
    expect(result.removed).toEqual(['acme/net/aws@1.1.0']);
    const after = manifest(dir);
    expect(after.modules['acme/net/aws'].versions.map((v: { version: string }) => v.version)).toEqual(['1.0.0']);
    expect(after.removed).toEqual([{ module: 'acme/net/aws', version: '1.1.0', sha256: sha, at: expect.any(String), by: 'user:alice' }]);
    expect(existsSync(join(dir, 'dist/v1/modules/acme/net/aws/1.1.0'))).toBe(false);
    expect(JSON.parse(readFileSync(join(dir, 'dist/v1/modules/acme/net/aws/index.json'), 'utf8')).versions).toEqual(['1.0.0']);
    expect((await runCli(['verify'], dir)).code).toBe(0);
    // The sources still have it, with the same bytes: a build may publish it again; the record stays.
    expect((await runCli(['build', '--json'], dir)).code).toBe(0);
    expect(manifest(dir).modules['acme/net/aws'].versions.map((v: { version: string }) => v.version)).toEqual(['1.1.0', '1.0.0']);
    expect(manifest(dir).removed).toHaveLength(1);
    // Other bytes under the removed number are refused, as a change to a published version is.
    await removeModuleVersions(
      { namespace: 'acme', name: 'net', provider: 'aws', version: '1.1.0' },
      { outDir: join(dir, 'dist'), imageHosts: [], by: 'user:alice' },
    );
    writeFiles(dir, { 'mods/acme/net/aws/1.1.0/main.tf': 'variable "other" {}\n' });
    const rebuilt = await runCli(['build', '--json'], dir);
    expect(rebuilt.code).toBe(1);
    expect(rebuilt.stderr).toMatch(/acme\/net\/aws 1\.1\.0: removed with sha256/);
  });

  it('removes every provider of a name, with its listings, and says NOT_FOUND for what the mirror lacks', async () => {
    const dir = await mirror();
    const result = await removeModuleVersions({ namespace: 'acme', name: 'net' }, { outDir: join(dir, 'dist'), imageHosts: [], by: 'organization:acme' });
    expect(result.removed.sort()).toEqual(['acme/net/aws@1.0.0', 'acme/net/aws@1.1.0', 'acme/net/google@1.0.0']);
    // Each module keeps its state, with no versions and the record of each removal.
    expect(manifest(dir).modules).toEqual({ 'acme/net/aws': { versions: [] }, 'acme/net/google': { versions: [] } });
    const state = JSON.parse(readFileSync(join(dir, 'dist/state/acme/net.google.json'), 'utf8'));
    expect(state).toMatchObject({ format: 3, module: 'acme/net/google', versions: [] });
    expect(state.removed).toEqual([
      { module: 'acme/net/google', version: '1.0.0', sha256: expect.any(String), at: expect.any(String), by: 'organization:acme' },
    ]);
    for (const gone of ['v1/modules/acme/net', 'v1/modules/acme/index.json', 'v2/modules/acme/net/aws'])
      expect(existsSync(join(dir, 'dist', gone)), gone).toBe(false);
    expect((await runCli(['verify'], dir)).code).toBe(0);
    await expect(removeModuleVersions({ namespace: 'acme', name: 'net' }, { outDir: join(dir, 'dist'), imageHosts: [], by: 'x' })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });

  it("keeps the namespace's folders and listing while another module of it has versions, though the write reads only the name's states", async () => {
    const dir = await mirror();
    writeFiles(dir, { 'mods/acme/other/aws/1.0.0/main.tf': 'variable "o" {}\n' });
    expect((await runCli(['build', '--json'], dir)).code).toBe(0);
    await removeModuleVersions({ namespace: 'acme', name: 'net' }, { outDir: join(dir, 'dist'), imageHosts: [], by: 'x' });
    expect(existsSync(join(dir, 'dist/v1/modules/acme/net'))).toBe(false);
    expect(JSON.parse(readFileSync(join(dir, 'dist/v1/modules/acme/index.json'), 'utf8')).modules.map((m: { id: string }) => m.id)).toEqual([
      'acme/other/aws/1.0.0',
    ]);
    expect(existsSync(join(dir, 'dist/v1/modules/acme/other/aws/1.0.0/download'))).toBe(true);
    expect((await runCli(['verify'], dir)).code).toBe(0);
  });
});
