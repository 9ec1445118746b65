// `modmirror key create` through the CLI: a key pair GnuPG reads as it reads
// its own (the public half imported, the private half unlocked with the
// passphrase and signing, the revocation certificate revoking it), its passphrase from a variable or a file and never
// from the command line; `provider-key create` is the same command. Most keys
// here are curve25519 (milliseconds); the default, RSA 4096, is made once in
// test/providers/inhouse.test.ts.

import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gpg, type Gpg } from '../gpg.js';
import { runCli, tempDir, writeFiles } from '../helpers.js';

let g: Gpg;
const dir = tempDir('mm-key-');
const env = { MODMIRROR_SIGNING_PASSPHRASE: 'correct horse' };

beforeAll(() => {
  g = gpg();
});
afterAll(() => g.close());

interface Made {
  keyId: string;
  fingerprint: string;
  algorithm: string;
  publicKey: string;
  privateKey: string;
  revocation: string;
}

describe('key create', () => {
  it('makes a locked key pair gpg reads: the public key imported, the private key unlocked with the passphrase and signing', async () => {
    const made = await runCli(
      ['key', 'create', '--name', 'Bundle Signer', '--email', 'signer@example.com', '--algorithm', 'curve25519', '--out', 'keys', '--json'],
      dir,
      env,
    );
    expect(made.stderr).toBe('');
    expect(made.code).toBe(0);
    const key = JSON.parse(made.stdout) as Made;
    expect(key).toEqual({
      keyId: expect.stringMatching(/^[0-9A-F]{16}$/) as string,
      fingerprint: expect.stringMatching(/^[0-9A-F]{40}$/) as string,
      algorithm: 'curve25519',
      publicKey: join(dir, 'keys/bundle-signer.pub.asc'),
      privateKey: join(dir, 'keys/bundle-signer.key.asc'),
      revocation: join(dir, 'keys/bundle-signer.rev.asc'),
    });
    expect(key.fingerprint.endsWith(key.keyId)).toBe(true);
    expect(statSync(key.privateKey).mode & 0o777).toBe(0o600);
    expect(statSync(key.publicKey).mode & 0o777).toBe(0o644);
    expect(statSync(key.revocation).mode & 0o777).toBe(0o600);
    expect(readFileSync(key.privateKey, 'utf8')).toContain('-----BEGIN PGP PRIVATE KEY BLOCK-----');

    g.run(['--import', key.publicKey]);
    const listed = g.run(['--with-colons', '--list-keys', key.keyId]);
    // EdDSA (22) on Ed25519, able to sign, with the user ID and fingerprint key create printed.
    const pub = listed
      .split('\n')
      .find((line) => line.startsWith('pub:'))!
      .split(':');
    expect([pub[2], pub[3], pub[4], pub[11]?.includes('s')]).toEqual(['255', '22', key.keyId, true]);
    expect(listed).toContain(`fpr:::::::::${key.fingerprint}:`);
    expect(listed).toContain('Bundle Signer <signer@example.com>');
    // The private key is locked: gpg signs with it only given the passphrase.
    g.run(['--import', key.privateKey]);
    writeFiles(dir, { 'note.txt': 'signed\n' });
    expect(() => g.sign(join(dir, 'note.txt'), key.keyId, { passphrase: 'wrong' })).toThrow(/Bad passphrase|bad passphrase/);
    g.sign(join(dir, 'note.txt'), key.keyId, { passphrase: 'correct horse' });
    expect(g.check(['--verify', join(dir, 'note.txt.asc'), join(dir, 'note.txt')])).toEqual({ code: 0, stderr: '' });

    // The revocation certificate, imported, revokes the key: gpg lists it as revoked (r).
    g.run(['--import', key.revocation]);
    expect(g.run(['--with-colons', '--list-keys', key.keyId])).toMatch(new RegExp(`^pub:r:255:22:${key.keyId}:`, 'm'));
  });

  it('says what it made, and never replaces a key', async () => {
    const made = await runCli(['key', 'create', '--name', 'Site Key', '--algorithm', 'curve25519', '--expires-days', '30'], dir, env);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toMatch(/^Key ID [0-9A-F]{16} \(curve25519\), fingerprint [0-9A-F]{40}\n {2}public: {2}.*keys\/site-key\.pub\.asc/);
    expect(made.stdout).toContain('locked with MODMIRROR_SIGNING_PASSPHRASE');
    const pub = join(dir, 'keys/site-key.pub.asc');
    g.run(['--import', pub]);
    // --expires-days: gpg reads the expiry (the 7th field), 30 days after the key was made (the 6th).
    const fields = /^pub:([^:]*:){4}(\d+):(\d+):/m.exec(g.run(['--with-colons', '--list-keys', 'Site Key']))!;
    expect(Number(fields[3]) - Number(fields[2])).toBe(30 * 86_400);

    const before = readFileSync(pub);
    const again = await runCli(['key', 'create', '--name', 'Site Key', '--algorithm', 'curve25519'], dir, env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('site-key.pub.asc already exists; nothing was written');
    expect(readFileSync(pub)).toEqual(before);
  });

  it('takes the passphrase from a file or a named variable, and never from the command line', async () => {
    writeFiles(dir, { 'pass.txt': 'from a file\nsecond line ignored\n' });
    const fromFile = await runCli(['key', 'create', '--name', 'File Pass', '--algorithm', 'curve25519', '--passphrase-file', 'pass.txt', '--json'], dir);
    expect(fromFile.code, fromFile.stderr).toBe(0);
    const key = JSON.parse(fromFile.stdout) as Made;
    g.run(['--import', key.privateKey]);
    expect(() => g.sign(join(dir, 'pass.txt'), key.keyId, { passphrase: 'from a file' })).not.toThrow();

    const named = await runCli(['key', 'create', '--name', 'Env Pass', '--algorithm', 'curve25519', '--passphrase-env', 'MY_PASS'], dir, { MY_PASS: 'p' });
    expect(named.code, named.stderr).toBe(0);
    expect(named.stdout).toContain('locked with MY_PASS');

    const refusals: [string[], Record<string, string>, RegExp][] = [
      [[], {}, /Set MODMIRROR_SIGNING_PASSPHRASE to the passphrase that will lock the private key\./],
      [['--passphrase-env', 'UNSET_PASS'], {}, /Set UNSET_PASS to the passphrase/],
      [
        ['--passphrase-file', 'pass.txt', '--passphrase-env', 'MY_PASS'],
        { MY_PASS: 'p' },
        /Give the passphrase with --passphrase-file or --passphrase-env, not both/,
      ],
      [['--passphrase-file', 'nowhere.txt'], {}, /Cannot read --passphrase-file nowhere\.txt/],
      [['--passphrase', 'on the command line'], env, /Unknown option --passphrase\. Did you mean --passphrase-env\?/],
      [['--algorithm', 'dsa'], env, /--algorithm "dsa" is not one of rsa4096, curve25519/],
      [['--email', 'not an address'], env, /cannot make the key: .*Invalid user ID format.*--email "not an address"/],
    ];
    for (const [args, vars, message] of refusals) {
      const r = await runCli(['key', 'create', '--name', 'Refused', '--algorithm', 'curve25519', ...args], dir, vars);
      expect(r.stderr, args.join(' ')).toMatch(message);
      expect(r.code, args.join(' ')).toBe(2);
    }
    expect(existsSync(join(dir, 'keys/refused.key.asc'))).toBe(false);
  });

  it('is what provider-key create runs, under its name before', async () => {
    const r = await runCli(['provider-key', 'create', '--name', 'Old Name', '--algorithm', 'curve25519', '--json'], dir, env);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('note: modmirror provider-key create is now modmirror key create; provider-key still works.\n');
    expect(JSON.parse(r.stdout)).toMatchObject({ algorithm: 'curve25519', publicKey: join(dir, 'keys/old-name.pub.asc') });
  });
});
