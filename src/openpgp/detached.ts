// Detached OpenPGP signatures of a file, ASCII-armored as `gpg --armor
// --detach-sign FILE` writes FILE.asc, so `gpg --verify FILE.asc FILE` checks
// them. The file is streamed, never held whole: a bundle can be larger than
// memory. (format: 'binary' on verify matters: openpgp.js otherwise decodes
// the data it hands back as UTF-8 text, ten times slower.)

import { createHash, type Hash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import type * as OpenPGP from 'openpgp';
import { messageOf } from '../errors.js';
import { keyIdOf, loadOpenpgp, statusOf, userIdOf, type PrivateSigningKey } from './keys.js';

/** A public key whose signatures are accepted, with the file it came from (for messages). */
export interface TrustedKey {
  key: OpenPGP.PublicKey;
  file: string;
}

/** The file's bytes as the web stream openpgp.js reads, each chunk also given to `seen`. */
function streamOf(file: string, seen?: (chunk: Buffer) => void): ReadableStream<Uint8Array> {
  const chunks = createReadStream(file, { highWaterMark: 1024 * 1024 })[Symbol.asyncIterator]() as AsyncIterator<Buffer, undefined>;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value, done } = await chunks.next();
      if (done) return controller.close();
      seen?.(value);
      controller.enqueue(new Uint8Array(value.buffer, value.byteOffset, value.length));
    },
    async cancel() {
      await chunks.return?.();
    },
  });
}

/** Reads a stream openpgp.js hands back to its end: its work (hashing) happens as it is read. `keep`: the parts are returned, else let go. */
async function drain<T>(stream: ReadableStream<T> | T, keep = true): Promise<T[]> {
  if (!(stream instanceof ReadableStream)) return [stream];
  const parts: T[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return parts;
    if (keep) parts.push(value);
  }
}

/** FILE's detached signature by `signer` (unlocked), armored. */
export function signFile(file: string, signer: PrivateSigningKey): Promise<string> {
  return sign(streamOf(file), signer);
}

/** The detached signature of bytes in memory (an object as a bucket holds it), armored. */
export function signBytes(bytes: Uint8Array, signer: PrivateSigningKey): Promise<string> {
  return sign(bytes, signer);
}

async function sign(data: ReadableStream<Uint8Array> | Uint8Array, signer: PrivateSigningKey): Promise<string> {
  const openpgp = await loadOpenpgp();
  const signature: unknown = await openpgp.sign({
    message: await openpgp.createMessage({ binary: data }),
    signingKeys: signer.key,
    detached: true,
    format: 'armored',
  });
  return (await drain(signature as ReadableStream<string>)).join('');
}

/** What a checked signature says: who signed, when, and the sha256 of the bytes it covers. */
export interface GoodSignature {
  ok: true;
  keyId: string;
  userId: string;
  created: Date | undefined;
  sha256: string;
}

/**
 * Why a signature is not accepted. `unreadable`: not an armored OpenPGP
 * signature (truncated, garbled, another file); `untrusted`: by a key not
 * among the trusted ones; `revoked`, `expired`: by a trusted key that is
 * revoked or expired now (or was when it signed); `future`: dated later than
 * `now` (one of the two clocks is wrong); `altered`: the file's bytes (or the
 * signature's) are not the ones the key signed.
 */
export interface BadSignature {
  ok: false;
  reason: 'unreadable' | 'untrusted' | 'revoked' | 'expired' | 'future' | 'altered';
  /** The key that made the signature, when it can be told. */
  keyId: string | undefined;
  detail: string;
}

/** An armored signature is a few hundred bytes; a file this large beside another is not one. */
const MAX_SIGNATURE_BYTES = 1024 * 1024;

/** No signature where one was looked for: `missing`, a BadSignature's reason like the others. */
export interface MissingSignature {
  ok: false;
  reason: 'missing';
  keyId: undefined;
  detail: string;
}

/** The armored signature in the file `asc` (FILE.asc beside FILE); `missing` when there is none, `unreadable` when it is too large to be one. */
export function readSignatureFile(asc: string): string | MissingSignature | BadSignature {
  if (!existsSync(asc)) return { ok: false, reason: 'missing', keyId: undefined, detail: `no ${basename(asc)}` };
  const size = statSync(asc).size;
  if (size > MAX_SIGNATURE_BYTES) return { ok: false, reason: 'unreadable', keyId: undefined, detail: `${size} bytes` };
  return readFileSync(asc, 'utf8');
}

/** The signature read and its key found among the trusted ones, valid now: what is left is to hash the data. */
interface Prepared {
  signature: OpenPGP.Signature;
  match: TrustedKey;
  issuer: OpenPGP.KeyID;
  keyId: string;
}

async function prepare(armored: string, trusted: TrustedKey[], now: Date): Promise<Prepared | BadSignature> {
  const openpgp = await loadOpenpgp();
  let signature: OpenPGP.Signature;
  try {
    signature = await openpgp.readSignature({ armoredSignature: armored });
  } catch (error) {
    return { ok: false, reason: 'unreadable', keyId: undefined, detail: messageOf(error) };
  }
  const issuers = signature.getSigningKeyIDs();
  if (issuers.length === 0) return { ok: false, reason: 'unreadable', keyId: undefined, detail: 'it names no key' };
  const match = trusted.find((t) => t.key.getKeyIDs().some((id) => issuers.some((issuer) => issuer.equals(id))));
  if (!match) {
    const ids = [...new Set(issuers.map((id) => id.toHex().toUpperCase()))];
    return { ok: false, reason: 'untrusted', keyId: ids.join(', '), detail: `trusted: ${trusted.map((t) => keyIdOf(t.key)).join(', ')}` };
  }
  const keyId = keyIdOf(match.key);
  const issuer = issuers.find((id) => match.key.getKeyIDs().some((own) => own.equals(id)))!;
  // Revocation and expiry as of now: a trusted key that has since been revoked or has expired vouches for nothing
  // new, whenever the signature says it was made (its date is the signer's to write).
  const status = await statusOf(match.key, now, issuer);
  if (status) return { ok: false, reason: status.includes('revoked') ? 'revoked' : 'expired', keyId, detail: status };
  return { signature, match, issuer, keyId };
}

/** Checks the data against a prepared signature; `hash` sees the data as it is read. */
async function checkData(prepared: Prepared, data: ReadableStream<Uint8Array>, hash: Hash, now: Date): Promise<GoodSignature | BadSignature> {
  const { signature, match, issuer, keyId } = prepared;
  const openpgp = await loadOpenpgp();
  try {
    const result = await openpgp.verify({
      message: await openpgp.createMessage({ binary: data }),
      signature,
      verificationKeys: match.key,
      format: 'binary',
      date: now,
    });
    // The data read back is the file itself: only its hashing is wanted, not its bytes kept.
    await drain(result.data as ReadableStream<Uint8Array>, false);
    // The trusted key's signature, when the file holds others too.
    const mine = result.signatures.find((s) => s.keyID.equals(issuer));
    if (!mine) return { ok: false, reason: 'unreadable', keyId, detail: 'it holds no signature of data' };
    await mine.verified;
    const created = (await mine.signature).packets[0]?.created ?? undefined;
    return { ok: true, keyId, userId: userIdOf(match.key), created, sha256: hash.digest('hex') };
  } catch (error) {
    const message = messageOf(error);
    // openpgp.js checks the key as of the signature's date too: expired or revoked then.
    if (/expired/i.test(message)) return { ok: false, reason: 'expired', keyId, detail: message };
    if (/revoked/i.test(message)) return { ok: false, reason: 'revoked', keyId, detail: message };
    if (/in the future/i.test(message)) {
      const made = signature.packets[0]?.created;
      return { ok: false, reason: 'future', keyId, detail: `signed ${made?.toISOString() ?? 'at an unknown time'}, now ${now.toISOString()}` };
    }
    return { ok: false, reason: 'altered', keyId, detail: message };
  }
}

/** Checks FILE against an armored detached signature, by one of `trusted`, as of `now`. */
export async function verifyFileSignature(file: string, armored: string, trusted: TrustedKey[], now = new Date()): Promise<GoodSignature | BadSignature> {
  const prepared = await prepare(armored, trusted, now);
  if ('ok' in prepared) return prepared;
  const hash = createHash('sha256');
  return checkData(
    prepared,
    streamOf(file, (chunk) => hash.update(chunk)),
    hash,
    now,
  );
}

/**
 * A signature check fed the signed bytes by a reader of the file's own (one
 * read of a large bundle serves both): `feed` each chunk in order, then `end`;
 * `result` says. `feed` returns a promise when the check is behind: the
 * reader waits for it, so what is read ahead stays a few chunks, not the
 * file. What can be told from the signature alone (unreadable, a key not
 * trusted, revoked or expired) is returned at once, before any byte.
 */
export interface FedCheck {
  feed(chunk: Buffer): Promise<void> | undefined;
  end(): void;
  /** The reader failed: the check is dropped. */
  abort(error: unknown): void;
  result: Promise<GoodSignature | BadSignature>;
}

/** Chunks queued for the check before its reader is asked to wait. */
const FED_AHEAD = 4;

export async function startSignatureCheck(armored: string, trusted: TrustedKey[], now = new Date()): Promise<FedCheck | BadSignature> {
  const prepared = await prepare(armored, trusted, now);
  if ('ok' in prepared) return prepared;
  const hash = createHash('sha256');
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let wanted: (() => void) | undefined;
  const more = () => {
    wanted?.();
    wanted = undefined;
  };
  const data = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c), pull: more }, { highWaterMark: FED_AHEAD });
  const result = checkData(prepared, data, hash, now);
  return {
    feed(chunk) {
      hash.update(chunk);
      controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length));
      return (controller.desiredSize ?? 1) > 0 ? undefined : new Promise((resolve) => (wanted = resolve));
    },
    end: () => controller.close(),
    abort(error) {
      controller.error(error);
      more();
    },
    result,
  };
}
