import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { MirrorError } from '../errors.js';
import { generateSigningKey, KEY_ALGORITHMS, KeyError, type KeyAlgorithm } from '../openpgp/keys.js';
import { terminalProgress } from './progress.js';
import { printJson, usageError } from './args.js';
import { passphraseOf } from './key-flags.js';
import type { KeyFlags } from './options/key.js';

/**
 * `modmirror key create`: an OpenPGP key pair that signs what modmirror signs
 * (bundles, in-house provider releases). `provider-key create`, its name
 * before, runs it too.
 */
export async function runKey(values: KeyFlags, positionals: string[], command: 'key' | 'provider-key' = 'key'): Promise<number> {
  const usage = (message: string) => usageError(command, message);
  if (positionals[0] !== 'create') throw usage(`Expected "modmirror ${command} create --name NAME --out DIR".`);
  if (command === 'provider-key') console.error('note: modmirror provider-key create is now modmirror key create; provider-key still works.');
  const name = values.name;
  if (name === undefined || name.trim() === '') throw usage('--name is missing: who signs, e.g. "Acme Release".');
  const email = values.email;
  const days = values['expires-days'];
  if (days !== undefined && !/^[1-9][0-9]*$/.test(days)) throw usage(`--expires-days "${days}" is not a number of days.`);
  const algorithm = (values.algorithm ?? 'rsa4096') as KeyAlgorithm;
  if (!KEY_ALGORITHMS.includes(algorithm)) throw usage(`--algorithm "${algorithm}" is not one of ${KEY_ALGORITHMS.join(', ')}.`);
  const { passphrase, from } = passphraseOf(values, command);
  // The private key is never written unlocked.
  if (passphrase === undefined)
    throw new MirrorError('USAGE', `Set ${from} to the passphrase that will lock the private key.`, {
      hint: 'Or name another variable with --passphrase-env VAR, or give the passphrase in a file with --passphrase-file FILE (its first line).',
    });
  const out = resolve(values.out ?? 'keys');
  const slug =
    name
      .trim()
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '') || 'signing';
  const publicFile = join(out, `${slug}.pub.asc`);
  const privateFile = join(out, `${slug}.key.asc`);
  const revocationFile = join(out, `${slug}.rev.asc`);
  for (const file of [publicFile, privateFile, revocationFile]) {
    if (existsSync(file))
      throw new MirrorError('OUTPUT_FAILED', `${file} already exists; nothing was written.`, {
        hint: 'Choose another --name or --out: a key is never replaced (what was signed with it would lose its key).',
      });
  }
  // Finding RSA primes has no fraction done to show: the time it has taken, so a wait of seconds is not mistaken for a hang.
  const progress = terminalProgress(values['json'] !== true);
  const started = Date.now();
  const making = () => progress?.(`Making the ${algorithm} key: ${Math.round((Date.now() - started) / 1000)} s`);
  making();
  const ticking = progress ? setInterval(making, 1000) : undefined;
  const key = await generateSigningKey({ name: name.trim(), ...(email ? { email } : {}) }, passphrase, {
    algorithm,
    ...(days === undefined ? {} : { expiresInSeconds: Number(days) * 86_400 }),
  })
    .catch((error: unknown) => {
      throw error instanceof KeyError ? usage(`${error.message} (--name "${name}"${email ? `, --email "${email}"` : ''})`) : error;
    })
    .finally(() => {
      clearInterval(ticking);
      progress?.done();
    });
  mkdirSync(out, { recursive: true });
  writeFileSync(publicFile, key.publicArmor, { mode: 0o644, flag: 'wx' });
  writeFileSync(privateFile, key.privateArmor, { mode: 0o600, flag: 'wx' });
  // Anyone holding it can revoke the key, so it is kept as closely as the private key, apart from it.
  writeFileSync(revocationFile, key.revocationArmor, { mode: 0o600, flag: 'wx' });
  if (values.json === true) {
    printJson({ keyId: key.keyId, fingerprint: key.fingerprint, algorithm, publicKey: publicFile, privateKey: privateFile, revocation: revocationFile });
    return 0;
  }
  console.log(`Key ID ${key.keyId} (${algorithm}), fingerprint ${key.fingerprint}
  public:  ${publicFile}   (for whoever checks the signatures: unbundle --trust, trust: or keys: in the config)
  private: ${privateFile}   (locked with ${from}; keep it out of the mirror and the repository: bundle --sign-key, signing: key)
  revocation: ${revocationFile}   (keep it apart from the private key; imported into the public key, gpg --import, it revokes the key)`);
  return 0;
}
