// OpenPGP keys and signed provider releases for tests, as a release
// pipeline has them: a key pair (as `gpg --full-generate-key` makes; committed
// in test/fixtures/keys/), and a binary detached signature of the release's SHA256SUMS (as GoReleaser's
// `gpg --detach-sign` step writes terraform-provider-TYPE_VERSION_SHA256SUMS.sig).

import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as openpgp from 'openpgp';
import { ROOT } from '../helpers.js';

export interface TestKey {
  publicFile: string;
  privateFile: string;
  keyId: string;
  passphrase: string;
  /** When the key was made (test/fixtures/keys/old-release was made on 2024-01-01 and expired five days later). */
  created: Date;
}

const FIXTURES = join(ROOT, 'test', 'fixtures', 'keys');

/**
 * The committed key pair named `name` (test/fixtures/keys/, made once by its
 * make.mjs: RSA 2048 as `gpg --full-generate-key` makes by default, which every
 * OpenPGP library Terraform has used reads; "Package Release" is Ed25519),
 * copied into `dir` as <slug>.pub.asc and <slug>.key.asc. Its passphrase is
 * `${name} passphrase`. Making keys here cost 0.3 to 1 s of CPU each; the
 * tests of making a key run `modmirror key create`.
 */
export async function testKey(dir: string, name: string): Promise<TestKey> {
  const slug = name.toLowerCase().replace(/\W+/g, '-');
  const [publicFile, privateFile] = [`${dir}/${slug}.pub.asc`, `${dir}/${slug}.key.asc`];
  const fixture = join(FIXTURES, `${slug}.pub.asc`);
  if (!existsSync(fixture)) throw new Error(`No test key "${name}" in ${FIXTURES}: add it to make.mjs's list and run it.`);
  copyFileSync(fixture, publicFile);
  copyFileSync(join(FIXTURES, `${slug}.key.asc`), privateFile);
  const key = await openpgp.readKey({ armoredKey: readFileSync(publicFile, 'utf8') });
  return { publicFile, privateFile, keyId: key.getKeyID().toHex().toUpperCase(), passphrase: `${name} passphrase`, created: key.getCreationTime() };
}

/** Signs DIR's terraform-provider-TYPE_VERSION_SHA256SUMS with `key`, writing the .sig beside it. */
export async function signRelease(dir: string, type: string, version: string, key: TestKey, options: { date?: Date } = {}): Promise<string> {
  const sums = `${dir}/terraform-provider-${type}_${version}_SHA256SUMS`;
  const privateKey = await openpgp.decryptKey({
    privateKey: await openpgp.readPrivateKey({ armoredKey: readFileSync(key.privateFile, 'utf8') }),
    passphrase: key.passphrase,
  });
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
