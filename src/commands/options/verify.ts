import { command, type Flags, type FlagValues } from '../args.js';
import { BUCKET_CREDENTIALS, BUCKET_OPTIONS } from './shared.js';

export const VERIFY_OPTIONS = {
  mirror: {
    type: 'string',
    value: 'DIR',
    help: `the mirror (default: the config's "out", else ./dist); or s3://BUCKET/PREFIX, a mirror in a bucket, with --endpoint URL, --region REGION and --path-style as for modmirror push`,
  },
  complete: {
    type: 'boolean',
    help: "also report module versions whose required providers the mirror lacks for one of the config's platforms (default linux_amd64)",
  },
  repair: {
    type: 'boolean',
    help: "first write every derived document (listings, indexes, each module's versions and details) again from the manifest, then check; changes no published version",
  },
  config: { type: 'string', value: 'FILE', help: 'the config file naming the platforms (default: mirror.config.yaml when present)' },
  trust: {
    type: 'string',
    multiple: true,
    value: 'KEY.asc',
    help: 'a signed mirror: manifest.json and every module state must carry a good signature (FILE.asc, written by every write given --sign-key) by one of these armored public keys (repeatable); the archives are then checked against the signed states',
  },
  ...BUCKET_OPTIONS,
  json: { type: 'boolean', help: 'print {"ok", "problems": [{"path", "message"}]}' },
} as const satisfies Flags;

export type VerifyFlags = FlagValues<typeof VERIFY_OPTIONS>;

export const verify = command({
  summary: 'Check that a mirror agrees with itself and its archives match the manifest',
  usage: 'modmirror verify [--mirror DIR|s3://BUCKET/PREFIX] [--complete] [--repair] [--config FILE] [--trust KEY.asc ...] [--json]',
  options: VERIFY_OPTIONS,
  notes: BUCKET_CREDENTIALS,
  // A positional mirror is the form before --mirror (runVerify says so).
  positionals: { names: ['DIR'], required: 0 },
  run: async (values, positionals) => (await import('../verify.js')).runVerify(values, positionals),
});
