import { command, type Flags, type FlagValues } from '../args.js';
import { BUCKET_CREDENTIALS, BUCKET_OPTIONS, OLD_OUT, PASSPHRASE_OPTIONS } from './shared.js';

export const DEPRECATE_OPTIONS = {
  reason: { type: 'string', value: 'TEXT', help: 'why, shown by the browse page and in the versions and detail documents' },
  link: { type: 'string', value: 'URL', help: 'where to read more (http or https)' },
  undo: { type: 'boolean', help: 'the version is no longer deprecated' },
  mirror: {
    type: 'string',
    value: 'DIR',
    help: `the mirror (default: the config's "out", else ./dist); or s3://BUCKET/PREFIX, a mirror in a bucket, changed as publish --mirror s3:// changes it (with --endpoint, --region, --path-style)`,
  },
  ...OLD_OUT,
  config: { type: 'string', value: 'FILE', help: `the config whose "out" names the mirror (default: ./mirror.config.yaml when there is one)` },
  'sign-key': {
    type: 'string',
    value: 'FILE',
    help: "the key a signed mirror's truth is signed with (default: the config's provenance: key); a signed mirror is not changed without it",
  },
  ...PASSPHRASE_OPTIONS,
  ...BUCKET_OPTIONS,
  json: { type: 'boolean', help: 'print {"mirror", "module", "version", "deprecation", "changed"}' },
} as const satisfies Flags;

export type DeprecateFlags = FlagValues<typeof DEPRECATE_OPTIONS>;

export const deprecate = command({
  summary: 'Mark a published version deprecated (with a reason and a link), or lift that with --undo',
  usage: 'modmirror deprecate NAMESPACE/NAME/PROVIDER VERSION (--reason TEXT [--link URL] | --undo) [--mirror DIR] [--config FILE] [--sign-key FILE] [--json]',
  options: DEPRECATE_OPTIONS,
  notes: `Kept in the module's state, the mirror's truth: build, publish, bundle and unbundle carry it.
${BUCKET_CREDENTIALS}`,
  positionals: { names: ['NAMESPACE/NAME/PROVIDER', 'VERSION'], required: 2 },
  run: async (values, positionals) => (await import('../deprecate.js')).runDeprecate(values, positionals),
});
