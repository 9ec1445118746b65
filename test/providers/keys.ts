// OpenPGP keys and signed provider releases for tests, made as a release
// pipeline makes them: a key pair (as `gpg --full-generate-key` would), and
// a binary detached signature of the release's SHA256SUMS (as GoReleaser's
// `gpg --detach-sign` step writes terraform-provider-TYPE_VERSION_SHA256SUMS.sig).

import { readFileSync, writeFileSync } from 'node:fs';
import * as openpgp from 'openpgp';

export interface TestKey {
  publicFile: string;
  privateFile: string;
  keyId: string;
  passphrase: string;
}

/**
 * RSA by default, as `gpg --full-generate-key` makes by default and as every
 * OpenPGP library Terraform has used reads (golang.org/x/crypto/openpgp knows
 * no Ed25519); `ecc` makes an Ed25519 key, which today's Terraform also reads.
 */
export async function makeKey(dir: string, name: string, options: { passphrase?: string; keyExpirationTime?: number; date?: Date; type?: 'rsa' | 'ecc' } = {}): Promise<TestKey> {
  const passphrase = options.passphrase ?? `${name} passphrase`;
  const { privateKey, publicKey } = await openpgp.generateKey({
    ...(options.type === 'ecc' ? { type: 'ecc' as const } : { type: 'rsa' as const, rsaBits: 2048 }),
    userIDs: [{ name, email: `${name.toLowerCase().replace(/\W+/g, '-')}@example.com` }],
    passphrase,
    format: 'armored',
    ...(options.keyExpirationTime ? { keyExpirationTime: options.keyExpirationTime } : {}),
    ...(options.date ? { date: options.date } : {}),
  });
  const slug = name.toLowerCase().replace(/\W+/g, '-');
  const publicFile = `${dir}/${slug}.pub.asc`;
  const privateFile = `${dir}/${slug}.key.asc`;
  writeFileSync(publicFile, publicKey);
  writeFileSync(privateFile, privateKey);
  const keyId = (await openpgp.readKey({ armoredKey: publicKey })).getKeyID().toHex().toUpperCase();
  return { publicFile, privateFile, keyId, passphrase };
}

/** Signs DIR's terraform-provider-TYPE_VERSION_SHA256SUMS with `key`, writing the .sig beside it. */
export async function signRelease(dir: string, type: string, version: string, key: TestKey, options: { date?: Date } = {}): Promise<string> {
  const sums = `${dir}/terraform-provider-${type}_${version}_SHA256SUMS`;
  const privateKey = await openpgp.decryptKey({ privateKey: await openpgp.readPrivateKey({ armoredKey: readFileSync(key.privateFile, 'utf8') }), passphrase: key.passphrase });
  const signature = await openpgp.sign({
    message: await openpgp.createMessage({ binary: readFileSync(sums) }),
    signingKeys: privateKey,
    detached: true,
    format: 'binary',
    ...(options.date ? { date: options.date } : {}),
  });
  writeFileSync(`${sums}.sig`, signature as Uint8Array);
  return `${sums}.sig`;
}
