// The flags every command that reads or writes a bucket takes (push, publish
// --mirror s3://, deprecate --mirror s3://, verify --mirror s3://): the rest comes the AWS SDK's way, from the
// environment and the shared config files.

import { parseBucketUrl, type BucketLocation } from '../bucket/location.js';
import { MirrorError } from '../errors.js';
import type { FlagValues } from './args.js';
import { BUCKET_OPTIONS } from './options/shared.js';

/** The bucket flags' values (options/shared.ts declares them). */
export type BucketValues = FlagValues<typeof BUCKET_OPTIONS>;

export function bucketLocation(url: string, values: BucketValues, flag: string): BucketLocation {
  const endpoint = values.endpoint;
  const env = process.env;
  // The AWS CLI's order: AWS_REGION, then AWS_DEFAULT_REGION (which the SDK for JavaScript does not read), then the profile's.
  const envRegion = env['AWS_REGION'] || env['AWS_DEFAULT_REGION'] || undefined;
  const custom = endpoint !== undefined || env['AWS_ENDPOINT_URL_S3'] !== undefined || env['AWS_ENDPOINT_URL'] !== undefined;
  // A store of one's own rarely has regions, but SigV4 signs one: S3's default, as the AWS CLI assumes for it.
  const region = values.region ?? envRegion ?? (custom && env['AWS_PROFILE'] === undefined ? 'us-east-1' : undefined);
  return parseBucketUrl(url, flag, {
    ...(endpoint !== undefined ? { endpoint } : {}),
    ...(region !== undefined ? { region } : {}),
    ...(values['path-style'] === true ? { pathStyle: true } : {}),
  });
}

/** The bucket flags given to a command whose mirror is a folder. */
export function refuseBucketFlags(values: BucketValues, what: string): void {
  for (const flag of Object.keys(BUCKET_OPTIONS) as (keyof BucketValues)[]) {
    if (values[flag] !== undefined) throw new MirrorError('USAGE', `--${flag} is for a mirror in a bucket (${what} s3://BUCKET/PREFIX).`);
  }
}
