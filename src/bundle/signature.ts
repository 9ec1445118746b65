// A bundle's signature: BUNDLE.asc beside BUNDLE, the ASCII-armored detached
// OpenPGP signature `gpg --verify BUNDLE.asc BUNDLE` checks. `bundle
// --sign-key` writes it; `unbundle --trust` refuses, before anything is
// written, a bundle whose signature does not show that a trusted key signed
// these very bytes, naming why and which key.

import { rm } from 'node:fs/promises';
import { basename } from 'node:path';
import { writeFileAtomic } from '../atomic.js';
import type { RawReader } from './read.js';
import { MirrorError } from '../errors.js';
import { readSignatureFile, signFile, startSignatureCheck, type BadSignature, type MissingSignature, type TrustedKey } from '../openpgp/detached.js';
import { keyIdOf, type PrivateSigningKey } from '../openpgp/keys.js';

/** Where a bundle's signature is: the bundle's own name and `.asc`, as gpg names a detached armored signature. */
export const signatureFileOf = (bundle: string): string => `${bundle}.asc`;

/**
 * Signs `bytes` (the bundle, written but not yet in place) and writes the
 * signature as `bundle`'s, replacing an older one. Without a signer, an older
 * signature beside `bundle` is removed: it signed other bytes.
 */
export async function writeBundleSignature(bytes: string, bundle: string, signer: PrivateSigningKey | undefined): Promise<void> {
  const file = signatureFileOf(bundle);
  if (!signer) return rm(file, { force: true });
  await writeFileAtomic(file, await signFile(bytes, signer));
}

/** Who signed a bundle unbundle accepted, and the sha256 of the bytes the signature covers. */
export interface BundleSignature {
  keyId: string;
  userId: string;
  sha256: string;
}

/**
 * Reads the bundle with `read` (handed each chunk of the file to show the
 * check), once, checking its signature against `trusted` on those very
 * bytes: a MirrorError (BUNDLE_UNTRUSTED) saying why it is refused. What the
 * signature alone tells (none, unreadable, a key not trusted, revoked or
 * expired) refuses it before a byte of the bundle is read.
 */
export async function readSignedBundle<T>(
  file: string,
  trusted: TrustedKey[],
  read: (raw: RawReader) => Promise<T>,
): Promise<{ signature: BundleSignature; read: T }> {
  const armored = readSignatureFile(signatureFileOf(file));
  const check = typeof armored === 'string' ? await startSignatureCheck(armored, trusted) : armored;
  if ('ok' in check) throw refusal(file, check, trusted);
  let value: T;
  try {
    value = await read((chunk) => check.feed(chunk));
  } catch (error) {
    check.abort(error);
    throw error;
  }
  check.end();
  const result = await check.result;
  if (!result.ok) throw refusal(file, result, trusted);
  return { signature: { keyId: result.keyId, userId: result.userId, sha256: result.sha256 }, read: value };
}

function refusal(file: string, result: BadSignature | MissingSignature, trusted: TrustedKey[]): MirrorError {
  const name = basename(signatureFileOf(file));
  const refuse = (why: string, hint: string) => new MirrorError('BUNDLE_UNTRUSTED', `Refusing ${file}: ${why}. Nothing was changed.`, { hint });
  const signer = `key ${result.keyId ?? '(unknown)'}`;
  switch (result.reason) {
    case 'missing':
      return refuse(
        `it is not signed: there is no ${name} beside it (trusted keys: ${trusted.map((t) => keyIdOf(t.key)).join(', ')})`,
        `Carry in the ${name} that modmirror bundle --sign-key wrote beside the bundle, or make the bundle again with --sign-key.`,
      );
    case 'unreadable':
      return refuse(
        `its signature ${name} cannot be read, so no key can be named (${result.detail}); it is truncated, damaged or not an OpenPGP signature`,
        `Copy ${name} again from the outside, or make the bundle again with --sign-key.`,
      );
    case 'untrusted':
      return refuse(
        `it is signed by ${signer}, which is not trusted (${result.detail})`,
        'Trust a key only once you have checked its fingerprint with whoever holds it: then add its public key with --trust FILE or to trust: in the config.',
      );
    case 'revoked':
      return refuse(
        `it is signed by ${signer}, which is revoked (${result.detail})`,
        'A revoked key vouches for nothing: make the bundle again, signed with a key the inside trusts that is not revoked.',
      );
    case 'expired':
      return refuse(
        `it is signed by ${signer}, which has expired (${result.detail})`,
        "Sign the bundle with a current key and trust its public key inside; or extend the key's expiry (gpg --quick-set-expire) and bring the inside its updated public key.",
      );
    case 'future':
      return refuse(
        `it is signed by ${signer} at a time later than this machine's clock (${result.detail})`,
        "One of the two clocks is wrong: set this machine's clock right and unbundle again, or sign the bundle again once the outside's clock is right.",
      );
    case 'altered':
      return refuse(
        `its bytes are not the ones ${signer} signed (${result.detail}): the bundle or ${name} changed after it was signed`,
        'Copy the bundle and its signature again, and compare the sha256 with the one modmirror bundle printed; if they match, the bundle was changed before it was copied: make it again.',
      );
  }
}
