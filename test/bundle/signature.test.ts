// Signed bundles through the CLI, with GnuPG on the other side: bundle
// --sign-key writes BUNDLE.asc, which gpg --verify accepts; unbundle --trust
// takes a bundle signed by a trusted key (made by modmirror or by gpg) and
// refuses, before anything is written, one that is unsigned, signed by
// another key, altered after signing, whose signature is truncated or
// garbled, or signed by a key that has expired or is revoked. A key that
// cannot sign as given stops bundle before it writes anything.

import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyBundle } from '../../src/bundle/read.js';
import { readSignedBundle } from '../../src/bundle/signature.js';
import { readPublicKeys } from '../../src/openpgp/keys.js';
import { gpg, type Gpg } from '../gpg.js';
import { mirrorLeftovers, runCli, tempDir, treeOf, writeFiles, copyTruth } from '../helpers.js';

const outside = tempDir('mm-signed-outside-');
const inside = tempDir('mm-signed-inside-');
const PASSPHRASE = 'bundle signer passphrase';
const env = { MODMIRROR_SIGNING_PASSPHRASE: PASSPHRASE };
/** Where the inside keeps the keys it trusts, and the bundles it is handed. */
const key = (name: string) => join(inside, 'keys', name);
const bundle = (name: string) => join(inside, 'media', name);

let g: Gpg;
/** modmirror key create's key, and the gpg-made ones: by a person at the outside, a stranger, expired, revoked, certify-only. */
let signer: string;
let person: string;
let stranger: string;
let expired: string;
let revoked: string;
let certOnly: string;

beforeAll(async () => {
  writeFiles(outside, { 'mirror.config.yaml': 'sources:\n  - folder: mods\n', 'mods/acme/net/aws/1.0.0/main.tf': 'variable "a" {}\n' });
  expect((await runCli(['build'], outside)).code).toBe(0);
  expect((await runCli(['bundle', '--out', 'first.tar.gz'], outside)).code).toBe(0);
  // The inside holds 1.0.0; every bundle below carries 1.1.0 too, so a bundle taken that should not be changes the mirror.
  expect((await runCli(['unbundle', join(outside, 'first.tar.gz'), '--mirror', 'held'], inside)).code).toBe(0);
  writeFiles(outside, { 'mods/acme/net/aws/1.1.0/main.tf': 'variable "b" {}\n' });
  expect((await runCli(['build'], outside)).code).toBe(0);
  expect((await runCli(['bundle', '--out', 'unsigned.tar.gz'], outside)).code).toBe(0);

  const made = await runCli(
    ['key', 'create', '--name', 'Bundle Signer', '--email', 'signer@example.com', '--algorithm', 'curve25519', '--out', 'keys', '--json'],
    outside,
    env,
  );
  expect(made.code, made.stderr).toBe(0);
  signer = (JSON.parse(made.stdout) as { keyId: string }).keyId;

  g = gpg();
  person = g.makeKey('Outside Person', { passphrase: 'person passphrase' });
  stranger = g.makeKey('Stranger');
  // Made on 2020-01-01, valid for a day, and signing while it was: openpgp.js alone would accept that signature today.
  expired = g.makeKey('Expired Signer', { at: '20200101T000000', expire: '1d' });
  revoked = g.makeKey('Revoked Signer');
  certOnly = g.makeKey('Cert Only', { usage: 'cert' });
  writeFiles(inside, { 'keys/.keep': '', 'media/.keep': '' });
  copyFileSync(join(outside, 'keys/bundle-signer.pub.asc'), key('signer.pub.asc'));
  for (const [id, name] of [
    [person, 'person'],
    [stranger, 'stranger'],
    [expired, 'expired'],
  ] as const)
    g.exportPublic(id, key(`${name}.pub.asc`));
  g.run(['--import', join(outside, 'keys/bundle-signer.pub.asc')]);
}, 120_000);

afterAll(() => g.close());

/** A copy of the outside's unsigned bundle on the inside's medium, named `name`. */
function handed(name: string, from = 'unsigned.tar.gz'): string {
  copyFileSync(join(outside, from), bundle(name));
  return bundle(name);
}

/** unbundle FILE into the held mirror, which must refuse it (exit `code`) with `message` and leave the mirror as it was. */
async function refused(file: string, args: string[], message: RegExp, code = 1): Promise<void> {
  const before = treeOf(join(inside, 'held'));
  const r = await runCli(['unbundle', file, '--mirror', 'held', ...args], inside);
  expect(r.stderr).toMatch(message);
  expect(r.code).toBe(code);
  expect(r.stdout).toBe('');
  expect(treeOf(join(inside, 'held'))).toEqual(before);
  expect(await mirrorLeftovers(inside, 'held')).toEqual([]);
}

describe('bundle --sign-key', () => {
  it('writes BUNDLE.asc beside the bundle, a detached signature gpg --verify accepts; unbundle --trust takes it and names the key', async () => {
    const made = await runCli(['bundle', '--out', 'signed.tar.gz', '--sign-key', 'keys/bundle-signer.key.asc', '--json'], outside, env);
    expect(made.stderr).toBe('');
    expect(made.code).toBe(0);
    const asc = join(outside, 'signed.tar.gz.asc');
    expect(JSON.parse(made.stdout)).toMatchObject({ signature: { file: asc, keyId: signer } });
    expect(readFileSync(asc, 'utf8')).toMatch(/^-----BEGIN PGP SIGNATURE-----\n[\s\S]+\n-----END PGP SIGNATURE-----\n$/);
    expect(g.check(['--verify', asc, join(outside, 'signed.tar.gz')])).toEqual({ code: 0, stderr: '' });
    // gpg's check is a real one: other bytes under that signature fail it.
    expect(g.check(['--verify', asc, join(outside, 'first.tar.gz')]).code).not.toBe(0);

    const human = await runCli(['bundle', '--out', 'signed-again.tar.gz', '--sign-key', 'keys/bundle-signer.key.asc'], outside, env);
    expect(human.stdout).toContain(`Signed by key ${signer}: signed-again.tar.gz.asc\n`);

    copyFileSync(join(outside, 'signed.tar.gz'), bundle('signed.tar.gz'));
    copyFileSync(asc, bundle('signed.tar.gz.asc'));
    const r = await runCli(['unbundle', bundle('signed.tar.gz'), '--mirror', 'taken', '--trust', key('signer.pub.asc')], inside);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Signed by key ${signer} (Bundle Signer <signer@example.com>), a trusted key: checked.\n`);
    expect(treeOf(join(inside, 'taken'))).toEqual(treeOf(join(outside, 'dist')));
  });

  it('signs a --since bundle alike', async () => {
    copyTruth(join(inside, 'held'), join(outside, 'inside-truth'));
    const made = await runCli(['bundle', '--out', 'since.tar.gz', '--since', 'inside-truth', '--sign-key', 'keys/bundle-signer.key.asc'], outside, env);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toMatch(/1 new or changed version\(s\); 1 archive\(s\) left out/);
    expect(g.check(['--verify', join(outside, 'since.tar.gz.asc'), join(outside, 'since.tar.gz')])).toEqual({ code: 0, stderr: '' });
    handed('since.tar.gz', 'since.tar.gz');
    copyFileSync(join(outside, 'since.tar.gz.asc'), bundle('since.tar.gz.asc'));
    // Into a copy of the held mirror, which the --since bundle was made for.
    expect((await runCli(['unbundle', join(outside, 'first.tar.gz'), '--mirror', 'held-copy'], inside)).code).toBe(0);
    const r = await runCli(['unbundle', bundle('since.tar.gz'), '--mirror', 'held-copy', '--trust', key('signer.pub.asc'), '--json'], inside);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toMatchObject({ added: 1, signature: { checked: true, keyId: signer } });
    expect(treeOf(join(inside, 'held-copy'))).toEqual(treeOf(join(outside, 'dist')));
  });

  it("takes a signature by a trusted key's signing subkey, naming the key", async () => {
    const primary = g.makeKey('Subkey Holder', { usage: 'cert' });
    g.run(['--quick-add-key', g.fingerprint(primary), 'ed25519', 'sign', 'never'], { passphrase: '' });
    g.exportPublic(primary, key('subkey-holder.pub.asc'));
    const asc = g.sign(handed('by-subkey.tar.gz'), primary);
    // Made by the subkey: the signature names the subkey's id, not the primary key's.
    const issuer = /:signature packet: algo \d+, keyid ([0-9A-F]{16})/.exec(g.run(['--list-packets', asc]))?.[1];
    expect(issuer).toMatch(/^[0-9A-F]{16}$/);
    expect(issuer).not.toBe(primary);
    const r = await runCli(['unbundle', bundle('by-subkey.tar.gz'), '--mirror', 'from-subkey', '--trust', key('subkey-holder.pub.asc'), '--json'], inside);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toMatchObject({ signature: { checked: true, keyId: primary } });
  });

  it('takes a key gpg made (locked, its passphrase from --passphrase-file), and a bundle gpg signed', async () => {
    g.exportSecret(person, join(outside, 'person.key.asc'), 'person passphrase');
    writeFiles(outside, { 'person.pass': 'person passphrase\n' });
    const made = await runCli(['bundle', '--out', 'by-person.tar.gz', '--sign-key', 'person.key.asc', '--passphrase-file', 'person.pass'], outside);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toContain(`Signed by key ${person}: by-person.tar.gz.asc`);
    expect(g.check(['--verify', join(outside, 'by-person.tar.gz.asc'), join(outside, 'by-person.tar.gz')]).code).toBe(0);

    // gpg --armor --detach-sign, as a person at the outside would sign a bundle modmirror made unsigned.
    g.sign(handed('gpg-signed.tar.gz'), person, { passphrase: 'person passphrase' });
    const r = await runCli(['unbundle', bundle('gpg-signed.tar.gz'), '--mirror', 'from-gpg', '--trust', key('person.pub.asc'), '--json'], inside);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toMatchObject({
      added: 2,
      signature: { checked: true, keyId: person, userId: 'Outside Person <outside-person@example.com>' },
    });
  });
});

describe('unbundle --trust refuses, before anything is written', () => {
  it('a bundle with no signature beside it', async () => {
    await refused(
      handed('unsigned.tar.gz'),
      ['--trust', key('signer.pub.asc')],
      new RegExp(
        `Refusing .*/unsigned\\.tar\\.gz: it is not signed: there is no unsigned\\.tar\\.gz\\.asc beside it \\(trusted keys: ${signer}\\)\\. Nothing was changed\\.`,
      ),
    );
  });

  it('a bundle signed by a key that is not trusted', async () => {
    g.sign(handed('by-stranger.tar.gz'), stranger);
    await refused(
      bundle('by-stranger.tar.gz'),
      ['--trust', key('signer.pub.asc'), '--trust', key('person.pub.asc')],
      new RegExp(`it is signed by key ${stranger}, which is not trusted \\(trusted: ${signer}, ${person}\\)`),
    );
  });

  it('a bundle whose bytes changed after it was signed: another valid bundle under the signature', async () => {
    // A bundle unbundle would take on its own (it adds a module), carried in under the signed bundle's name and signature.
    writeFiles(outside, { 'mods/acme/dns/aws/1.0.0/main.tf': 'variable "zone" {}\n' });
    expect((await runCli(['build', '--mirror', 'dist-other'], outside)).code).toBe(0);
    expect((await runCli(['bundle', '--mirror', 'dist-other', '--out', 'other.tar.gz'], outside)).code).toBe(0);
    handed('altered.tar.gz', 'other.tar.gz');
    copyFileSync(join(outside, 'signed.tar.gz.asc'), bundle('altered.tar.gz.asc'));
    await refused(
      bundle('altered.tar.gz'),
      ['--trust', key('signer.pub.asc')],
      new RegExp(`its bytes are not the ones key ${signer} signed \\(.*\\): the bundle or altered\\.tar\\.gz\\.asc changed after it was signed`),
    );
    // The same bundle, unsigned and unchecked, would have been taken.
    const plain = await runCli(['unbundle', join(outside, 'other.tar.gz'), '--mirror', 'unchecked'], inside);
    expect(plain.code).toBe(0);
  });

  it('a bundle whose signature is truncated', async () => {
    handed('truncated.tar.gz', 'signed.tar.gz');
    const armor = readFileSync(join(outside, 'signed.tar.gz.asc'), 'utf8');
    writeFileSync(bundle('truncated.tar.gz.asc'), armor.slice(0, armor.length / 2));
    await refused(
      bundle('truncated.tar.gz'),
      ['--trust', key('signer.pub.asc')],
      /its signature truncated\.tar\.gz\.asc cannot be read, so no key can be named \(.+\); it is truncated, damaged or not an OpenPGP signature/,
    );
  });

  it('a bundle whose signature is garbled', async () => {
    handed('garbled.tar.gz', 'signed.tar.gz');
    const lines = readFileSync(join(outside, 'signed.tar.gz.asc'), 'utf8').split('\n');
    // The armor's last line of data ends with the signature's own bytes: change some of them.
    const last = lines.findIndex((line) => line.startsWith('-----END')) - 1;
    const at = lines[last]!.startsWith('=') ? last - 1 : last;
    lines[at] = lines[at]!.slice(0, 8) + [...lines[at]!.slice(8, 16)].map((c) => (c === 'A' ? 'B' : 'A')).join('') + lines[at]!.slice(16);
    writeFileSync(bundle('garbled.tar.gz.asc'), lines.join('\n'));
    await refused(bundle('garbled.tar.gz'), ['--trust', key('signer.pub.asc')], new RegExp(`its bytes are not the ones key ${signer} signed`));
  });

  it('a bundle signed with a key that has expired since', async () => {
    g.sign(handed('by-expired.tar.gz'), expired, { at: '20200101T010000' });
    // gpg itself calls the signature good, from an expired key.
    expect(g.check(['--verify', bundle('by-expired.tar.gz.asc'), bundle('by-expired.tar.gz')]).code).toBe(0);
    await refused(
      bundle('by-expired.tar.gz'),
      ['--trust', key('expired.pub.asc')],
      new RegExp(`it is signed by key ${expired}, which has expired \\(key ${expired} expired on 2020-01-02T00:00:00\\.000Z\\)`),
    );
  });

  it('a bundle signed later than the clock inside says it is', async () => {
    g.sign(handed('from-the-future.tar.gz'), person, { at: '20990101T000000', passphrase: 'person passphrase' });
    await refused(
      bundle('from-the-future.tar.gz'),
      ['--trust', key('person.pub.asc')],
      new RegExp(`it is signed by key ${person} at a time later than this machine's clock \\(signed 2099-01-01T00:00:00\\.000Z, now `),
    );
  });

  it('a bundle signed with a key revoked since, by its revocation certificate', async () => {
    g.sign(handed('by-revoked.tar.gz'), revoked);
    g.exportPublic(revoked, key('before-revocation.pub.asc'));
    g.revoke(revoked);
    g.exportPublic(revoked, key('revoked.pub.asc'));
    // Signed while it was good: the key as it was then trusts the bundle; the key as it is now does not.
    const before = await runCli(
      ['unbundle', bundle('by-revoked.tar.gz'), '--mirror', 'before-revocation', '--trust', key('before-revocation.pub.asc')],
      inside,
    );
    expect(before.code, before.stderr).toBe(0);
    await refused(
      bundle('by-revoked.tar.gz'),
      ['--trust', key('revoked.pub.asc')],
      new RegExp(`it is signed by key ${revoked}, which is revoked \\(key ${revoked} is revoked\\)`),
    );
  });

  it('anything at all, when a --trust file is not there or not a public key (exit 2)', async () => {
    const signed = bundle('signed.tar.gz');
    await refused(signed, ['--trust', key('missing.pub.asc')], /error: --trust .*missing\.pub\.asc: the key file does not exist/, 2);
    await refused(signed, ['--trust', join(outside, 'keys/bundle-signer.key.asc')], /is a private key \(key ID [0-9A-F]{16}\); give its public half/, 2);
    writeFiles(inside, { 'keys/notes.txt': 'the signer is Alice\n' });
    await refused(signed, ['--trust', key('notes.txt')], /--trust .*notes\.txt: is not an armored OpenPGP public key/, 2);
  });
});

describe('the keys unbundle trusts', () => {
  it("come from the config's trust: list when no --trust is given; --trust replaces it", async () => {
    const room = tempDir('mm-signed-config-');
    writeFiles(room, { 'mirror.config.yaml': `out: mirror\ntrust:\n  - ${key('person.pub.asc')}\n  - ${key('signer.pub.asc')}\n` });
    const unsigned = await runCli(['unbundle', bundle('unsigned.tar.gz')], room);
    expect(unsigned.code).toBe(1);
    expect(unsigned.stderr).toContain(`(trusted keys: ${person}, ${signer})`);
    expect(existsSync(join(room, 'mirror'))).toBe(false);
    const signed = await runCli(['unbundle', bundle('signed.tar.gz'), '--json'], room);
    expect(signed.stderr).toBe('');
    expect(JSON.parse(signed.stdout)).toMatchObject({ mirror: join(room, 'mirror'), signature: { checked: true, keyId: signer } });
    const replaced = await runCli(['unbundle', bundle('signed.tar.gz'), '--trust', key('stranger.pub.asc')], room);
    expect(replaced.code).toBe(1);
    expect(replaced.stderr).toContain(`which is not trusted (trusted: ${stranger})`);
  });

  it('are config problems, with file and line, when the config names a file that is not a public key (exit 1)', async () => {
    const room = tempDir('mm-signed-config-');
    writeFiles(room, { 'mirror.config.yaml': 'out: mirror\ntrust:\n  - keys/gone.pub.asc\n', 'listed.yaml': 'trust: keys/one.asc\n' });
    const missing = await runCli(['unbundle', bundle('signed.tar.gz')], room);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`error: ${join(room, 'mirror.config.yaml')}:3: trust[0]: ${join(room, 'keys/gone.pub.asc')}: the key file does not exist`);
    const notList = await runCli(['unbundle', bundle('signed.tar.gz'), '--config', 'listed.yaml'], room);
    expect(notList.code).toBe(1);
    expect(notList.stderr).toContain(`${join(room, 'listed.yaml')}:1: trust: expected a list of armored public key files`);
    expect(existsSync(join(room, 'mirror'))).toBe(false);
  });

  it('are not asked for by default: a signature beside the bundle is then named as not checked', async () => {
    const r = await runCli(['unbundle', bundle('signed.tar.gz'), '--mirror', 'unasked'], inside);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(
      'note: media/signed.tar.gz.asc was not checked: unbundle --trust KEY.asc (or trust: in the config) requires the bundle to be signed by that key.\n',
    );
    const json = await runCli(['unbundle', bundle('signed.tar.gz'), '--mirror', 'unasked', '--json'], inside);
    expect(json.stderr).toBe('');
    expect(JSON.parse(json.stdout)).toMatchObject({ signature: { checked: false, file: bundle('signed.tar.gz.asc') } });
  });

  it('must have signed the very bytes unbundle reads: the check is fed by the one read of the bundle', async () => {
    const file = join(outside, 'signed.tar.gz');
    const trusted = (await readPublicKeys(key('signer.pub.asc'))).map((k) => ({ key: k, file: key('signer.pub.asc') }));
    const taken = await readSignedBundle(file, trusted, (raw) => verifyBundle(file, raw));
    expect(taken.signature.keyId).toBe(signer);
    expect(taken.read.manifest.files.length).toBeGreaterThan(0);
    // Another valid bundle read in its place, as a file swapped between a check and a second read would be.
    await expect(readSignedBundle(file, trusted, (raw) => verifyBundle(join(outside, 'other.tar.gz'), raw))).rejects.toThrow(
      /its bytes are not the ones key [0-9A-F]{16} signed/,
    );
  });
});

describe('bundle --sign-key refuses a key it cannot sign with, and writes nothing (exit 2)', () => {
  const cases: [string, string[], Record<string, string>, RegExp][] = [
    ['a file that is not a key', ['--sign-key', 'mirror.config.yaml'], env, /--sign-key .*mirror\.config\.yaml: not an armored OpenPGP private key/],
    ['a public key', ['--sign-key', 'keys/bundle-signer.pub.asc'], env, /is a public key \(key ID [0-9A-F]{16}\); signing needs its private half/],
    ['a key that is not there', ['--sign-key', 'keys/gone.key.asc'], env, /The signing key .*gone\.key\.asc \(--sign-key\) does not exist/],
    [
      'a locked key without its passphrase',
      ['--sign-key', 'keys/bundle-signer.key.asc'],
      {},
      /is locked with a passphrase, and MODMIRROR_SIGNING_PASSPHRASE holds none/,
    ],
    [
      'a wrong passphrase',
      ['--sign-key', 'keys/bundle-signer.key.asc'],
      { MODMIRROR_SIGNING_PASSPHRASE: 'wrong' },
      /The passphrase from MODMIRROR_SIGNING_PASSPHRASE does not unlock the signing key/,
    ],
    ['a passphrase with no key', ['--passphrase-env', 'MY_PASSPHRASE'], env, /--passphrase-env gives the passphrase of --sign-key, which is missing/],
  ];
  for (const [what, args, vars, message] of cases) {
    it(what, async () => {
      const r = await runCli(['bundle', '--out', 'refused.tar.gz', ...args], outside, vars);
      expect(r.stderr).toMatch(message);
      expect(r.code).toBe(2);
      expect(existsSync(join(outside, 'refused.tar.gz'))).toBe(false);
      expect(existsSync(join(outside, 'refused.tar.gz.asc'))).toBe(false);
    });
  }

  it('a key that cannot sign: certify only, made by gpg', async () => {
    g.exportSecret(certOnly, join(outside, 'cert-only.key.asc'));
    const r = await runCli(['bundle', '--out', 'refused.tar.gz', '--sign-key', 'cert-only.key.asc'], outside);
    expect(r.stderr).toMatch(new RegExp(`--sign-key .*cert-only\\.key\\.asc: key ${certOnly} cannot sign \\(.+\\)`));
    expect(r.code).toBe(2);
    expect(existsSync(join(outside, 'refused.tar.gz'))).toBe(false);
  });

  it('and a bundle written again without it takes away the signature of its old bytes', async () => {
    expect(existsSync(join(outside, 'signed-again.tar.gz.asc'))).toBe(true);
    expect((await runCli(['bundle', '--out', 'signed-again.tar.gz'], outside)).code).toBe(0);
    expect(existsSync(join(outside, 'signed-again.tar.gz.asc'))).toBe(false);
  });
});
