// The flags for OpenPGP keys, read alike by every command that takes them: a
// key's passphrase, from an environment variable or a file, never from the
// command line, where ps and shell history would show it (key create locks a
// new key with it).

import { readFileSync } from 'node:fs';
import { DEFAULT_PASSPHRASE_ENV } from '../config/index.js';
import { MirrorError, messageOf } from '../errors.js';
import { stringFlag, usageError, type Values } from './args.js';

export const PASSPHRASE_OPTIONS = {
  'passphrase-env': { type: 'string' },
  'passphrase-file': { type: 'string' },
} as const;

/**
 * The passphrase: the first line of --passphrase-file FILE (- for standard
 * input), else the variable --passphrase-env names (MODMIRROR_SIGNING_PASSPHRASE
 * by default); `passphrase` is undefined when that holds none. `from` says
 * where it was looked for, for messages.
 */
export function passphraseOf(values: Values, command: string): { passphrase: string | undefined; from: string } {
  const file = stringFlag(values, 'passphrase-file');
  const env = stringFlag(values, 'passphrase-env');
  if (file !== undefined && env !== undefined) throw usageError(command, 'Give the passphrase with --passphrase-file or --passphrase-env, not both.');
  if (file !== undefined) {
    let line: string | undefined;
    try {
      line = readFileSync(file === '-' ? 0 : file, 'utf8').split(/\r?\n/, 1)[0];
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'SOURCE_NOT_FOUND' : 'USAGE';
      throw new MirrorError(code, `Cannot read --passphrase-file ${file}: ${messageOf(error)}`, { hint: `Run modmirror ${command} --help.` });
    }
    if (!line) throw usageError(command, `--passphrase-file ${file} is empty: its first line is the passphrase.`);
    return { passphrase: line, from: `--passphrase-file ${file}` };
  }
  const name = env ?? DEFAULT_PASSPHRASE_ENV;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw usageError(command, `--passphrase-env "${name}" is not an environment variable name.`);
  const value = process.env[name];
  return { passphrase: value === '' ? undefined : value, from: name };
}
