import { command, type Flags, type FlagValues } from '../args.js';

export const SIGNING_KEY_OPTIONS = {
  data: { type: 'string', value: 'DIR', help: 'the data folder serve uses (default: data); a running server takes the new key within a second' },
  json: { type: 'boolean', help: 'print {"file"}: the key file written' },
} as const satisfies Flags;

export type SigningKeyFlags = FlagValues<typeof SIGNING_KEY_OPTIONS>;

export const signingKey = command({
  summary: 'Private registry: replace the key that signs archive URLs (every URL signed before stops working)',
  usage: 'modmirror signing-key rotate [--data DIR] [--json]',
  options: SIGNING_KEY_OPTIONS,
  positionals: { names: ['rotate'], required: 1 },
  run: async (values, positionals) => (await import('../signing-key.js')).runSigningKey(values, positionals),
});
