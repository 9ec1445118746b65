import { resolve } from 'node:path';
import { rotateSigningKey } from '../serve/signing.js';
import { printJson, usageError } from './args.js';
import type { SigningKeyFlags } from './options/signing-key.js';

export async function runSigningKey(values: SigningKeyFlags, positionals: string[]): Promise<number> {
  if (positionals[0] !== 'rotate') throw usageError('signing-key', 'Expected "modmirror signing-key rotate".');
  const file = await rotateSigningKey(resolve(values.data ?? 'data'));
  if (values.json === true) printJson({ file });
  else console.log(`New archive signing key in ${file}; archive URLs signed with the old key no longer work.`);
  return 0;
}
