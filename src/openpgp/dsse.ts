// DSSE envelopes (github.com/secure-systems-lab/dsse), as in-toto attestations
// travel: the payload base64-encoded, each signature made over DSSE's
// pre-authentication encoding (PAE) of the payload type and payload, so a
// signature cannot be replayed onto a payload of another type. modmirror signs
// with OpenPGP keys: `sig` is the base64 of a binary detached OpenPGP
// signature of the PAE bytes (`gpg --verify sig pae` checks it), `keyid` the
// signing key's fingerprint.

import type * as OpenPGP from 'openpgp';
import { messageOf } from '../errors.js';
import type { TrustedKey } from './detached.js';
import { keyIdOf, loadOpenpgp, statusOf, type PrivateSigningKey } from './keys.js';

export interface DsseSignature {
  keyid: string;
  sig: string;
}

export interface DsseEnvelope {
  payloadType: string;
  payload: string;
  signatures: DsseSignature[];
}

/** DSSE's PAE: "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, lengths in decimal bytes. */
export function pae(payloadType: string, payload: Buffer): Buffer {
  const type = Buffer.from(payloadType, 'utf8');
  return Buffer.concat([Buffer.from(`DSSEv1 ${type.length} `), type, Buffer.from(` ${payload.length} `), payload]);
}

/** An envelope of `payload`, signed by `signer` when one is given (else with no signatures). */
export async function envelopeOf(payloadType: string, payload: Buffer, signer: PrivateSigningKey | undefined): Promise<DsseEnvelope> {
  const signatures: DsseSignature[] = [];
  if (signer) {
    const openpgp = await loadOpenpgp();
    const sig: unknown = await openpgp.sign({
      message: await openpgp.createMessage({ binary: pae(payloadType, payload) }),
      signingKeys: signer.key,
      detached: true,
      format: 'binary',
      // SHA-256, which every DSSE verifier takes (securesystemslib's GPG check knows no other), rather than the key's preference.
      config: { preferredHashAlgorithm: openpgp.enums.hash.sha256 },
    });
    signatures.push({ keyid: signer.key.getFingerprint().toUpperCase(), sig: Buffer.from(sig as Uint8Array).toString('base64') });
  }
  return { payloadType, payload: payload.toString('base64'), signatures };
}

/** Reads an envelope's JSON, or says why it is not one. */
export function parseEnvelope(text: string): DsseEnvelope | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return `not JSON (${messageOf(error)})`;
  }
  const e = value as Partial<DsseEnvelope> | null;
  if (typeof e !== 'object' || e === null || typeof e.payloadType !== 'string' || typeof e.payload !== 'string' || !Array.isArray(e.signatures))
    return 'not a DSSE envelope (payloadType, payload and signatures)';
  if (!e.signatures.every((s) => typeof s?.keyid === 'string' && typeof s?.sig === 'string')) return 'a signature lacks its keyid or sig';
  return e as DsseEnvelope;
}

export type EnvelopeCheck = { ok: true; keyId: string } | { ok: false; detail: string };

/**
 * Whether one of the envelope's signatures is a good one by a trusted key, as
 * of `now`: the key neither revoked nor expired, the signature over the PAE of
 * this payload type and payload.
 */
export async function verifyEnvelope(envelope: DsseEnvelope, trusted: TrustedKey[], now = new Date()): Promise<EnvelopeCheck> {
  if (envelope.signatures.length === 0) return { ok: false, detail: 'it is not signed' };
  const openpgp = await loadOpenpgp();
  const data = pae(envelope.payloadType, Buffer.from(envelope.payload, 'base64'));
  const problems: string[] = [];
  for (const { keyid, sig } of envelope.signatures) {
    let signature: OpenPGP.Signature;
    try {
      signature = await openpgp.readSignature({ binarySignature: Buffer.from(sig, 'base64') });
    } catch (error) {
      problems.push(`${keyid}: not an OpenPGP signature (${messageOf(error)})`);
      continue;
    }
    const issuers = signature.getSigningKeyIDs();
    const match = trusted.find((t) => t.key.getKeyIDs().some((id) => issuers.some((issuer) => issuer.equals(id))));
    if (!match) {
      problems.push(`signed by ${issuers.map((id) => id.toHex().toUpperCase()).join(', ') || keyid}, which is not a trusted key`);
      continue;
    }
    const issuer = issuers.find((id) => match.key.getKeyIDs().some((own) => own.equals(id)))!;
    const status = await statusOf(match.key, now, issuer);
    if (status) {
      problems.push(`signed by ${keyIdOf(match.key)}: ${status}`);
      continue;
    }
    try {
      const result = await openpgp.verify({
        message: await openpgp.createMessage({ binary: data }),
        signature,
        verificationKeys: match.key,
        format: 'binary',
        date: now,
      });
      await result.signatures[0]!.verified;
      return { ok: true, keyId: keyIdOf(match.key) };
    } catch (error) {
      problems.push(`signed by ${keyIdOf(match.key)}, but the signature does not match the payload (${messageOf(error)})`);
    }
  }
  return { ok: false, detail: problems.join('; ') };
}
