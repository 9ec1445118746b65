import { command, type Flags, type FlagValues } from '../args.js';
import { BUCKET_CREDENTIALS, BUCKET_OPTIONS, PASSPHRASE_OPTIONS } from './shared.js';

export const PUSH_OPTIONS = {
  mirror: { type: 'string', value: 'DIR', help: `the built mirror to upload (default: the config's "out", else ./dist)` },
  config: {
    type: 'string',
    value: 'FILE',
    help: 'the config whose cacheDir keeps what an interrupted push stored (default: ./mirror.config.yaml when there is one)',
  },
  prune: { type: 'boolean', help: 'delete the objects the mirror no longer has, once the new manifest is in place' },
  full: {
    type: 'boolean',
    help: "upload every object, not only what the bucket's record says differs (after the bucket was changed by other means); archives already there must still have the same bytes",
  },
  'download-header': {
    type: 'boolean',
    help: `store each download object's location as its x-terraform-get header, for Ceph RGW run with "rgw extended http attrs = x-terraform-get": Terraform then installs straight from the bucket's website endpoint`,
  },
  concurrency: { type: 'string', value: 'N', help: 'objects in flight (default 16)' },
  'dry-run': { type: 'boolean', help: 'list what would be uploaded, upload nothing' },
  'sign-key': {
    type: 'string',
    value: 'FILE',
    help: "a signed mirror's key (default: the config's provenance: key): the root is signed again where the bucket gives it a newer generation",
  },
  ...PASSPHRASE_OPTIONS,
  json: { type: 'boolean', help: 'print one JSON summary and no progress' },
  ...BUCKET_OPTIONS,
} as const satisfies Flags;

export type PushFlags = FlagValues<typeof PUSH_OPTIONS>;

export const push = command({
  summary: 'Upload a built mirror to an S3-compatible bucket: only what changed, archives first, the manifest last',
  usage: `modmirror push s3://BUCKET[/PREFIX] [--mirror DIR] [--endpoint URL] [--region REGION] [--path-style] [--prune]
                [--full] [--download-header] [--concurrency N] [--dry-run] [--sign-key FILE] [--json] [--config FILE]`,
  arguments: [['s3://BUCKET/PREFIX', 'the bucket (and the prefix in it) to upload to']],
  options: PUSH_OPTIONS,
  notes: `${BUCKET_CREDENTIALS}

Objects get the content type and Cache-Control nginx sends for them (archives immutable, the rest a
minute). What the bucket already holds is known from the record kept beside its manifest, so a second
push uploads nothing. The manifest is written only if the bucket's is still the one read. An
interrupted push resumes where it stopped when run again.`,
  // Two arguments are the form before --mirror: push DIR s3://BUCKET/PREFIX (runPush says so).
  positionals: {
    names: ['s3://BUCKET/PREFIX', 's3://BUCKET/PREFIX'],
    required: 1,
    missing: 'Name the bucket: modmirror push s3://BUCKET/PREFIX [--mirror DIR].',
  },
  run: async (values, positionals) => (await import('../push.js')).runPush(values, positionals),
});
