// A provider release's authentication as Terraform checks it before it
// installs a package from a registry (internal/getproviders
// package_authentication.go): the SHA256SUMS line for the package's file
// equals its shasum, the zip's sha256 equals it, and SHA256SUMS carries a
// binary detached OpenPGP signature by one of the keys the registry lists.
// sync makes these checks before it keeps an upstream's package, publish and
// build before they keep an in-house release, verify repeats them on the
// mirror, and a release that comes unsigned is signed here with the site's
// own key. One implementation for all of them; the keys themselves are
// ../openpgp/keys.ts's.

import type * as OpenPGP from 'openpgp';
import { messageOf } from '../errors.js';
import { loadOpenpgp, readKey, type PrivateSigningKey, type SigningKey } from '../openpgp/keys.js';

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
  const openpgp = await loadOpenpgp();
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
    // A key that does not decode fails the check, in the same terms as a bad signature.
    const publicKey = await readKey(key.asciiArmor, key.keyId).catch((error: unknown) => {
      throw new AuthenticationError(messageOf(error));
    });
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

/** A binary detached signature of the checksum list, as GoReleaser's `gpg --detach-sign` makes it. */
export async function signChecksums(document: Buffer, signer: PrivateSigningKey): Promise<Buffer> {
  const openpgp = await loadOpenpgp();
  // unknown: openpgp's types name stream types from a package it does not install.
  const signature: unknown = await openpgp.sign({
    message: await openpgp.createMessage({ binary: document }),
    signingKeys: signer.key,
    detached: true,
    format: 'binary',
  });
  return Buffer.from(signature as Uint8Array);
}
