import { command, type Flags, type FlagValues } from '../args.js';

export const KEY_OPTIONS = {
  name: { type: 'string', value: 'NAME', help: `who signs, e.g. "Acme Release" (the key's user ID; also names the files)` },
  email: { type: 'string', value: 'ADDRESS', help: "the user ID's e-mail address" },
  out: {
    type: 'string',
    value: 'DIR',
    help: "where to write NAME.pub.asc, NAME.key.asc and NAME.rev.asc, the key's revocation certificate (default: keys); never overwritten",
  },
  algorithm: {
    type: 'string',
    value: 'A',
    help: "rsa4096 (default: read by every OpenPGP implementation, Terraform's provider check among them) or curve25519 (Ed25519, as gpg makes by default: small, made in milliseconds)",
  },
  'expires-days': { type: 'string', value: 'N', help: 'the key expires after N days (default: never)' },
  'passphrase-env': {
    type: 'string',
    value: 'VAR',
    help: 'the variable holding the passphrase that locks the private key (default: MODMIRROR_SIGNING_PASSPHRASE, what signing: passphraseEnv reads)',
  },
  'passphrase-file': { type: 'string', value: 'FILE', help: "read the passphrase from FILE's first line instead (- for standard input)" },
  json: { type: 'boolean', help: 'print {"keyId", "fingerprint", "algorithm", "publicKey", "privateKey", "revocation"} (the files written)' },
} as const satisfies Flags;

export type KeyFlags = FlagValues<typeof KEY_OPTIONS>;

const usage = `modmirror key create --name NAME [--email ADDRESS] [--out DIR] [--algorithm rsa4096|curve25519] [--expires-days N]
                     [--passphrase-env VAR | --passphrase-file FILE] [--json]`;
const notes = 'The passphrase is never taken on the command line, where ps and shell history would show it.';

export const key = command({
  summary: 'Make an OpenPGP key pair that signs bundles (bundle --sign-key) and in-house provider releases',
  usage,
  options: KEY_OPTIONS,
  notes,
  positionals: { names: ['create'], required: 1 },
  run: async (values, positionals) => (await import('../key.js')).runKey(values, positionals),
});

/** key create under the name it had before: the same flags, the same key pair, with a note. */
export const providerKey = command({
  summary: 'The same as modmirror key create (its name before; still works, with a note)',
  usage: 'modmirror provider-key create ...: see modmirror key --help; the same flags, the same key pair.',
  options: KEY_OPTIONS,
  notes,
  positionals: { names: ['create'], required: 1 },
  run: async (values, positionals) => (await import('../key.js')).runKey(values, positionals, 'provider-key'),
});
