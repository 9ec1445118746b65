// A bundle's signature: BUNDLE.asc beside BUNDLE, the ASCII-armored detached
// OpenPGP signature `gpg --verify BUNDLE.asc BUNDLE` checks. `bundle
// --sign-key` writes it; `unbundle --trust` refuses, before anything is
// written, a bundle whose signature does not show that a trusted key signed
// these very bytes, naming why and which key.

import { existsSync, statSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { basename } from 'node:path';
import { writeFileAtomic } from '../atomic.js';
import { MirrorError } from '../errors.js';
import { signFile, verifyFileSignature, type TrustedKey } from '../openpgp/detached.js';
import { keyIdOf, type PrivateSigningKey } from '../openpgp/keys.js';

/** Where a bundle's signature is: the bundle's own name and `.asc`, as gpg names a detached armored signature. */
export const signatureFileOf = (bundle: string): string => `${bundle}.asc`;

/** An armored signature is a few hundred bytes; anything this large is not one. */
const MAX_SIGNATURE_BYTES = 1024 * 1024;

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

/** The bundle's signature, checked against `trusted`; a MirrorError (BUNDLE_UNTRUSTED) saying why it is refused. */
export async function checkBundleSignature(file: string, trusted: TrustedKey[]): Promise<BundleSignature> {
  const asc = signatureFileOf(file);
  const name = basename(asc);
  const trustedIds = trusted.map((t) => keyIdOf(t.key)).join(', ');
  const refuse = (why: string, hint: string) => new MirrorError('BUNDLE_UNTRUSTED', `Refusing ${file}: ${why}. Nothing was changed.`, { hint });
  if (!existsSync(asc)) {
    throw refuse(
      `it is not signed: there is no ${name} beside it (trusted keys: ${trustedIds})`,
      `Carry in the ${name} that modmirror bundle --sign-key wrote beside the bundle, or make the bundle again with --sign-key.`,
    );
  }
  const unreadable = (detail: string) =>
    refuse(
      `its signature ${name} cannot be read, so no key can be named (${detail}); it is truncated, damaged or not an OpenPGP signature`,
      `Copy ${name} again from the outside, or make the bundle again with --sign-key.`,
    );
  if (statSync(asc).size > MAX_SIGNATURE_BYTES) throw unreadable(`${statSync(asc).size} bytes`);
  const result = await verifyFileSignature(file, readFileSync(asc, 'utf8'), trusted);
  if (result.ok) return { keyId: result.keyId, userId: result.userId, sha256: result.sha256 };
  const signer = (keyId: string | undefined) => `key ${keyId ?? '(unknown)'}`;
  switch (result.reason) {
    case 'unreadable':
      throw unreadable(result.detail);
    case 'untrusted':
      throw refuse(
        `it is signed by ${signer(result.keyId)}, which is not trusted (${result.detail})`,
        'Trust a key only once you have checked its fingerprint with whoever holds it: then add its public key with --trust FILE or to trust: in the config.',
      );
    case 'revoked':
      throw refuse(
        `it is signed by ${signer(result.keyId)}, which is revoked (${result.detail})`,
        'A revoked key vouches for nothing: make the bundle again, signed with a key the inside trusts that is not revoked.',
      );
    case 'expired':
      throw refuse(
        `it is signed by ${signer(result.keyId)}, which has expired (${result.detail})`,
        "Sign the bundle with a current key and trust its public key inside; or extend the key's expiry (gpg --quick-set-expire) and bring the inside its updated public key.",
      );
    case 'future':
      throw refuse(
        `it is signed by ${signer(result.keyId)} at a time later than this machine's clock (${result.detail})`,
        "One of the two clocks is wrong: set this machine's clock right and unbundle again, or sign the bundle again once the outside's clock is right.",
      );
    case 'altered':
      throw refuse(
        `its bytes are not the ones ${signer(result.keyId)} signed (${result.detail}): the bundle or ${name} changed after it was signed`,
        'Copy the bundle and its signature again, and compare the sha256 with the one modmirror bundle printed; if they match, the bundle was changed before it was copied: make it again.',
      );
  }
}
