// The flags that name OpenPGP keys, read alike by every command that takes
// them: a private key to sign with (bundle --sign-key) and its passphrase,
// from an environment variable or a file, never from the command line, where
// ps and shell history would show it (key create locks a new key with it);
// and the public keys a signature must be by (unbundle --trust, else the
// config's trust:). A file named on the command line that is not there, or
// not the key it should be, is a usage error (exit 2); one the config names
// is the config's problem (exit 1), reported at its line.

import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { DEFAULT_PASSPHRASE_ENV, type SigningConfig, type TrustFile } from '../config/signing.js';
import { MirrorError, messageOf } from '../errors.js';
import type { TrustedKey } from '../openpgp/detached.js';
import { checkCanSign, KeyError, readPrivateKeyFile, readPublicKeys, unlockSigningKey, type PrivateSigningKey } from '../openpgp/keys.js';
import { usageError, type FlagValues } from './args.js';
import { PASSPHRASE_OPTIONS } from './options/shared.js';

type PassphraseValues = FlagValues<typeof PASSPHRASE_OPTIONS>;
/** The values of a command that signs with --sign-key. */
type SignKeyValues = PassphraseValues & { 'sign-key'?: string | undefined };

/**
 * The passphrase: the first line of --passphrase-file FILE (- for standard
 * input), else the variable --passphrase-env names (MODMIRROR_SIGNING_PASSPHRASE
 * by default); `passphrase` is undefined when that holds none. `from` says
 * where it was looked for, for messages.
 */
export function passphraseOf(values: PassphraseValues, command: string): { passphrase: string | undefined; from: string } {
  const file = values['passphrase-file'];
  const env = values['passphrase-env'];
  if (file !== undefined && env !== undefined) throw usageError(command, 'Give the passphrase with --passphrase-file or --passphrase-env, not both.');
  if (file !== undefined) {
    let line: string | undefined;
    try {
      line = readFileSync(file === '-' ? 0 : file, 'utf8').split(/\r?\n/, 1)[0];
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'SOURCE_NOT_FOUND' : 'USAGE';
      throw new MirrorError(code, `Cannot read --passphrase-file ${file}: ${messageOf(error)}`, { hint: `Run modmirror ${command} --help.` });
    }
    if (!line) throw usageError(command, `--passphrase-file ${file} is empty: its first line is the passphrase.`);
    return { passphrase: line, from: `--passphrase-file ${file}` };
  }
  const name = env ?? DEFAULT_PASSPHRASE_ENV;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw usageError(command, `--passphrase-env "${name}" is not an environment variable name.`);
  const value = process.env[name];
  return { passphrase: value === '' ? undefined : value, from: name };
}

const SIGN_KEY_HINT = '--sign-key takes an armored private key: the NAME.key.asc modmirror key create writes, or gpg --armor --export-secret-keys KEYID.';

/** The unlocked key --sign-key names, checked before anything is written; undefined without the flag. */
export async function signingKeyFlag(values: SignKeyValues, command: string): Promise<PrivateSigningKey | undefined> {
  const given = values['sign-key'];
  if (given === undefined) {
    for (const flag of Object.keys(PASSPHRASE_OPTIONS) as (keyof PassphraseValues)[])
      if (values[flag] !== undefined) throw usageError(command, `--${flag} gives the passphrase of --sign-key, which is missing.`);
    return undefined;
  }
  const file = resolve(given);
  if (!existsSync(file)) throw new MirrorError('SOURCE_NOT_FOUND', `The signing key ${file} (--sign-key) does not exist.`, { hint: SIGN_KEY_HINT });
  const invalid = (error: unknown, hint = SIGN_KEY_HINT) =>
    error instanceof KeyError ? new MirrorError('KEY_INVALID', `--sign-key ${error.message}`, { hint, cause: error }) : error;
  const signer = await readPrivateKeyFile(file).catch((error: unknown) => {
    throw invalid(error);
  });
  await checkCanSign(signer, file).catch((error: unknown) => {
    throw invalid(error, 'Sign with a key that has signing capability and is neither expired nor revoked (modmirror key create makes one).');
  });
  if (signer.key.isDecrypted()) return signer;
  const { passphrase, from } = passphraseOf(values, command);
  if (passphrase === undefined)
    throw new MirrorError('USAGE', `The signing key ${file} is locked with a passphrase, and ${from} holds none.`, {
      hint: `Set ${from} to its passphrase (or name another variable with --passphrase-env VAR), or give it in a file with --passphrase-file FILE.`,
    });
  return unlockSigningKey(signer, file, passphrase).catch((error: unknown) => {
    throw error instanceof KeyError
      ? new MirrorError('KEY_INVALID', `The passphrase from ${from} does not unlock the signing key ${file}.`, {
          hint: `Set ${from} to the passphrase the key was locked with.`,
          cause: error,
        })
      : error;
  });
}

const PROVENANCE_HINT =
  'provenance: key names an armored private key file (relative to the config file), whose passphrase is in the variable provenance: passphraseEnv names (MODMIRROR_SIGNING_PASSPHRASE by default).';

/**
 * The unlocked key that signs provenance: --sign-key's, else the config's
 * provenance: key (a problem with it is the config's, exit 1); undefined
 * with neither. Read before anything is written.
 */
export async function provenanceSigningKey(
  values: SignKeyValues,
  command: string,
  config: { provenance?: SigningConfig },
): Promise<PrivateSigningKey | undefined> {
  if (values['sign-key'] !== undefined || config.provenance === undefined) return signingKeyFlag(values, command);
  const { keyFile, passphraseEnv } = config.provenance;
  const problem = (message: string, cause?: unknown) =>
    new MirrorError('CONFIG_INVALID', `provenance: key ${keyFile}: ${message}`, { hint: PROVENANCE_HINT, cause });
  const asProblem = (error: unknown) => (error instanceof KeyError ? problem(error.message, error) : error);
  if (!existsSync(keyFile)) throw problem('the key file does not exist');
  const signer = await readPrivateKeyFile(keyFile).catch((error: unknown) => {
    throw asProblem(error);
  });
  await checkCanSign(signer, keyFile).catch((error: unknown) => {
    throw asProblem(error);
  });
  if (signer.key.isDecrypted()) return signer;
  const flagged = (Object.keys(PASSPHRASE_OPTIONS) as (keyof PassphraseValues)[]).some((flag) => values[flag] !== undefined);
  const { passphrase, from } = flagged ? passphraseOf(values, command) : { passphrase: process.env[passphraseEnv] || undefined, from: passphraseEnv };
  if (passphrase === undefined) throw problem(`is locked with a passphrase, and ${from} holds none`);
  return unlockSigningKey(signer, keyFile, passphrase).catch((error: unknown) => {
    throw error instanceof KeyError ? problem(`the passphrase from ${from} does not unlock it`, error) : error;
  });
}

const TRUST_HINT = '--trust takes an armored public key: the NAME.pub.asc modmirror key create writes, or gpg --armor --export KEYID.';

/**
 * The keys a bundle's signature must be by: every --trust FILE, else the
 * config's trust: list; undefined when there are none (nothing is checked).
 */
export async function trustedKeys(values: { trust?: string[] | undefined }, config: { trust: TrustFile[] }): Promise<TrustedKey[] | undefined> {
  const flags = values.trust ?? [];
  const fromConfig = flags.length === 0;
  const files: TrustFile[] = fromConfig ? config.trust : flags.map((f) => ({ file: resolve(f), at: '--trust' }));
  if (files.length === 0) return undefined;
  const trusted: TrustedKey[] = [];
  for (const { file, at } of files) {
    const problem = (code: 'SOURCE_NOT_FOUND' | 'KEY_INVALID', message: string, cause?: unknown) =>
      fromConfig
        ? new MirrorError('CONFIG_INVALID', `${at}: ${message}`, { hint: 'trust: lists armored public key files, relative to the config file.', cause })
        : new MirrorError(code, `--trust ${message}`, { hint: TRUST_HINT, cause });
    if (!existsSync(file)) throw problem('SOURCE_NOT_FOUND', `${file}: the key file does not exist`);
    const keys = await readPublicKeys(file).catch((error: unknown) => {
      throw error instanceof KeyError ? problem('KEY_INVALID', error.message, error) : error;
    });
    if (keys.length === 0) throw problem('KEY_INVALID', `${file}: holds no public key`);
    trusted.push(...keys.map((key) => ({ key, file })));
  }
  return trusted;
}
