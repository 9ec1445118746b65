import { command, type Flags, type FlagValues } from '../args.js';
import { OLD_OUT } from './shared.js';

export const UNBUNDLE_OPTIONS = {
  mirror: { type: 'string', value: 'DIR', help: `the mirror to merge into (default: the config's "out", else ./dist; created if missing)` },
  ...OLD_OUT,
  trust: {
    type: 'string',
    multiple: true,
    value: 'KEY.asc',
    help: "an armored public key (repeatable; default: the config's trust: list): require FILE.tar.gz.asc beside the bundle, a signature of its bytes by one of these keys, not expired or revoked; refuse the bundle otherwise, before anything is written (exit 1)",
  },
  config: { type: 'string', value: 'FILE', help: 'the config whose out and trust: apply (default: ./mirror.config.yaml when there is one)' },
  'no-spare': { type: 'boolean', help: 'no effect, accepted for scripts that pass it (as publish --no-spare)' },
  json: {
    type: 'boolean',
    help: 'print {"mirror", "files", "added", "addedProviderPackages", "replaced", "versions", "modules", "signature": {"checked", "keyId", "userId"} (or {"checked": false, "file"})}',
  },
} as const satisfies Flags;

export type UnbundleFlags = FlagValues<typeof UNBUNDLE_OPTIONS>;

export const unbundle = command({
  summary: 'Check every sha256 of a bundle, then merge it into a mirror atomically',
  usage: 'modmirror unbundle FILE.tar.gz [--mirror DIR] [--trust KEY.asc ...] [--config FILE] [--no-spare] [--json]',
  arguments: [['FILE', 'a bundle made by modmirror bundle']],
  options: UNBUNDLE_OPTIONS,
  notes: 'Without a trusted key, signatures are not checked (a FILE.tar.gz.asc beside the bundle gets a note).',
  positionals: { names: ['FILE.tar.gz'], required: 1, missing: 'Name the bundle: modmirror unbundle FILE.tar.gz [--mirror DIR].' },
  run: async (values, positionals) => (await import('../unbundle.js')).runUnbundle(values, positionals),
});
