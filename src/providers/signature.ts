// A provider release's authentication as Terraform checks it before it
// installs a package from a registry (internal/getproviders
// package_authentication.go): the SHA256SUMS line for the package's file
// equals its shasum, the zip's sha256 equals it, and SHA256SUMS carries a
// binary detached OpenPGP signature by one of the keys the registry lists.
// sync makes these checks before it keeps an upstream's package, publish and
// build before they keep an in-house release, verify repeats them on the
// mirror, and a release that comes unsigned is signed here with the site's
// own key. One implementation for all of them.

import { readFileSync } from 'node:fs';
import type * as OpenPGP from 'openpgp';
import { messageOf } from '../errors.js';

// openpgp.js takes about 20 ms to load: only the commands that check or make a signature pay for it.
const openpgpLibrary = () => import('openpgp');

/** A public key as a registry's download document lists it. */
export interface SigningKey {
  /** The primary key's id, 16 upper-case hex digits (Terraform reports it). */
  keyId: string;
  asciiArmor: string;
}

/** A check that failed, in Terraform's wording; callers add which file or package it is about. */
export class AuthenticationError extends Error {}

/** No key to check the signature with: the caller says where keys should have come from. */
export class NoSigningKeyError extends AuthenticationError {}

/** Check 1: the checksum list's line for `filename` names `shasum` (lower-case hex). */
export function checkChecksumList(document: Buffer, filename: string, shasum: string): void {
  const listed = checksumOf(document, filename);
  if (listed === undefined) throw new AuthenticationError(`checksum list has no SHA-256 hash for ${JSON.stringify(filename)}`);
  if (!/^[0-9a-fA-F]{64}$/.test(listed)) throw new AuthenticationError(`checksum list has invalid SHA256 hash ${JSON.stringify(listed)}`);
  if (listed.toLowerCase() !== shasum) throw new AuthenticationError(`checksum list has unexpected SHA-256 hash ${listed.toLowerCase()} (expected ${shasum})`);
}

/**
 * A checksum list's entries read as Terraform reads them (sha256sum's `HEX  NAME`
 * lines split on white space, `*` marking binary mode): [name, hash as written].
 */
export function checksumEntries(document: Buffer): [string, string][] {
  const entries: [string, string][] = [];
  for (const line of document.toString('latin1').split('\n')) {
    const fields = line.trim().split(/\s+/);
    if (fields.length > 1) entries.push([fields[1]!.replace(/^\*/, ''), fields[0]!]);
  }
  return entries;
}

/** The hash a checksum list gives `filename`. */
export function checksumOf(document: Buffer, filename: string): string | undefined {
  return checksumEntries(document).find(([name]) => name === filename)?.[1];
}

/** Check 2, given the zip's sha256. */
export function checkArchiveChecksum(actual: string, shasum: string): void {
  if (actual !== shasum) throw new AuthenticationError(`archive has incorrect SHA-256 checksum ${actual} (expected ${shasum})`);
}

/**
 * Check 3: which of `keys` made the binary detached signature over the
 * checksum list; its key id. A signature by a key not among them is "from
 * unknown issuer", naming the key that made it.
 */
export async function verifyChecksumSignature(
  document: Buffer,
  signatureBytes: Buffer,
  keys: SigningKey[],
  options: { keysAre?: string } = {},
): Promise<string> {
  const openpgp = await openpgpLibrary();
  // Who listed the keys, for messages: an upstream registry (sync) or the publisher's configuration.
  const keysAre = options.keysAre ?? 'the registry lists';
  if (keys.length === 0) throw new NoSigningKeyError(`${keysAre} no signing key (signing_keys.gpg_public_keys), so the package cannot be authenticated`);
  let signature: OpenPGP.Signature;
  try {
    signature = await openpgp.readSignature({ binarySignature: signatureBytes });
  } catch (error) {
    throw new AuthenticationError(`error checking signature: the signature file is not a binary OpenPGP signature (${messageOf(error)})`);
  }
  const signedBy = signature.getSigningKeyIDs();
  for (const key of keys) {
    const publicKey = await readKey(key.asciiArmor, key.keyId);
    if (!publicKey.getKeyIDs().some((id) => signedBy.some((s) => s.equals(id)))) continue;
    try {
      // Checked as of when it was made: a release signed while its key was valid stays valid after the key
      // expires (rotation); verify reports expired and revoked keys separately (signingKeyWarnings).
      const made = signature.packets[0]?.created ?? undefined;
      const result = await openpgp.verify({
        message: await openpgp.createMessage({ binary: document }),
        signature,
        verificationKeys: publicKey,
        expectSigned: true,
        ...(made ? { date: made } : {}),
      });
      await result.signatures[0]?.verified;
    } catch (error) {
      throw new AuthenticationError(`error checking signature: ${messageOf(error)}`);
    }
    return key.keyId;
  }
  const ids = signedBy.map((id) => id.toHex().toUpperCase());
  throw new AuthenticationError(
    `authentication signature from unknown issuer (signed by ${ids.join(', ') || 'no key id'}; ${keysAre} ${keys.map((k) => k.keyId || 'a key without id').join(', ')})`,
  );
}

/** An armored public key file as the key a download document lists. */
export async function readPublicKeyFile(file: string): Promise<SigningKey> {
  let armor: string;
  try {
    armor = readFileSync(file, 'utf8');
  } catch (error) {
    throw new AuthenticationError(`${file}: cannot read the public key: ${messageOf(error)}`);
  }
  const key = await readKey(armor, file);
  if (key.isPrivate()) throw new AuthenticationError(`${file}: is a private key; name its public half (gpg --armor --export KEYID)`);
  return { keyId: key.getKeyID().toHex().toUpperCase(), asciiArmor: armor.trim() + '\n' };
}

/** Why a key should no longer sign: revoked or expired; undefined while it is good. */
export async function keyStatus(key: SigningKey, now = new Date()): Promise<string | undefined> {
  const publicKey = await readKey(key.asciiArmor, key.keyId);
  if (await publicKey.isRevoked(undefined, undefined, now)) return `key ${key.keyId} is revoked`;
  const expires = await publicKey.getExpirationTime();
  if (expires instanceof Date && expires.getTime() <= now.getTime()) return `key ${key.keyId} expired on ${expires.toISOString()}`;
  return undefined;
}

/** The site's signing key: an armored private key file, unlocked with a passphrase that never leaves memory. */
export interface PrivateSigningKey {
  key: OpenPGP.PrivateKey;
  public: SigningKey;
}

/** The site's key file, read without its passphrase: its public half is known before anything is signed. */
export async function readPrivateKeyFile(file: string): Promise<PrivateSigningKey> {
  const openpgp = await openpgpLibrary();
  let armor: string;
  try {
    armor = readFileSync(file, 'utf8');
  } catch (error) {
    throw new AuthenticationError(`${file}: cannot read the signing key: ${messageOf(error)}`);
  }
  let key: OpenPGP.PrivateKey;
  try {
    key = await openpgp.readPrivateKey({ armoredKey: armor });
  } catch (error) {
    throw new AuthenticationError(`${file}: not an armored OpenPGP private key (${messageOf(error)})`);
  }
  const publicKey = key.toPublic();
  return { key, public: { keyId: publicKey.getKeyID().toHex().toUpperCase(), asciiArmor: publicKey.armor() } };
}

/** The key unlocked for signing; only when a release needs a signature is the passphrase asked for. */
export async function unlockSigningKey(signer: PrivateSigningKey, file: string, passphrase: string | undefined): Promise<PrivateSigningKey> {
  const openpgp = await openpgpLibrary();
  if (signer.key.isDecrypted()) return signer;
  if (passphrase === undefined) throw new AuthenticationError(`${file}: the signing key is protected by a passphrase, and none is set`);
  try {
    return { ...signer, key: await openpgp.decryptKey({ privateKey: signer.key, passphrase }) };
  } catch (error) {
    throw new AuthenticationError(`${file}: cannot unlock the signing key: ${messageOf(error)}`);
  }
}

/** A binary detached signature of the checksum list, as GoReleaser's `gpg --detach-sign` makes it. */
export async function signChecksums(document: Buffer, signer: PrivateSigningKey): Promise<Buffer> {
  const openpgp = await openpgpLibrary();
  // unknown: openpgp's types name stream types from a package it does not install.
  const signature: unknown = await openpgp.sign({
    message: await openpgp.createMessage({ binary: document }),
    signingKeys: signer.key,
    detached: true,
    format: 'binary',
  });
  return Buffer.from(signature as Uint8Array);
}

async function readKey(armor: string, name: string): Promise<OpenPGP.Key> {
  const openpgp = await openpgpLibrary();
  try {
    return await openpgp.readKey({ armoredKey: armor });
  } catch (error) {
    throw new AuthenticationError(`error decoding signing key ${name}: ${messageOf(error)}`);
  }
}

/**
 * A new key pair for signing provider releases: RSA (every OpenPGP library
 * Terraform has used reads it), signing only, the private half armored and
 * locked with `passphrase`.
 */
export async function generateSigningKey(
  userId: { name: string; email?: string },
  passphrase: string,
  expiresInSeconds?: number,
): Promise<{ publicArmor: string; privateArmor: string; keyId: string }> {
  const openpgp = await openpgpLibrary();
  const { publicKey, privateKey } = await openpgp.generateKey({
    type: 'rsa',
    rsaBits: 4096,
    userIDs: [userId],
    passphrase,
    format: 'armored',
    ...(expiresInSeconds ? { keyExpirationTime: expiresInSeconds } : {}),
  });
  const keyId = (await openpgp.readKey({ armoredKey: publicKey })).getKeyID().toHex().toUpperCase();
  return { publicArmor: publicKey, privateArmor: privateKey, keyId };
}
