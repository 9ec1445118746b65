// Signed, expiring archive URLs for a private registry. Terraform fetches the
// archive named in X-Terraform-Get with go-getter, which sends no registry
// token, so the download answer hands out the archive's URL with an expiry
// and the id of the token it was issued to, and an HMAC-SHA256 over the three
// (the server checks at fetch time that the token still reads the file). The key is the
// mirror's own, kept in the data folder (created on the server's first start;
// `modmirror signing-key rotate` replaces it, voiding every URL signed before).

import { createHmac, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { writeFileAtomicWith } from '../atomic.js';
import { MirrorError } from '../errors.js';
import { fileStamp, Looks } from '../file-stamp.js';
import { sameSecret } from '../management/auth.js';

export const SIGNING_KEY_FILE = 'archive-signing.key';
const KEY_BYTES = 32;

export type SignatureCheck = { status: 'valid'; token: string } | { status: 'absent' | 'expired' | 'invalid' };

const newKeyText = () => `${randomBytes(KEY_BYTES).toString('base64url')}\n`;

/** The mirror's key, made when missing; re-read when another process (the rotate command) replaced it. */
export class ArchiveSigner {
  private readonly file: string;
  private key: Buffer;
  private stamp: string | undefined;
  private readonly looks = new Looks();

  constructor(dataDir: string) {
    this.file = join(dataDir, SIGNING_KEY_FILE);
    mkdirSync(dataDir, { recursive: true });
    try {
      // `wx`: two servers starting at once over one data folder must not make two keys.
      writeFileSync(this.file, newKeyText(), { flag: 'wx', mode: 0o600 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    this.key = this.load();
  }

  /** `?expires=UNIX&token=ID&signature=HMAC` for the archive at `path` (its URL path, `/v1/modules/...`), issued to the token `token` (its id). */
  query(path: string, ttlSeconds: number, token: string, now = Date.now()): string {
    const expires = Math.floor(now / 1000) + ttlSeconds;
    return `expires=${expires}&token=${encodeURIComponent(token)}&signature=${this.sign(path, expires, token)}`;
  }

  check(path: string, query: URLSearchParams, now = Date.now()): SignatureCheck {
    const expires = query.get('expires');
    const signature = query.get('signature');
    const token = query.get('token');
    if (expires === null && signature === null && token === null) return { status: 'absent' };
    if (expires === null || signature === null || token === null || !/^\d{1,12}$/.test(expires)) return { status: 'invalid' };
    // Checked before the expiry, so an altered URL is told apart from an old one.
    if (!sameSecret(this.sign(path, Number(expires), token), signature)) return { status: 'invalid' };
    return Number(expires) * 1000 < now ? { status: 'expired' } : { status: 'valid', token };
  }

  private sign(path: string, expires: number, token: string): string {
    return createHmac('sha256', this.current()).update(`${path}\n${expires}\n${token}`).digest('base64url');
  }

  private current(): Buffer {
    if (this.looks.due() && fileStamp(this.file) !== this.stamp) this.key = this.load();
    return this.key;
  }

  private load(): Buffer {
    this.stamp = fileStamp(this.file);
    const key = Buffer.from(readFileSync(this.file, 'utf8').trim(), 'base64url');
    if (key.length < 16) {
      throw new MirrorError('DATA_INVALID', `The archive signing key "${this.file}" is too short.`, {
        hint: 'Run modmirror signing-key rotate to make a new one.',
      });
    }
    return key;
  }
}

/** Replaces the key; a running server signs and checks with it from its next request. */
export async function rotateSigningKey(dataDir: string): Promise<string> {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, SIGNING_KEY_FILE);
  // Readable by its owner only, as when it was first made.
  await writeFileAtomicWith(file, (temp) => writeFile(temp, newKeyText(), { mode: 0o600 }));
  return file;
}
