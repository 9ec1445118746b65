// Every write into a signed mirror keeps it signed: deprecate and publish
// --provider-release (--sign-key or the config's provenance: key), and serve's writes with the config's key
// (the management API's deprecation, upload and removal, and a version filled
// from an upstream); after each, gpg --verify accepts the truth it changed
// and verify --trust the whole mirror. A write without the key (an unsigned
// bundle's unbundle among them) is refused, naming the fix, and leaves the
// mirror as it was, still signed; a signed bundle's signatures are taken.

import { cpSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/serve/index.js';
import { gpg, type Gpg } from '../gpg.js';
import { ROOT, runCli, spawnKillable, spawnServe, tempDir, writeFiles, type ServeProcess } from '../helpers.js';
import { TOKENS } from '../management/helpers.js';
import { createBody, createVersionBody, moduleFiles, slug, upload } from '../management/registry-helpers.js';
import { startUpstream } from '../upstream/site.js';
import { signRelease, testKey } from '../providers/keys.js';
import { writeReleaseFolder } from '../providers/zips.js';

const dir = tempDir('mm-signed-writes-');
// A variable of this test's own: serve, spawned, inherits the environment.
const PASSPHRASE_ENV = 'MM_SIGNED_WRITES_PASSPHRASE';
const env = { [PASSPHRASE_ENV]: 'mirror signer' };
const TRUST = ['--trust', 'keys/mirror-signer.pub.asc'];
let g: Gpg;
let upstream: RunningServer;

const verifyTrust = () => runCli(['verify', '--mirror', 'dist', ...TRUST], dir);
const truth = () => ['manifest.json', 'state/acme/net.aws.json', 'state/acme/dns.aws.json'].map((rel) => readFileSync(join(dir, 'dist', rel), 'utf8'));
/** gpg's own check of a truth file's signature. */
const gpgVerify = (rel: string) => g.check(['--verify', join(dir, 'dist', `${rel}.asc`), join(dir, 'dist', rel)]).code;

async function expectSigned(...changed: string[]): Promise<void> {
  const verified = await verifyTrust();
  expect(verified.code, verified.stderr).toBe(0);
  for (const rel of ['manifest.json', ...changed]) expect(gpgVerify(rel), rel).toBe(0);
}

const upstreamConfig = () => `upstream:\n  url: ${upstream.url}\n`;
const config = (signed: boolean) =>
  `sources:\n  - folder: mods\n${upstreamConfig()}` + (signed ? `provenance:\n  key: keys/mirror-signer.key.asc\n  passphraseEnv: ${PASSPHRASE_ENV}\n` : '');

beforeAll(async () => {
  // The upstream also serves a signed provider release (providers.v1), as the public registry does.
  const releaseKey = await testKey(tempDir('mm-signed-writes-upstream-keys-'), 'Acme Release');
  await writeReleaseFolder(join(dir, 'upstream/releases'), 'gadgets', '1.0.0', ['linux_amd64']);
  await signRelease(join(dir, 'upstream/releases'), 'gadgets', '1.0.0', releaseKey);
  upstream = await startUpstream(join(dir, 'upstream'), {
    'mods/acme/far/aws/2.0.0/main.tf': 'variable "far" {}\n',
    'mirror.config.yaml': `sources:\n  - folder: mods\nproviders:\n  - folder: releases\n    namespace: acme\n    registry: true\n    hostname: registry.terraform.io\n    keys: [${releaseKey.publicFile}]\n`,
  });
  writeFiles(dir, {
    'mods/acme/net/aws/1.0.0/main.tf': 'variable "a" {}\n',
    'mods/acme/dns/aws/1.0.0/main.tf': 'variable "b" {}\n',
    'mods/acme/dns/aws/1.1.0/main.tf': 'variable "b2" {}\n',
  });
  writeFiles(dir, { 'mirror.config.yaml': config(true), 'unsigned.yaml': config(false) });
  const made = await runCli(['key', 'create', '--name', 'Mirror Signer', '--email', 'm@example.com', '--algorithm', 'curve25519', '--out', 'keys'], dir, {
    MODMIRROR_SIGNING_PASSPHRASE: env[PASSPHRASE_ENV],
  });
  expect(made.code, made.stderr).toBe(0);
  g = gpg();
  g.run(['--import', join(dir, 'keys/mirror-signer.pub.asc')]);
  // Signed by the config's provenance: key.
  const built = await runCli(['build'], dir, env);
  expect(built.code, built.stderr).toBe(0);
  await expectSigned('state/acme/net.aws.json');
  cpSync(join(ROOT, 'data'), join(dir, 'data'), { recursive: true, filter: (src) => !src.endsWith('downloads.json') });
});

afterAll(async () => {
  g?.close();
  await upstream?.close();
});

describe('the CLI’s writes into a signed mirror', () => {
  it('signs the state it changes, with --sign-key or the config’s provenance: key', async () => {
    const flagged = await runCli(
      ['deprecate', 'acme/net/aws', '1.0.0', '--reason', 'old', '--sign-key', 'keys/mirror-signer.key.asc', '--passphrase-env', PASSPHRASE_ENV],
      dir,
      env,
    );
    expect(flagged.code, flagged.stderr).toBe(0);
    await expectSigned('state/acme/net.aws.json');
    const undone = await runCli(['deprecate', 'acme/net/aws', '1.0.0', '--undo'], dir, env);
    expect(undone.code, undone.stderr).toBe(0);
    await expectSigned('state/acme/net.aws.json');
  });

  it('deprecate and build are refused without a key (exit 1), naming the fix; the mirror is left as it was', async () => {
    const before = truth();
    const refused = await runCli(['deprecate', 'acme/net/aws', '1.0.0', '--reason', 'old', '--config', 'unsigned.yaml'], dir);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /is signed \(manifest\.json\.asc\), and this write has no key to sign what it changes \(.*state\/acme\/net\.aws\.json.*--sign-key FILE or the config's provenance: key/,
    );
    // A build writes a new generation: without the key it would drop every signature.
    const rebuilt = await runCli(['build', '--clean', '--config', 'unsigned.yaml'], dir);
    expect(rebuilt.code).toBe(1);
    expect(rebuilt.stderr).toMatch(/is signed \(manifest\.json\.asc\), and this write has no key/);
    expect(truth()).toEqual(before);
    await expectSigned();
  });

  it('publish --provider-release signs the root it changes, and without a key is refused', async () => {
    mkdirSync(join(dir, 'release-keys'));
    const acme = await testKey(join(dir, 'release-keys'), 'Acme Release');
    const release = join(dir, 'release');
    await writeReleaseFolder(release, 'widgets', '1.0.0', ['linux_amd64']);
    await signRelease(release, 'widgets', '1.0.0', acme);
    const args = [
      'publish',
      '--provider-release',
      release,
      '--namespace',
      'acme',
      '--type',
      'widgets',
      '--public-key',
      acme.publicFile,
      '--hostname',
      'registry.example.com',
    ];
    const before = truth();
    const refused = await runCli([...args, '--config', 'unsigned.yaml'], dir);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/The mirror is signed \(manifest\.json\.asc\), and this write has no key to sign what it changes \(manifest\.json\)/);
    expect(truth()).toEqual(before);
    const published = await runCli(args, dir, env);
    expect(published.code, published.stderr).toBe(0);
    await expectSigned();
  });

  it('unbundle refuses a bundle whose truth is not signed; the mirror is left as it was', async () => {
    // The outside: this mirror without its signatures, and one version more.
    cpSync(join(dir, 'dist'), join(dir, 'outside'), { recursive: true, dereference: true, filter: (src) => !src.endsWith('.asc') });
    writeFiles(dir, { 'extra/main.tf': 'variable "e" {}\n' });
    const published = await runCli(
      [
        'publish',
        '--source',
        'extra',
        '--namespace',
        'acme',
        '--name',
        'net',
        '--provider',
        'aws',
        '--version',
        '3.0.0',
        '--mirror',
        'outside',
        '--config',
        'unsigned.yaml',
      ],
      dir,
    );
    expect(published.code, published.stderr).toBe(0);
    expect((await runCli(['bundle', '--mirror', 'outside', '--out', 'unsigned.tar.gz'], dir)).code).toBe(0);
    const before = truth();
    const refused = await runCli(['unbundle', 'unsigned.tar.gz', '--mirror', 'dist'], dir);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/The mirror is signed \(manifest\.json\.asc\), and this write has no key/);
    expect(truth()).toEqual(before);
    await expectSigned();

    // The same change made outside with the key: the bundle carries its signatures, and the mirror stays signed.
    cpSync(join(dir, 'dist'), join(dir, 'signed-outside'), { recursive: true, dereference: true });
    const signed = await runCli(
      ['publish', '--source', 'extra', '--namespace', 'acme', '--name', 'net', '--provider', 'aws', '--version', '3.0.0', '--mirror', 'signed-outside'],
      dir,
      env,
    );
    expect(signed.code, signed.stderr).toBe(0);
    expect((await runCli(['bundle', '--mirror', 'signed-outside', '--out', 'signed.tar.gz'], dir)).code).toBe(0);
    const taken = await runCli(['unbundle', 'signed.tar.gz', '--mirror', 'dist'], dir);
    expect(taken.code, taken.stderr).toBe(0);
    await expectSigned('state/acme/net.aws.json');
  });
});

describe('serve’s writes into a signed mirror', () => {
  /** serve of the mirror with `configFile`, its passphrase in its environment (spawned serve inherits this process's). */
  async function serving(configFile: string, fn: (s: ServeProcess) => Promise<void>): Promise<void> {
    process.env[PASSPHRASE_ENV] = env[PASSPHRASE_ENV];
    const s = await spawnServe(['--port', '0', '--data', 'data', '--config', configFile, '--quiet'], dir, /at (http:\/\/127\.0\.0\.1:\d+\/)/).finally(
      () => delete process.env[PASSPHRASE_ENV],
    );
    try {
      await fn(s);
    } finally {
      s.child.kill('SIGTERM');
      await s.exited;
    }
  }
  const api = async (s: ServeProcess, caller: keyof typeof TOKENS, method: string, path: string, body?: string) => {
    const res = await fetch(new URL(`api/v2/${path}`, s.url), {
      method,
      headers: { authorization: `Bearer ${TOKENS[caller]}`, 'content-type': 'application/vnd.api+json' },
      ...(body !== undefined ? { body } : {}),
    });
    const text = await res.text();
    return { status: res.status, text, json: text ? JSON.parse(text) : undefined };
  };
  const deprecation = (status: 'Deprecated' | 'Undeprecated') =>
    JSON.stringify({ data: { type: 'module-versions', attributes: { deprecation: { 'deprecated-status': status, reason: 'replaced' } } } });
  const DNS_1_0 = 'organizations/acme/registry-modules/private/acme/dns/aws/1.0.0';

  it('sign the truth they change with the config’s provenance: key', async () => {
    await serving('mirror.config.yaml', async (s) => {
      const deprecated = await api(s, 'admin', 'PATCH', DNS_1_0, deprecation('Deprecated'));
      expect(deprecated.status, deprecated.text).toBe(200);
      await expectSigned('state/acme/dns.aws.json');

      expect((await api(s, 'user', 'POST', 'organizations/acme/registry-modules', createBody('up', 'aws'))).status).toBe(201);
      const version = await api(s, 'user', 'POST', 'registry-modules/acme/up/aws/versions', createVersionBody('0.1.0'));
      expect(version.status, version.text).toBe(201);
      const put = await upload(version.json.data.links.upload, await slug(moduleFiles('0.1.0')));
      expect(put.status, put.text).toBe(200);
      await expectSigned('state/acme/up.aws.json');

      const removed = await api(s, 'user', 'DELETE', 'organizations/acme/registry-modules/private/acme/dns/aws/1.1.0');
      expect(removed.status, removed.text).toBe(204);
      await expectSigned('state/acme/dns.aws.json');
      // A module removed whole keeps a state (its removals on record), signed anew.
      expect((await api(s, 'user', 'DELETE', 'organizations/acme/registry-modules/private/acme/up/aws')).status).toBe(204);
      await expectSigned('state/acme/up.aws.json');

      // A version the mirror lacks, filled from the upstream.
      const filled = await fetch(new URL('v1/modules/acme/far/aws/2.0.0/download', s.url));
      expect(filled.status).toBe(200);
      expect(filled.headers.get('x-modmirror-cache')).toBe('miss');
      await expectSigned('state/acme/far.aws.json');

      // A provider version filled through the cache's providers.v1, with the upstream's signed SHA256SUMS: the root signed anew.
      const provider = await fetch(new URL('providers/registry.terraform.io/acme/gadgets/1.0.0/download/linux/amd64', s.url));
      expect(provider.status, await provider.clone().text()).toBe(200);
      expect(provider.headers.get('x-modmirror-cache')).toBe('miss');
      await expectSigned();
    });
  });

  it('do not start when serve cannot unlock the config’s key (exit 1); --read-only reads no key', async () => {
    const started = spawnKillable(['serve', '--port', '0', '--data', 'data'], dir);
    const timer = setTimeout(() => started.kill(), 20_000);
    const ended = await started.done.finally(() => clearTimeout(timer));
    expect(ended.code).toBe(1);
    expect(ended.stderr).toMatch(/provenance: key .*mirror-signer\.key\.asc: is locked with a passphrase, and MM_SIGNED_WRITES_PASSPHRASE holds none/);
    const readOnly = await spawnServe(['--port', '0', '--data', 'data', '--read-only', '--quiet'], dir, /at (http:\/\/127\.0\.0\.1:\d+\/)/);
    readOnly.child.kill('SIGTERM');
    await readOnly.exited;
  });

  it('are refused without a key, in a JSON body naming the fix; the mirror stays signed', async () => {
    const before = truth();
    await serving('unsigned.yaml', async (s) => {
      const refused = await api(s, 'admin', 'PATCH', DNS_1_0, deprecation('Undeprecated'));
      expect(refused.status).toBe(409);
      expect(refused.json.errors[0].detail).toMatch(/is signed \(manifest\.json\.asc\), and this write has no key .*the config's provenance: key/);
    });
    expect(truth()).toEqual(before);
    await expectSigned();
  });
});
