// In-house providers through the CLI: a release folder marked `registry: true`
// becomes the provider registry protocol (providers.v1) as static files, its
// signature checked against the configured keys; an unsigned one is signed
// with the site's key; `verify` re-checks shasums and signatures. Bad input
// (unsigned without a key, an unlisted key, a shasum mismatch, a missing
// platform zip) is refused with the file named and nothing written.

import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir, treeOf, writeFiles } from '../helpers.js';
import { makeKey, signRelease, type TestKey } from './keys.js';
import { writeReleaseFolder, writeZip } from './zips.js';

let keysDir: string;
let acme: TestKey;
let stranger: TestKey;
let site: TestKey;

beforeAll(async () => {
  keysDir = tempDir('mm-keys-');
  [acme, stranger, site] = await Promise.all([makeKey(keysDir, 'Acme Release'), makeKey(keysDir, 'Stranger'), makeKey(keysDir, 'Site Signing')]);
}, 60_000);

const CONFIG = (extra = '') =>
  `baseUrl: https://registry.example.com/\nproviders:\n  - folder: releases\n    namespace: acme\n    registry: true\n    keys: [${keysDir}/acme-release.pub.asc]\nplatforms: [linux_amd64, darwin_arm64]\n${extra}`;

async function signedInputs(dir: string, version = '1.2.0', key: TestKey = acme) {
  writeFiles(dir, { 'mirror.config.yaml': CONFIG() });
  await writeReleaseFolder(join(dir, 'releases'), 'widgets', version, ['linux_amd64', 'darwin_arm64']);
  await signRelease(join(dir, 'releases'), 'widgets', version, key);
}

const json = (file: string) => JSON.parse(readFileSync(file, 'utf8'));

describe('in-house providers: build', () => {
  it('emits discovery, versions and download documents with relative URLs, the SHA256SUMS and its signature', async () => {
    const dir = tempDir('mm-inhouse-');
    await signedInputs(dir);
    const r = await runCli(['build', '--json'], dir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const dist = join(dir, 'dist');
    expect(json(join(dist, '.well-known/terraform.json'))).toEqual({ 'modules.v1': 'https://registry.example.com/v1/modules/', 'providers.v1': 'https://registry.example.com/v1/providers/' });
    expect(json(join(dist, 'v1/providers/acme/widgets/versions'))).toEqual({
      versions: [{ version: '1.2.0', protocols: ['5.0'], platforms: [{ os: 'darwin', arch: 'arm64' }, { os: 'linux', arch: 'amd64' }] }],
    });
    const download = json(join(dist, 'v1/providers/acme/widgets/1.2.0/download/linux/amd64'));
    const sums = readFileSync(join(dir, 'releases/terraform-provider-widgets_1.2.0_SHA256SUMS'), 'utf8');
    const shasum = /^([0-9a-f]{64})  terraform-provider-widgets_1.2.0_linux_amd64.zip$/m.exec(sums)![1];
    expect(download).toEqual({
      protocols: ['5.0'],
      os: 'linux',
      arch: 'amd64',
      filename: 'terraform-provider-widgets_1.2.0_linux_amd64.zip',
      download_url: '../../../../../../../providers/registry.example.com/acme/widgets/terraform-provider-widgets_1.2.0_linux_amd64.zip',
      shasums_url: '../../../../../../../providers/registry.example.com/acme/widgets/terraform-provider-widgets_1.2.0_SHA256SUMS',
      shasums_signature_url: '../../../../../../../providers/registry.example.com/acme/widgets/terraform-provider-widgets_1.2.0_SHA256SUMS.sig',
      shasum,
      signing_keys: { gpg_public_keys: [{ key_id: acme.keyId, ascii_armor: readFileSync(acme.publicFile, 'utf8').trim() + '\n' }] },
    });
    // Resolved as Terraform resolves them (against the document's URL), each names a file of the tree.
    const docUrl = 'https://registry.example.com/v1/providers/acme/widgets/1.2.0/download/linux/amd64';
    for (const field of ['download_url', 'shasums_url', 'shasums_signature_url']) {
      expect(existsSync(join(dist, new URL(download[field], docUrl).pathname))).toBe(true);
    }
    // The signature is the release's own, byte for byte; the in-house provider is in the network mirror under the mirror's host.
    expect(readFileSync(join(dist, 'providers/registry.example.com/acme/widgets/terraform-provider-widgets_1.2.0_SHA256SUMS.sig')).equals(readFileSync(join(dir, 'releases/terraform-provider-widgets_1.2.0_SHA256SUMS.sig')))).toBe(true);
    expect(Object.keys(json(join(dist, 'providers/registry.example.com/acme/widgets/1.2.0.json')).archives)).toEqual(['darwin_arm64', 'linux_amd64']);
    expect(json(join(dist, 'manifest.json')).providers['registry.example.com/acme/widgets'].versions[0].registry).toMatchObject({ protocols: ['5.0'], key_id: acme.keyId });
    expect(json(join(dist, 'providers-index.json')).providers[0]).toMatchObject({ registry: true, versions: [{ version: '1.2.0', key_id: acme.keyId }] });
    expect((await runCli(['verify', 'dist'], dir)).code).toBe(0);
  }, 60_000);

  it('signs an unsigned release with the configured key (passphrase from the environment), and keeps that signature on rebuilds', async () => {
    const dir = tempDir('mm-inhouse-');
    writeFiles(dir, { 'mirror.config.yaml': CONFIG(`signing:\n  key: ${site.privateFile}\n  passphraseEnv: SITE_PASS\n`) });
    await writeReleaseFolder(join(dir, 'releases'), 'widgets', '1.0.0', ['linux_amd64']);
    const env = { SITE_PASS: site.passphrase };
    const r = await runCli(['build'], dir, env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const sig = join(dir, 'dist/providers/registry.example.com/acme/widgets/terraform-provider-widgets_1.0.0_SHA256SUMS.sig');
    const download = json(join(dir, 'dist/v1/providers/acme/widgets/1.0.0/download/linux/amd64'));
    expect(download.signing_keys.gpg_public_keys[0].key_id).toBe(site.keyId);
    // The private key and its passphrase are nowhere in the mirror.
    const tree = treeOf(join(dir, 'dist'));
    const privateArmor = readFileSync(site.privateFile, 'utf8');
    for (const [file, content] of Object.entries(tree)) {
      expect(content.includes('PRIVATE KEY'), file).toBe(false);
      expect(content.includes(site.passphrase), file).toBe(false);
    }
    expect(Object.values(tree).some((c) => c.includes(privateArmor.slice(100, 200)))).toBe(false);
    // The release folder is not written to.
    expect(existsSync(join(dir, 'releases/terraform-provider-widgets_1.0.0_SHA256SUMS.sig'))).toBe(false);
    const first = readFileSync(sig);
    writeFiles(dir, { 'mirror.config.yaml': CONFIG(`signing:\n  key: ${site.privateFile}\n  passphraseEnv: SITE_PASS\n`) + '# touched\n' });
    await writeReleaseFolder(join(dir, 'releases'), 'widgets', '1.1.0', ['linux_amd64']);
    expect((await runCli(['build'], dir, env)).code).toBe(0);
    expect(readFileSync(sig).equals(first)).toBe(true);
    expect((await runCli(['verify', 'dist'], dir)).code).toBe(0);
    // Without the passphrase the key cannot sign: said so, naming the variable.
    await writeReleaseFolder(join(dir, 'releases'), 'widgets', '1.2.0', ['linux_amd64']);
    const locked = await runCli(['build'], dir);
    expect(locked.code).toBe(1);
    expect(locked.stderr).toContain(`${site.privateFile}: the signing key is protected by a passphrase, and none is set (set SITE_PASS)`);
  }, 60_000);

  const refusals: [string, (dir: string) => Promise<string>][] = [
    [
      'an unsigned release without a signing key',
      async (dir) => {
        rmSync(join(dir, 'releases/terraform-provider-widgets_1.2.0_SHA256SUMS.sig'));
        return `${join(dir, 'releases/terraform-provider-widgets_1.2.0_SHA256SUMS')}: the release is unsigned`;
      },
    ],
    [
      'a signature by a key the config does not list',
      async (dir) => {
        await signRelease(join(dir, 'releases'), 'widgets', '1.2.0', stranger);
        return `${join(dir, 'releases/terraform-provider-widgets_1.2.0_SHA256SUMS.sig')}: authentication signature from unknown issuer (signed by ${stranger.keyId}`;
      },
    ],
    [
      'a zip that does not match its SHA256SUMS line',
      async (dir) => {
        await writeZip(join(dir, 'releases/terraform-provider-widgets_1.2.0_linux_amd64.zip'), [{ name: 'terraform-provider-widgets_v1.2.0', content: 'tampered' }]);
        return `${join(dir, 'releases/terraform-provider-widgets_1.2.0_SHA256SUMS')}: lists sha256`;
      },
    ],
    [
      'a platform zip SHA256SUMS lists but the folder lacks',
      async (dir) => {
        rmSync(join(dir, 'releases/terraform-provider-widgets_1.2.0_darwin_arm64.zip'));
        return `${join(dir, 'releases/terraform-provider-widgets_1.2.0_SHA256SUMS')}: lists terraform-provider-widgets_1.2.0_darwin_arm64.zip, which is not in ${join(dir, 'releases')}`;
      },
    ],
  ];
  for (const [what, spoil] of refusals) {
    it(`refuses ${what}, naming the file; the mirror stays as it was`, async () => {
      const dir = tempDir('mm-inhouse-');
      await signedInputs(dir, '1.1.0');
      expect((await runCli(['build'], dir)).code).toBe(0);
      const before = treeOf(join(dir, 'dist'));
      await writeReleaseFolder(join(dir, 'releases'), 'widgets', '1.2.0', ['linux_amd64', 'darwin_arm64']);
      await signRelease(join(dir, 'releases'), 'widgets', '1.2.0', acme);
      const expected = await spoil(dir);
      const r = await runCli(['build'], dir);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(expected);
      expect(treeOf(join(dir, 'dist'))).toEqual(before);
    }, 60_000);
  }
});
