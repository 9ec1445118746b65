// Flags more than one command takes, declared once with their help.

import type { Flags } from '../args.js';

/** Every command that reads or writes a bucket takes these (push, and publish, deprecate, verify with --mirror s3://). */
export const BUCKET_OPTIONS = {
  endpoint: {
    type: 'string',
    value: 'URL',
    help: 'an S3-compatible store (Ceph RGW, MinIO): http(s)://HOST[:PORT] (default: AWS_ENDPOINT_URL, else AWS S3)',
  },
  region: {
    type: 'string',
    value: 'REGION',
    help: "default: AWS_REGION, else AWS_DEFAULT_REGION, else the profile's region, else us-east-1 with --endpoint",
  },
  'path-style': { type: 'boolean', help: 'address the bucket as ENDPOINT/BUCKET rather than BUCKET.ENDPOINT (most on-premises stores)' },
} as const satisfies Flags;

/** Where a bucket's credentials come from, for the notes of a command that takes one. */
export const BUCKET_CREDENTIALS = `Credentials come as the AWS CLI takes them: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE,
~/.aws/credentials.`;

/** The passphrase of --sign-key (key create: of the key it makes), never on the command line. */
export const PASSPHRASE_OPTIONS = {
  'passphrase-env': {
    type: 'string',
    value: 'VAR',
    help: "the variable holding the key's passphrase (default: MODMIRROR_SIGNING_PASSPHRASE)",
  },
  'passphrase-file': {
    type: 'string',
    value: 'FILE',
    help: "read the key's passphrase from FILE's first line instead (- for standard input)",
  },
} as const satisfies Flags;

/** `--out`, the spelling of --mirror some commands took before. */
export const OLD_OUT = { out: { type: 'string', olderSpellingOf: 'mirror' } } as const satisfies Flags;

/** `--dir`, the spelling of --mirror other commands took before. */
export const OLD_DIR = { dir: { type: 'string', olderSpellingOf: 'mirror' } } as const satisfies Flags;
