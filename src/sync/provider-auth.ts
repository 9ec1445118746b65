// The checks Terraform makes before it installs a provider package from a
// registry (internal/getproviders package_authentication.go), repeated by
// sync before it keeps anything, in Terraform's order and wording:
//   1. the SHA256SUMS line for the package's filename equals the registry's shasum;
//   2. the zip's sha256 equals that shasum;
//   3. SHA256SUMS carries a binary detached OpenPGP signature by one of the
//      keys the registry lists for the package.
// OpenTofu makes the same checks, but skips the signature for providers of
// registry.opentofu.org that list no key (unless OPENTOFU_ENFORCE_GPG_VALIDATION);
// a mirror keeps only verified bytes, so sync never skips it.

import * as openpgp from 'openpgp';
import { MirrorError, messageOf } from '../errors.js';
import type { SigningKey } from './provider-upstream.js';

const refused = (what: string, message: string, hint?: string) =>
  new MirrorError('UPSTREAM_FAILED', `${what}: ${message}`, { hint: hint ?? 'Nothing was stored for this package; the upstream serves something other than what it signed.' });

/** Check 1: the line of the checksum list for `filename` names `shasum`. */
export function checkChecksumList(document: Buffer, filename: string, shasum: string, what: string): void {
  let listed: string | undefined;
  for (const line of document.toString('latin1').split('\n')) {
    const fields = line.trim().split(/\s+/);
    if (fields.length > 1 && fields[1] === filename) {
      listed = fields[0]!;
      break;
    }
  }
  if (listed === undefined) throw refused(what, `checksum list has no SHA-256 hash for ${JSON.stringify(filename)}`);
  if (!/^[0-9a-fA-F]{64}$/.test(listed)) throw refused(what, `checksum list has invalid SHA256 hash ${JSON.stringify(listed)}`);
  if (listed.toLowerCase() !== shasum) throw refused(what, `checksum list has unexpected SHA-256 hash ${listed.toLowerCase()} (expected ${shasum})`);
}

/** Check 2, given the zip's sha256 as computed while it was downloaded. */
export function checkArchiveChecksum(got: string, shasum: string, what: string): void {
  if (got !== shasum) throw refused(what, `archive has incorrect SHA-256 checksum ${got} (expected ${shasum})`, 'Nothing was stored for this package; sync fetches it again on the next run.');
}

/**
 * Check 3: which listed key made the binary detached signature over the
 * checksum list; its key id. A signature by a key the registry does not list
 * is "from unknown issuer"; any other failure is final.
 */
export async function verifyChecksumSignature(document: Buffer, signatureBytes: Buffer, keys: SigningKey[], what: string): Promise<string> {
  if (keys.length === 0) throw refused(what, 'the registry lists no signing key (signing_keys.gpg_public_keys), so the package cannot be authenticated', 'sync keeps only signed packages; ask the upstream to publish its signing key.');
  let signature: openpgp.Signature;
  try {
    signature = await openpgp.readSignature({ binarySignature: signatureBytes });
  } catch (error) {
    throw refused(what, `error checking signature: the signature file is not a binary OpenPGP signature (${messageOf(error)})`);
  }
  for (const key of keys) {
    let publicKey: openpgp.Key;
    try {
      publicKey = await openpgp.readKey({ armoredKey: key.asciiArmor });
    } catch (error) {
      throw refused(what, `error decoding signing key${key.keyId === '' ? '' : ` ${key.keyId}`}: ${messageOf(error)}`);
    }
    const signedBy = signature.getSigningKeyIDs();
    if (!publicKey.getKeyIDs().some((id) => signedBy.some((s) => s.equals(id)))) continue;
    try {
      const result = await openpgp.verify({ message: await openpgp.createMessage({ binary: document }), signature, verificationKeys: publicKey, expectSigned: true });
      return result.signatures[0]?.keyID.toHex().toUpperCase() ?? publicKey.getKeyID().toHex().toUpperCase();
    } catch (error) {
      throw refused(what, `error checking signature: ${messageOf(error)}`);
    }
  }
  const ids = signature.getSigningKeyIDs().map((id) => id.toHex().toUpperCase());
  throw refused(what, `authentication signature from unknown issuer (signed by ${ids.join(', ') || 'no key id'}; the registry lists ${keys.map((k) => k.keyId || 'a key without id').join(', ')})`);
}
