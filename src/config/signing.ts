// The config's keys: `signing:` (signs in-house provider releases that come
// unsigned), `provenance:` (signs each version's provenance and the mirror's
// truth) and `trust:` (the public keys a bundle must be signed by). A
// passphrase is never written here: only the variable that holds it.

import { resolve } from 'node:path';
import { Checker, show, type Problem } from './check.js';

/** The key that signs: an armored private key file; its passphrase comes from the environment. */
export interface SigningConfig {
  keyFile: string;
  /** The environment variable holding the passphrase (MODMIRROR_SIGNING_PASSPHRASE unless the config names another). */
  passphraseEnv: string;
}

export const DEFAULT_PASSPHRASE_ENV = 'MODMIRROR_SIGNING_PASSPHRASE';

/** A `trust:` entry: an armored public key file, and where the config names it (`FILE:LINE: trust[0]`), for messages about it. */
export interface TrustFile {
  file: string;
  at: string;
}

export interface UserSigning {
  key: string;
  passphraseEnv?: string;
}

/** Every problem of a `signing:` or `provenance:` value (both name a key alike). */
export function validateSigning(entry: 'signing' | 'provenance', value: unknown): Problem[] {
  const check = new Checker();
  if (!check.mapping(value, [entry], 'expected a mapping with key (an armored private key file) and passphraseEnv')) return check.problems;
  check.knownKeys(value, ['key', 'passphraseEnv'], [entry]);
  check.expect(typeof value['key'] === 'string' && value['key'] !== '', [entry, 'key'], `expected an armored private key file, got ${show(value['key'])}`);
  if ('passphraseEnv' in value) {
    check.expect(
      typeof value['passphraseEnv'] === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(value['passphraseEnv']),
      [entry, 'passphraseEnv'],
      `expected an environment variable name, got ${show(value['passphraseEnv'])}`,
    );
  }
  return check.problems;
}

/** Every problem of a `trust:` value. */
export function validateTrust(value: unknown): Problem[] {
  const check = new Checker();
  check.stringList(value, ['trust'], { list: 'armored public key files', item: 'an armored public key file', mayBeEmpty: true });
  return check.problems;
}

/** The key with its file made absolute against `base`, and the default passphrase variable. */
export function resolveSigning(user: UserSigning, base: string): SigningConfig {
  return { keyFile: resolve(base, user.key), passphraseEnv: user.passphraseEnv ?? DEFAULT_PASSPHRASE_ENV };
}
