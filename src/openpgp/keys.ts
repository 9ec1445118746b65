// OpenPGP keys, for whatever modmirror signs or checks: in-house provider
// releases (providers/) and bundles (bundle/). Reading a key file says what
// is wrong with it in the user's terms (not a key, the other half, a key that
// cannot sign, a passphrase that does not unlock it), so each caller only adds
// which flag or config key named the file.

import { readFileSync } from 'node:fs';
import type * as OpenPGP from 'openpgp';
import { messageOf } from '../errors.js';

/** openpgp.js takes about 20 ms to load: only the commands that check or make a signature pay for it. */
export const loadOpenpgp = () => import('openpgp');

/** A key file that cannot serve as it was given; the message names the file and says why. */
export class KeyError extends Error {}

/** A public key as a registry's download document lists it. */
export interface SigningKey {
  /** The primary key's id, 16 upper-case hex digits (Terraform reports it). */
  keyId: string;
  asciiArmor: string;
}

/** The 16 upper-case hex digits gpg and Terraform show for a key. */
export const keyIdOf = (key: OpenPGP.Key): string => key.getKeyID().toHex().toUpperCase();

/** A key's first user ID, as gpg shows it ("Acme Release <release@acme.example>"), or '' when it has none. */
export const userIdOf = (key: OpenPGP.Key): string => key.getUserIDs()[0] ?? '';

export async function readKey(armor: string, name: string): Promise<OpenPGP.Key> {
  const openpgp = await loadOpenpgp();
  try {
    return await openpgp.readKey({ armoredKey: armor });
  } catch (error) {
    throw new KeyError(`error decoding signing key ${name}: ${messageOf(error)}`);
  }
}

function readArmor(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new KeyError(`${file}: cannot read the ${what}: ${messageOf(error)}`);
  }
}

/** An armored public key file as the key a download document lists. */
export async function readPublicKeyFile(file: string): Promise<SigningKey> {
  const armor = readArmor(file, 'public key');
  const key = await readKey(armor, file);
  if (key.isPrivate()) throw new KeyError(`${file}: is a private key; name its public half (gpg --armor --export KEYID)`);
  return { keyId: keyIdOf(key), asciiArmor: armor.trim() + '\n' };
}

/**
 * Every public key in an armored file (gpg --armor --export writes one block
 * holding each key it is given). A private key is refused: whoever holds the
 * file to check signatures must not be able to make them.
 */
export async function readPublicKeys(file: string): Promise<OpenPGP.PublicKey[]> {
  const openpgp = await loadOpenpgp();
  const armor = readArmor(file, 'public key');
  let keys: OpenPGP.Key[];
  try {
    keys = await openpgp.readKeys({ armoredKeys: armor });
  } catch (error) {
    throw new KeyError(`${file}: is not an armored OpenPGP public key (${messageOf(error)})`);
  }
  const secret = keys.find((k) => k.isPrivate());
  if (secret) throw new KeyError(`${file}: is a private key (key ID ${keyIdOf(secret)}); give its public half`);
  return keys;
}

/** Why a key should no longer sign: revoked or expired; undefined while it is good. */
export async function keyStatus(key: SigningKey, now = new Date()): Promise<string | undefined> {
  return statusOf(await readKey(key.asciiArmor, key.keyId), now);
}

/** As keyStatus, for a key already read; with `keyId`, that subkey's revocation and expiry count too. */
export async function statusOf(key: OpenPGP.Key, now = new Date(), keyId?: OpenPGP.KeyID): Promise<string | undefined> {
  const id = keyIdOf(key);
  if (await key.isRevoked(undefined, undefined, now)) return `key ${id} is revoked`;
  const expires = await key.getExpirationTime();
  if (expires instanceof Date && expires.getTime() <= now.getTime()) return `key ${id} expired on ${expires.toISOString()}`;
  const subkey = keyId && !key.getKeyID().equals(keyId) ? key.getSubkeys().find((s) => s.getKeyID().equals(keyId)) : undefined;
  if (!subkey) return undefined;
  try {
    // Revocation, expiry and its binding to the primary key, as of now.
    await subkey.verify(now);
  } catch (error) {
    return `key ${id}'s signing subkey ${subkey.getKeyID().toHex().toUpperCase()}: ${messageOf(error)}`;
  }
  return undefined;
}

/** A signing key: an armored private key file, unlocked with a passphrase that never leaves memory. */
export interface PrivateSigningKey {
  key: OpenPGP.PrivateKey;
  public: SigningKey;
}

/** A private key file, read without its passphrase: its public half is known before anything is signed. */
export async function readPrivateKeyFile(file: string): Promise<PrivateSigningKey> {
  const openpgp = await loadOpenpgp();
  const armor = readArmor(file, 'signing key');
  let key: OpenPGP.Key;
  try {
    key = await openpgp.readKey({ armoredKey: armor });
  } catch (error) {
    throw new KeyError(`${file}: not an armored OpenPGP private key (${messageOf(error)})`);
  }
  if (!key.isPrivate())
    throw new KeyError(`${file}: is a public key (key ID ${keyIdOf(key)}); signing needs its private half (gpg --armor --export-secret-keys KEYID)`);
  const publicKey = key.toPublic();
  return { key, public: { keyId: keyIdOf(publicKey), asciiArmor: publicKey.armor() } };
}

/** Refuses a key that cannot make a signature today: no key usable for signing, or expired, or revoked. */
export async function checkCanSign(signer: PrivateSigningKey, file: string): Promise<void> {
  try {
    await signer.key.getSigningKey();
  } catch (error) {
    throw new KeyError(`${file}: key ${signer.public.keyId} cannot sign (${messageOf(error)})`);
  }
}

/** The key unlocked for signing; only when something needs a signature is the passphrase asked for. */
export async function unlockSigningKey(signer: PrivateSigningKey, file: string, passphrase: string | undefined): Promise<PrivateSigningKey> {
  const openpgp = await loadOpenpgp();
  if (signer.key.isDecrypted()) return signer;
  if (passphrase === undefined) throw new KeyError(`${file}: the signing key is protected by a passphrase, and none is set`);
  try {
    return { ...signer, key: await openpgp.decryptKey({ privateKey: signer.key, passphrase }) };
  } catch (error) {
    throw new KeyError(`${file}: cannot unlock the signing key: ${messageOf(error)}`);
  }
}

/**
 * The kinds of key `generateSigningKey` makes. `rsa4096` is read by every
 * OpenPGP implementation, Terraform's provider check among them
 * (golang.org/x/crypto/openpgp knows no Ed25519); `curve25519` is Ed25519
 * signing (with a Curve25519 encryption subkey), as `gpg --quick-gen-key`
 * makes by default: a small key, made in milliseconds, that GnuPG 2.1 and
 * later reads.
 */
export const KEY_ALGORITHMS = ['rsa4096', 'curve25519'] as const;
export type KeyAlgorithm = (typeof KEY_ALGORITHMS)[number];

/**
 * A new key pair for signing, the private half armored and locked with
 * `passphrase`, and its revocation certificate (as gpg keeps one for each key
 * it makes): whoever imports it into the public key revokes the key.
 */
export async function generateSigningKey(
  userId: { name: string; email?: string },
  passphrase: string,
  options: { expiresInSeconds?: number; algorithm?: KeyAlgorithm } = {},
): Promise<{ publicArmor: string; privateArmor: string; revocationArmor: string; keyId: string; fingerprint: string }> {
  const openpgp = await loadOpenpgp();
  const { expiresInSeconds, algorithm = 'rsa4096' } = options;
  let made: { publicKey: string; privateKey: string; revocationCertificate: string };
  try {
    made = await openpgp.generateKey({
      ...(algorithm === 'rsa4096' ? { type: 'rsa' as const, rsaBits: 4096 } : { type: 'ecc' as const, curve: 'curve25519Legacy' as const }),
      userIDs: [userId],
      passphrase,
      format: 'armored',
      ...(expiresInSeconds ? { keyExpirationTime: expiresInSeconds } : {}),
    });
  } catch (error) {
    // openpgp.js refuses a user ID it would write malformed, such as an e-mail address without a domain.
    throw new KeyError(`cannot make the key: ${messageOf(error)}`);
  }
  const key = await openpgp.readKey({ armoredKey: made.publicKey });
  return {
    publicArmor: made.publicKey,
    privateArmor: made.privateKey,
    revocationArmor: made.revocationCertificate,
    keyId: keyIdOf(key),
    fingerprint: key.getFingerprint().toUpperCase(),
  };
}
