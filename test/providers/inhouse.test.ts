// In-house providers through the CLI: a release folder marked `registry: true`
// becomes the provider registry protocol (providers.v1) as static files, its
// signature checked against the configured keys; an unsigned one is signed
// with the site's key; `verify` re-checks shasums and signatures. Bad input
// (unsigned without a key, an unlisted key, a shasum mismatch, a missing
// platform zip) is refused with the file named and nothing written.

import { appendFileSync, existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir, treeOf, writeFiles, mirrorManifest } from '../helpers.js';
import { testKey, signRelease, type TestKey } from './keys.js';
import { writeReleaseFolder, writeZip } from './zips.js';

let keysDir: string;
let acme: TestKey;
let stranger: TestKey;
let site: TestKey;

beforeAll(async () => {
  keysDir = tempDir('mm-keys-');
  [acme, stranger, site] = await Promise.all([testKey(keysDir, 'Acme Release'), testKey(keysDir, 'Stranger'), testKey(keysDir, 'Site Signing')]);
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
  it('emits discovery, versions and download documents with URLs under the baseUrl, the SHA256SUMS and its signature', async () => {
    const dir = tempDir('mm-inhouse-');
    await signedInputs(dir);
    const r = await runCli(['build', '--json'], dir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const dist = join(dir, 'dist');
    expect(json(join(dist, '.well-known/terraform.json'))).toEqual({
      'modules.v1': 'https://registry.example.com/v1/modules/',
      'providers.v1': 'https://registry.example.com/v1/providers/',
    });
    expect(json(join(dist, 'v1/providers/acme/widgets/versions'))).toEqual({
      versions: [
        {
          version: '1.2.0',
          protocols: ['5.0'],
          platforms: [
            { os: 'darwin', arch: 'arm64' },
            { os: 'linux', arch: 'amd64' },
          ],
        },
      ],
    });
    const download = json(join(dist, 'v1/providers/acme/widgets/1.2.0/download/linux/amd64'));
    const sums = readFileSync(join(dir, 'releases/terraform-provider-widgets_1.2.0_SHA256SUMS'), 'utf8');
    const shasum = /^([0-9a-f]{64}) {2}terraform-provider-widgets_1.2.0_linux_amd64.zip$/m.exec(sums)![1];
    expect(download).toEqual({
      protocols: ['5.0'],
      os: 'linux',
      arch: 'amd64',
      filename: 'terraform-provider-widgets_1.2.0_linux_amd64.zip',
      // Absolute under the baseUrl, as module locations are (Renovate's lock file update refuses relative URLs).
      download_url: 'https://registry.example.com/providers/registry.example.com/acme/widgets/terraform-provider-widgets_1.2.0_linux_amd64.zip',
      shasums_url: 'https://registry.example.com/providers/registry.example.com/acme/widgets/terraform-provider-widgets_1.2.0_SHA256SUMS',
      shasums_signature_url: 'https://registry.example.com/providers/registry.example.com/acme/widgets/terraform-provider-widgets_1.2.0_SHA256SUMS.sig',
      shasum,
      signing_keys: { gpg_public_keys: [{ key_id: acme.keyId, ascii_armor: readFileSync(acme.publicFile, 'utf8').trim() + '\n' }] },
    });
    // Resolved as Terraform resolves them (against the document's URL), each names a file of the tree.
    const docUrl = 'https://registry.example.com/v1/providers/acme/widgets/1.2.0/download/linux/amd64';
    for (const field of ['download_url', 'shasums_url', 'shasums_signature_url']) {
      expect(existsSync(join(dist, new URL(download[field], docUrl).pathname))).toBe(true);
    }
    // The signature is the release's own, byte for byte; the in-house provider is in the network mirror under the mirror's host.
    expect(
      readFileSync(join(dist, 'providers/registry.example.com/acme/widgets/terraform-provider-widgets_1.2.0_SHA256SUMS.sig')).equals(
        readFileSync(join(dir, 'releases/terraform-provider-widgets_1.2.0_SHA256SUMS.sig')),
      ),
    ).toBe(true);
    expect(Object.keys(json(join(dist, 'providers/registry.example.com/acme/widgets/1.2.0.json')).archives)).toEqual(['darwin_arm64', 'linux_amd64']);
    expect(mirrorManifest(dist).providers['registry.example.com/acme/widgets'].versions[0].registry).toMatchObject({
      protocols: ['5.0'],
      key_id: acme.keyId,
    });
    expect(json(join(dist, 'providers-index.json')).providers[0]).toMatchObject({ registry: true, versions: [{ version: '1.2.0', key_id: acme.keyId }] });
    expect((await runCli(['verify', '--mirror', 'dist'], dir)).code).toBe(0);
    // Static hosts: _headers types the documents (no extension) and the release files; Caddy's block matches them.
    expect((await runCli(['hosting', 'headers', '--mirror', dist], dir)).code).toBe(0);
    const headers = readFileSync(join(dist, '_headers'), 'utf8');
    expect(headers).toContain('\n/v1/providers/acme/widgets/versions\n  Content-Type: application/json\n');
    expect(headers).toContain('\n/v1/providers/acme/widgets/1.2.0/download/darwin/arm64\n  Content-Type: application/json\n');
    expect(headers).toContain(
      '\n/providers/registry.example.com/acme/widgets/terraform-provider-widgets_1.2.0_SHA256SUMS\n  Content-Type: text/plain; charset=utf-8\n  Cache-Control: public, max-age=31536000, immutable\n',
    );
    expect(headers).toContain(
      '\n/providers/registry.example.com/acme/widgets/terraform-provider-widgets_1.2.0_SHA256SUMS.sig\n  Content-Type: application/pgp-signature\n',
    );
    const caddy = await runCli(['hosting', 'caddy', '--mirror', 'dist'], dir);
    expect(caddy.stdout).toContain('\t@release_signature path *_SHA256SUMS.sig\n\theader @release_signature Content-Type application/pgp-signature\n');
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
    expect((await runCli(['verify', '--mirror', 'dist'], dir)).code).toBe(0);
    // Nothing new to sign: a rebuild needs no passphrase (the key's public half is read without it).
    writeFiles(dir, { 'mirror.config.yaml': CONFIG(`signing:\n  key: ${site.privateFile}\n  passphraseEnv: SITE_PASS\n`) + '# touched again\n' });
    const unattended = await runCli(['build'], dir);
    expect(unattended.stderr).toBe('');
    expect(unattended.code).toBe(0);
    expect(readFileSync(sig).equals(first)).toBe(true);
    // Without the passphrase the key cannot sign: said so, naming the variable.
    await writeReleaseFolder(join(dir, 'releases'), 'widgets', '1.2.0', ['linux_amd64']);
    const locked = await runCli(['build'], dir);
    expect(locked.code).toBe(1);
    expect(locked.stderr).toContain(`${site.privateFile}: the signing key is protected by a passphrase, and none is set (set SITE_PASS)`);
    expect(locked.stderr).toContain("hint: Put the signing key's passphrase in the environment variable SITE_PASS");
    expect(locked.stderr).not.toContain('gpg --detach-sign');
  }, 60_000);

  it('stays listed, and discovery keeps providers.v1, when a module version is deprecated', async () => {
    const dir = tempDir('mm-inhouse-');
    await signedInputs(dir);
    writeFiles(dir, { 'mirror.config.yaml': `sources:\n  - folder: mods\n${CONFIG()}`, 'mods/acme/net/aws/1.0.0/main.tf': 'variable "x" {}\n' });
    expect((await runCli(['build'], dir)).code).toBe(0);
    const r = await runCli(['deprecate', 'acme/net/aws', '1.0.0', '--reason', 'use 2.x', '--mirror', 'dist'], dir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(Object.keys(mirrorManifest(join(dir, 'dist')).providers)).toEqual(['registry.example.com/acme/widgets']);
    expect(json(join(dir, 'dist/.well-known/terraform.json'))['providers.v1']).toBe('https://registry.example.com/v1/providers/');
    expect((await runCli(['verify', '--mirror', 'dist'], dir)).code).toBe(0);
  }, 60_000);

  it('keeps a release signed while its key was valid after the key expires, and verify warns about the key', async () => {
    const dir = tempDir('mm-inhouse-');
    const day = 86_400_000;
    // A key made on 2024-01-01 that expired five days later (test/fixtures/keys); the release was signed two days in.
    const old = await testKey(dir, 'Old Release');
    writeFiles(dir, { 'mirror.config.yaml': CONFIG().replace(`${keysDir}/acme-release.pub.asc`, old.publicFile) });
    await writeReleaseFolder(join(dir, 'releases'), 'widgets', '0.9.0', ['linux_amd64']);
    await signRelease(join(dir, 'releases'), 'widgets', '0.9.0', old, { date: new Date(old.created.getTime() + 2 * day) });
    const built = await runCli(['build'], dir);
    expect(built.stderr).toBe('');
    expect(built.code).toBe(0);
    const verify = await runCli(['verify', '--mirror', 'dist', '--json'], dir);
    expect(verify.code).toBe(0);
    expect(JSON.parse(verify.stdout).warnings).toEqual([
      expect.stringMatching(new RegExp(`^v1/providers/acme/widgets/0\\.9\\.0/download/linux/amd64: signing key ${old.keyId} expired on \\d{4}-`)),
    ]);
    expect((await runCli(['verify', '--mirror', 'dist'], dir)).stderr).toContain(
      `warning: dist/v1/providers/acme/widgets/0.9.0/download/linux/amd64: signing key ${old.keyId} expired on`,
    );
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
        await writeZip(join(dir, 'releases/terraform-provider-widgets_1.2.0_linux_amd64.zip'), [
          { name: 'terraform-provider-widgets_v1.2.0', content: 'tampered' },
        ]);
        return `${join(dir, 'releases/terraform-provider-widgets_1.2.0_SHA256SUMS')}: lists sha256`;
      },
    ],
    [
      'a SHA256SUMS changed after it was signed',
      async (dir) => {
        appendFileSync(join(dir, 'releases/terraform-provider-widgets_1.2.0_SHA256SUMS'), `${'0'.repeat(64)}  terraform-provider-widgets_1.2.0_extra.txt\n`);
        return `${join(dir, 'releases/terraform-provider-widgets_1.2.0_SHA256SUMS.sig')}: error checking signature:`;
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

describe('in-house providers: key create', () => {
  it('makes a locked key pair that signs a release the mirror then serves; never overwrites one; needs the passphrase', async () => {
    const dir = tempDir('mm-inhouse-key-');
    const env = { MODMIRROR_SIGNING_PASSPHRASE: 'correct horse' };
    const made = await runCli(['key', 'create', '--name', 'Acme Release', '--email', 'release@acme.example', '--out', 'keys'], dir, env);
    expect(made.stderr).toBe('');
    expect(made.code).toBe(0);
    const keyId = /Key ID ([0-9A-F]{16})/.exec(made.stdout)![1];
    expect(statSync(join(dir, 'keys/acme-release.key.asc')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, 'keys/acme-release.key.asc'), 'utf8')).toContain('BEGIN PGP PRIVATE KEY BLOCK');
    writeFiles(dir, {
      'mirror.config.yaml': `baseUrl: https://registry.example.com/\nproviders:\n  - folder: releases\n    namespace: acme\n    registry: true\n    keys: [keys/acme-release.pub.asc]\nsigning:\n  key: keys/acme-release.key.asc\n`,
    });
    await writeReleaseFolder(join(dir, 'releases'), 'widgets', '1.0.0', ['linux_amd64']);
    const built = await runCli(['build'], dir, env);
    expect(built.stderr).toBe('');
    expect(json(join(dir, 'dist/v1/providers/acme/widgets/1.0.0/download/linux/amd64')).signing_keys.gpg_public_keys[0].key_id).toBe(keyId);
    expect((await runCli(['verify', '--mirror', 'dist'], dir)).code).toBe(0);
    await writeReleaseFolder(join(dir, 'releases'), 'widgets', '1.1.0', ['linux_amd64']);
    const wrong = await runCli(['build'], dir, { MODMIRROR_SIGNING_PASSPHRASE: 'wrong' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('keys/acme-release.key.asc: cannot unlock the signing key');

    const again = await runCli(['key', 'create', '--name', 'Acme Release', '--out', 'keys'], dir, env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('acme-release.pub.asc already exists; nothing was written');
    const unlocked = await runCli(['key', 'create', '--name', 'Other', '--out', 'keys'], dir);
    expect(unlocked.code).toBe(2);
    expect(unlocked.stderr).toContain('Set MODMIRROR_SIGNING_PASSPHRASE to the passphrase that will lock the private key.');
  }, 120_000);
});

describe('in-house providers: publish --provider-release', () => {
  const publishArgs = (release: string, ...extra: string[]) => [
    'publish',
    '--provider-release',
    release,
    '--namespace',
    'acme',
    '--type',
    'widgets',
    '--hostname',
    'registry.example.com',
    '--mirror',
    'dist',
    '--new-mirror',
    ...extra,
  ];

  it('adds a signed release to a mirror atomically; the same release again is a no-op; other bytes for it are refused; rotation keeps old versions signed by the old key', async () => {
    const dir = tempDir('mm-inhouse-pub-');
    const release = join(dir, 'goreleaser/dist');
    await writeReleaseFolder(release, 'widgets', '1.0.0', ['linux_amd64', 'darwin_arm64']);
    await signRelease(release, 'widgets', '1.0.0', acme);

    const dry = await runCli([...publishArgs(release, '--public-key', acme.publicFile), '--dry-run', '--json'], dir);
    expect(dry.stderr).toBe('');
    expect(JSON.parse(dry.stdout)).toMatchObject({
      outcome: 'would-publish',
      dryRun: true,
      changed: expect.arrayContaining(['v1/providers/acme/widgets/versions', 'v1/providers/acme/widgets/1.0.0/download/linux/amd64']),
    });
    expect(existsSync(join(dir, 'dist'))).toBe(false);

    const first = await runCli([...publishArgs(release, '--public-key', acme.publicFile), '--json'], dir);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({
      provider: 'registry.example.com/acme/widgets',
      version: '1.0.0',
      platforms: ['darwin_arm64', 'linux_amd64'],
      keyId: acme.keyId,
      signedHere: false,
      outcome: 'published',
    });
    expect(json(join(dir, 'dist/.well-known/terraform.json'))['providers.v1']).toBe('/v1/providers/');
    expect((await runCli(['verify', '--mirror', 'dist'], dir)).code).toBe(0);
    const before = treeOf(join(dir, 'dist'));

    // A pipeline retried: the same bytes, exit 0, nothing written.
    const again = await runCli([...publishArgs(release, '--public-key', acme.publicFile), '--json'], dir);
    expect(JSON.parse(again.stdout)).toMatchObject({ outcome: 'unchanged' });
    expect(treeOf(join(dir, 'dist'))).toEqual(before);

    // Other bytes under the same version: refused, both sha256 shown.
    const rebuilt = join(dir, 'rebuilt');
    await writeReleaseFolder(rebuilt, 'widgets', '1.0.0', ['linux_amd64', 'darwin_arm64']);
    await writeZip(join(rebuilt, 'terraform-provider-widgets_1.0.0_linux_amd64.zip'), [{ name: 'terraform-provider-widgets_v1.0.0', content: 'rebuilt' }]);
    writeFiles(rebuilt, {
      'terraform-provider-widgets_1.0.0_SHA256SUMS': (await import('node:child_process')).execFileSync(
        'sha256sum',
        ['terraform-provider-widgets_1.0.0_linux_amd64.zip', 'terraform-provider-widgets_1.0.0_darwin_arm64.zip'],
        { cwd: rebuilt, encoding: 'utf8' },
      ),
    });
    await signRelease(rebuilt, 'widgets', '1.0.0', acme);
    const conflict = await runCli(publishArgs(rebuilt, '--public-key', acme.publicFile), dir);
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toContain('registry.example.com/acme/widgets 1.0.0 is already published with different content');
    expect(conflict.stderr).toMatch(/linux_amd64: published sha256 [0-9a-f]{64}, this one [0-9a-f]{64}/);
    expect(treeOf(join(dir, 'dist'))).toEqual(before);

    // Rotation: 2.0.0 signed by a new key; 1.0.0 keeps listing (and being signed by) the old one.
    const next = join(dir, 'next');
    await writeReleaseFolder(next, 'widgets', '2.0.0', ['linux_amd64']);
    await signRelease(next, 'widgets', '2.0.0', site);
    expect((await runCli(publishArgs(next, '--public-key', acme.publicFile, '--public-key', site.publicFile), dir)).code).toBe(0);
    expect(json(join(dir, 'dist/v1/providers/acme/widgets/2.0.0/download/linux/amd64')).signing_keys.gpg_public_keys[0].key_id).toBe(site.keyId);
    expect(json(join(dir, 'dist/v1/providers/acme/widgets/1.0.0/download/linux/amd64')).signing_keys.gpg_public_keys[0].key_id).toBe(acme.keyId);
    expect(json(join(dir, 'dist/v1/providers/acme/widgets/versions')).versions.map((v: { version: string }) => v.version)).toEqual(['2.0.0', '1.0.0']);
    expect((await runCli(['verify', '--mirror', 'dist'], dir)).code).toBe(0);

    // A build keeps what is published: a version published from a folder the config does not list stays, whole and signed as it was.
    const published = treeOf(join(dir, 'dist/providers/registry.example.com/acme/widgets'));
    writeFiles(dir, { 'mirror.config.yaml': CONFIG() });
    await writeReleaseFolder(join(dir, 'releases'), 'widgets', '1.0.0', ['linux_amd64', 'darwin_arm64']);
    await signRelease(join(dir, 'releases'), 'widgets', '1.0.0', acme);
    const build = await runCli(['build', '--config', 'mirror.config.yaml', '--mirror', 'dist'], dir);
    expect(build.code).toBe(0);
    expect(build.stderr).toMatch(/keeping 1 published version the sources no longer have .*: registry\.example\.com\/acme\/widgets@2\.0\.0/);
    expect(treeOf(join(dir, 'dist/providers/registry.example.com/acme/widgets'))).toEqual(published);
    expect(json(join(dir, 'dist/v1/providers/acme/widgets/2.0.0/download/linux/amd64')).signing_keys.gpg_public_keys[0].key_id).toBe(site.keyId);
    expect(json(join(dir, 'dist/v1/providers/acme/widgets/versions')).versions.map((v: { version: string }) => v.version)).toEqual(['2.0.0', '1.0.0']);
    expect((await runCli(['verify', '--mirror', 'dist'], dir)).code).toBe(0);
  }, 90_000);

  it('keeps the host name the first release named, so later releases, module writes and builds need not repeat it', async () => {
    const dir = tempDir('mm-inhouse-host-');
    const releaseOf = async (version: string) => {
      const release = join(dir, `release-${version}`);
      await writeReleaseFolder(release, 'widgets', version, ['linux_amd64']);
      await signRelease(release, 'widgets', version, acme);
      return release;
    };
    const later = (release: string) =>
      runCli(
        ['publish', '--provider-release', release, '--namespace', 'acme', '--type', 'widgets', '--public-key', acme.publicFile, '--mirror', 'dist', '--json'],
        dir,
      );

    // A mirror without a base URL, and no host name given: refused, saying how to give one.
    const nameless = await runCli(
      ['publish', '--provider-release', await releaseOf('0.9.0'), '--namespace', 'acme', '--type', 'widgets', '--public-key', acme.publicFile, '--new-mirror'],
      dir,
    );
    expect(nameless.code).toBe(2);
    expect(nameless.stderr).toContain('--hostname registry.example.com');
    expect(existsSync(join(dir, 'dist'))).toBe(false);

    expect((await runCli([...publishArgs(await releaseOf('1.0.0'), '--public-key', acme.publicFile)], dir)).code).toBe(0);
    expect(mirrorManifest(join(dir, 'dist')).providers_hostname).toBe('registry.example.com');
    const next = await later(await releaseOf('1.1.0'));
    expect(next.stderr).toBe('');
    expect(JSON.parse(next.stdout)).toMatchObject({ provider: 'registry.example.com/acme/widgets', version: '1.1.0', outcome: 'published' });

    // A module publish and a build rewrite the manifest: both keep the host name.
    writeFiles(dir, { 'mods/acme/net/aws/1.0.0/main.tf': 'variable "x" {}\n' });
    expect((await runCli(['publish', '--source', 'mods/acme/net/aws/1.0.0', '--mirror', 'dist'], dir)).code).toBe(0);
    expect(mirrorManifest(join(dir, 'dist')).providers_hostname).toBe('registry.example.com');
    const build = await runCli(['build', '--modules', 'mods', '--mirror', 'dist'], dir);
    expect(build.code, build.stderr).toBe(0);
    expect(mirrorManifest(join(dir, 'dist')).providers_hostname).toBe('registry.example.com');
    expect(JSON.parse((await later(await releaseOf('1.2.0'))).stdout)).toMatchObject({ provider: 'registry.example.com/acme/widgets', outcome: 'published' });
    expect(json(join(dir, 'dist/v1/providers/acme/widgets/versions')).versions.map((v: { version: string }) => v.version)).toEqual(['1.2.0', '1.1.0', '1.0.0']);
    expect((await runCli(['verify', '--mirror', 'dist'], dir)).code).toBe(0);
  }, 90_000);

  it('signs an unsigned release with --signing-key, the passphrase from the environment', async () => {
    const dir = tempDir('mm-inhouse-pub-');
    const release = join(dir, 'release');
    await writeReleaseFolder(release, 'widgets', '0.1.0', ['linux_amd64']);
    const r = await runCli([...publishArgs(release, '--signing-key', site.privateFile), '--json'], dir, { MODMIRROR_SIGNING_PASSPHRASE: site.passphrase });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toMatchObject({ keyId: site.keyId, signedHere: true, outcome: 'published' });
    expect(existsSync(join(release, 'terraform-provider-widgets_0.1.0_SHA256SUMS.sig'))).toBe(false);
    expect((await runCli(['verify', '--mirror', 'dist'], dir)).code).toBe(0);
  }, 60_000);

  const refusals: [string, (release: string) => Promise<string>][] = [
    [
      'an unsigned release without a signing key',
      async (release) => `${join(release, 'terraform-provider-widgets_1.2.0_SHA256SUMS')}: the release is unsigned`,
    ],
    [
      'a signature by a key it was not given',
      async (release) => {
        await signRelease(release, 'widgets', '1.2.0', stranger);
        return `${join(release, 'terraform-provider-widgets_1.2.0_SHA256SUMS.sig')}: authentication signature from unknown issuer`;
      },
    ],
    [
      'a zip that does not match SHA256SUMS',
      async (release) => {
        await signRelease(release, 'widgets', '1.2.0', acme);
        await writeZip(join(release, 'terraform-provider-widgets_1.2.0_darwin_arm64.zip'), [{ name: 'x', content: 'tampered' }]);
        return `${join(release, 'terraform-provider-widgets_1.2.0_SHA256SUMS')}: lists sha256`;
      },
    ],
    [
      'a SHA256SUMS changed after it was signed',
      async (release) => {
        await signRelease(release, 'widgets', '1.2.0', acme);
        appendFileSync(join(release, 'terraform-provider-widgets_1.2.0_SHA256SUMS'), `${'0'.repeat(64)}  terraform-provider-widgets_1.2.0_extra.txt\n`);
        return `${join(release, 'terraform-provider-widgets_1.2.0_SHA256SUMS.sig')}: error checking signature:`;
      },
    ],
    [
      'a missing platform zip',
      async (release) => {
        await signRelease(release, 'widgets', '1.2.0', acme);
        rmSync(join(release, 'terraform-provider-widgets_1.2.0_linux_amd64.zip'));
        return `${join(release, 'terraform-provider-widgets_1.2.0_SHA256SUMS')}: lists terraform-provider-widgets_1.2.0_linux_amd64.zip, which is not in ${release}`;
      },
    ],
  ];
  for (const [what, spoil] of refusals) {
    it(`refuses ${what}, naming the file, exit 1, nothing written`, async () => {
      const dir = tempDir('mm-inhouse-pub-');
      const release = join(dir, 'release');
      await writeReleaseFolder(release, 'widgets', '1.2.0', ['linux_amd64', 'darwin_arm64']);
      const expected = await spoil(release);
      const r = await runCli(publishArgs(release, '--public-key', acme.publicFile), dir);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(expected);
      expect(existsSync(join(dir, 'dist'))).toBe(false);
    }, 60_000);
  }
});
