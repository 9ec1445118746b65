// GnuPG as the other side of modmirror's signatures: Debian's /usr/bin/gpg
// with a keyring of its own in a temp folder (never the user's), making keys
// and signatures as a person at the outside would, and checking the ones
// modmirror makes. Ed25519 keys: made in milliseconds.

import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './helpers.js';

export interface Gpg {
  home: string;
  /** gpg ARGS in batch mode, with `passphrase` for what needs one (loopback: no pinentry); its stdout. */
  run(args: string[], options?: { passphrase?: string; input?: string }): string;
  /** gpg ARGS as `run` does, also returning the exit code and stderr, for a check that may fail. */
  check(args: string[]): { code: number; stderr: string };
  /** A new key `name <slug@example.com>` (Ed25519, `usage` sign or cert), made at `at` (gpg's --faked-system-time) when given; its key ID. */
  makeKey(name: string, options?: { usage?: 'sign' | 'cert'; expire?: string; at?: string; passphrase?: string }): string;
  /** The armored public key of `keyId`, written to `file`. */
  exportPublic(keyId: string, file: string): string;
  /** The armored private key of `keyId`, written to `file` (locked with the key's passphrase, if it has one). */
  exportSecret(keyId: string, file: string, passphrase?: string): string;
  /** FILE.asc, an armored detached signature of FILE by `keyId`, made at `at` when given. */
  sign(file: string, keyId: string, options?: { at?: string; passphrase?: string }): string;
  /** The key's fingerprint, as gpg prints it. */
  fingerprint(keyId: string): string;
  /** Imports the revocation certificate gpg made with the key: the key is revoked in this keyring. */
  revoke(keyId: string): void;
  /** Stops this keyring's gpg-agent. */
  close(): void;
}

export function gpg(): Gpg {
  const home = tempDir('mm-gnupg-');
  // Loopback lets a passphrase come from the command line of a test; no agent dialog.
  writeFileSync(join(home, 'gpg-agent.conf'), 'allow-loopback-pinentry\n');
  const base = ['--homedir', home, '--batch', '--no-tty', '--quiet'];
  const run: Gpg['run'] = (args, { passphrase, input } = {}) =>
    execFileSync('gpg', [...base, ...(passphrase === undefined ? [] : ['--pinentry-mode', 'loopback', '--passphrase', passphrase]), ...args], {
      encoding: 'utf8',
      input: input ?? '',
      stdio: ['pipe', 'pipe', 'pipe'],
    });
  const fingerprints = new Map<string, string>();
  const api: Gpg = {
    home,
    run,
    check(args) {
      try {
        run(args);
        return { code: 0, stderr: '' };
      } catch (error) {
        const failed = error as { status: number; stderr: string };
        return { code: failed.status, stderr: failed.stderr };
      }
    },
    makeKey(name, { usage = 'sign', expire = 'never', at, passphrase = '' } = {}) {
      const email = `${name.toLowerCase().replace(/\W+/g, '-')}@example.com`;
      run([...(at ? ['--faked-system-time', at] : []), '--quick-gen-key', `${name} <${email}>`, 'ed25519', usage, expire], { passphrase });
      const listed = run(['--with-colons', '--list-keys', `<${email}>`]);
      const keyId = /^pub:[^:]*:[^:]*:[^:]*:([0-9A-F]{16}):/m.exec(listed)![1]!;
      fingerprints.set(keyId, /^fpr:+([0-9A-F]{40}):/m.exec(listed)![1]!);
      return keyId;
    },
    exportPublic(keyId, file) {
      writeFileSync(file, run(['--armor', '--export', keyId]));
      return file;
    },
    exportSecret(keyId, file, passphrase = '') {
      writeFileSync(file, run(['--armor', '--export-secret-keys', keyId], { passphrase }));
      return file;
    },
    sign(file, keyId, { at, passphrase = '' } = {}) {
      run([...(at ? ['--faked-system-time', at] : []), '--local-user', keyId, '--armor', '--detach-sign', '--yes', '--output', `${file}.asc`, file], {
        passphrase,
      });
      return `${file}.asc`;
    },
    fingerprint: (keyId) => fingerprints.get(keyId)!,
    revoke(keyId) {
      // gpg keeps a revocation certificate for each key it makes, its armor prefixed with ":" against an accidental import.
      const certificate = readFileSync(join(home, 'openpgp-revocs.d', `${fingerprints.get(keyId)}.rev`), 'utf8');
      run(['--import'], { input: certificate.replace(/^:-----BEGIN/m, '-----BEGIN') });
    },
    close() {
      execFileSync('gpgconf', ['--homedir', home, '--kill', 'gpg-agent']);
    },
  };
  return api;
}
