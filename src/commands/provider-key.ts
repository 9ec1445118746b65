import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DEFAULT_PASSPHRASE_ENV } from '../config/index.js';
import { MirrorError } from '../errors.js';
import { generateSigningKey } from '../providers/signature.js';
import { printJson, stringFlag, usageError, type Values } from './args.js';

const usage = (message: string) => usageError('provider-key', message);

/** `modmirror provider-key create`: a key pair for signing in-house provider releases. */
export async function runProviderKey(values: Values, positionals: string[]): Promise<number> {
  if (positionals[0] !== 'create') throw usage('Expected "modmirror provider-key create --name NAME --out DIR".');
  const name = stringFlag(values, 'name');
  if (name === undefined || name.trim() === '') throw usage('--name is missing: who signs, e.g. "Acme Release".');
  const email = stringFlag(values, 'email');
  const days = stringFlag(values, 'expires-days');
  if (days !== undefined && !/^[1-9][0-9]*$/.test(days)) throw usage(`--expires-days "${days}" is not a number of days.`);
  const envName = stringFlag(values, 'passphrase-env') ?? DEFAULT_PASSPHRASE_ENV;
  const passphrase = process.env[envName];
  // The private key is never written unlocked.
  if (passphrase === undefined || passphrase === '') throw usage(`Set ${envName} to the passphrase that will lock the private key.`);
  const out = resolve(stringFlag(values, 'out') ?? 'keys');
  const slug =
    name
      .trim()
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '') || 'signing';
  const publicFile = join(out, `${slug}.pub.asc`);
  const privateFile = join(out, `${slug}.key.asc`);
  for (const file of [publicFile, privateFile]) {
    if (existsSync(file))
      throw new MirrorError('OUTPUT_FAILED', `${file} already exists; nothing was written.`, {
        hint: 'Choose another --name or --out: a key is never replaced (releases signed with it would lose their key).',
      });
  }
  const key = await generateSigningKey({ name: name.trim(), ...(email ? { email } : {}) }, passphrase, days === undefined ? undefined : Number(days) * 86_400);
  mkdirSync(out, { recursive: true });
  writeFileSync(publicFile, key.publicArmor, { mode: 0o644, flag: 'wx' });
  writeFileSync(privateFile, key.privateArmor, { mode: 0o600, flag: 'wx' });
  if (values['json'] === true) {
    printJson({ keyId: key.keyId, publicKey: publicFile, privateKey: privateFile });
    return 0;
  }
  console.log(`Key ID ${key.keyId}
  public:  ${publicFile}   (list it under keys: of the providers entry, or pass it as --public-key)
  private: ${privateFile}   (locked with ${envName}; keep it out of the mirror and the repository; name it in signing: key)`);
  return 0;
}
