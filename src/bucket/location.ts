// Where a mirror lives in a bucket: `s3://BUCKET/PREFIX`, with the endpoint,
// region and path style the AWS SDK would otherwise find in the environment
// and shared config (AWS_ENDPOINT_URL, AWS_REGION, AWS_PROFILE, ~/.aws/config).

import { MirrorError } from '../errors.js';

export interface BucketLocation {
  bucket: string;
  /** '' or a key prefix ending in `/`: the mirror's files are `PREFIX + path`. */
  prefix: string;
  /** An S3-compatible store's URL (Ceph RGW, MinIO); undefined: the SDK's own choice (AWS). */
  endpoint?: string;
  region?: string;
  /** `https://ENDPOINT/BUCKET/key` rather than `https://BUCKET.ENDPOINT/key`, as most on-premises stores need. */
  pathStyle?: boolean;
}

/** A guard for `s3://` URLs: false leaves other strings strings (`text is string` made them `never`). */
export function isBucketUrl(text: string | undefined): text is `s3://${string}` {
  return text !== undefined && text.startsWith('s3://');
}

/** `s3://BUCKET[/PREFIX]`, checked; `flag` names where it came from in the error. */
export function parseBucketUrl(text: string, flag: string, options: Omit<BucketLocation, 'bucket' | 'prefix'> = {}): BucketLocation {
  const match = /^s3:\/\/([^/]+)(?:\/(.*))?$/.exec(text);
  const bucket = match?.[1] ?? '';
  // S3's bucket name rules, loosely: what every store accepts.
  if (!match || !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    throw new MirrorError(
      'USAGE',
      `${flag} "${text}" is not a bucket URL: expected s3://BUCKET or s3://BUCKET/PREFIX (a bucket name of 3-63 lower-case letters, digits, "." and "-").`,
    );
  }
  const path = (match[2] ?? '').replace(/\/+$/, '');
  if (path.split('/').some((part) => part === '.' || part === '..') || path.includes('//')) {
    throw new MirrorError('USAGE', `${flag} "${text}" has an empty, "." or ".." part in its prefix.`);
  }
  if (options.endpoint !== undefined && !/^https?:\/\/[^/]+/.test(options.endpoint)) {
    throw new MirrorError('USAGE', `--endpoint "${options.endpoint}" is not an http(s) URL, e.g. https://s3.example.com or http://127.0.0.1:7480.`);
  }
  return { bucket, prefix: path === '' ? '' : `${path}/`, ...options };
}

/** How messages name the mirror: `s3://BUCKET/PREFIX/`. */
export function describeBucket(location: BucketLocation): string {
  return `s3://${location.bucket}/${location.prefix}`;
}
