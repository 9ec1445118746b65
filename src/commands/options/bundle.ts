import { command, type Flags, type FlagValues } from '../args.js';
import { OLD_DIR, PASSPHRASE_OPTIONS } from './shared.js';

export const BUNDLE_OPTIONS = {
  mirror: { type: 'string', value: 'DIR', help: `the mirror to pack (default: the config's "out", else ./dist)` },
  ...OLD_DIR,
  out: { type: 'string', value: 'FILE', help: 'the bundle to write' },
  since: { type: 'string', value: 'MANIFEST', help: 'a manifest.json of the receiving mirror: carry only the archives it lacks (and every index)' },
  'sign-key': {
    type: 'string',
    value: 'FILE',
    help: "an armored OpenPGP private key (modmirror key create's NAME.key.asc, or gpg --armor --export-secret-keys): write FILE.tar.gz.asc beside the bundle, its detached signature (gpg --verify FILE.tar.gz.asc FILE.tar.gz checks it; unbundle --trust requires it)",
  },
  ...PASSPHRASE_OPTIONS,
  json: {
    type: 'boolean',
    help: 'print {"mirror", "out", "files", "bytes", "versions", "providerPackages", "skipped", "derived", "sha256", "signature": {"file", "keyId"}}',
  },
} as const satisfies Flags;

export type BundleFlags = FlagValues<typeof BUNDLE_OPTIONS>;

export const bundle = command({
  summary: 'Pack a mirror (or what changed since a manifest) into one .tar.gz with sha256 sums, to carry it in',
  usage: `modmirror bundle [--mirror DIR] --out FILE.tar.gz [--since MANIFEST] [--sign-key FILE [--passphrase-env VAR | --passphrase-file FILE]]
                 [--json]`,
  options: BUNDLE_OPTIONS,
  notes: `The key is read and unlocked before anything is written. A bundle written without --sign-key removes an
older FILE.tar.gz.asc beside it, which signed other bytes.`,
  run: async (values) => (await import('../bundle.js')).runBundle(values),
});
