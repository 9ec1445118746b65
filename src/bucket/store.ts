// The one way modmirror talks to a bucket: read, write (plainly or on a
// condition), list and delete objects under the mirror's prefix, with the AWS
// SDK's own ways of finding credentials, region and profile. Every failure
// becomes a MirrorError naming the object.

import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { MirrorError, messageOf } from '../errors.js';
import { describeBucket, type BucketLocation } from './location.js';

export interface ObjectHeaders {
  'Content-Type': string;
  'Cache-Control': string;
  /** Stored by Ceph RGW with `rgw extended http attrs = x-terraform-get` and sent back on GET: Terraform's download header. */
  'X-Terraform-Get'?: string;
}

export interface StoredObject {
  body: Buffer;
  /** As the store gave it (quoted). */
  etag: string;
}

/** Write only if the object is still the one read (its ETag), or only if there is none. */
export type WriteCondition = { ifMatch: string } | { ifNoneMatch: '*' };

export interface Bucket {
  readonly location: BucketLocation;
  /** `s3://BUCKET/PREFIX/path`, as messages name an object. */
  name(rel: string): string;
  get(rel: string): Promise<StoredObject | undefined>;
  /** The object's ETag, or undefined when there is none: a cheap look at whether it changed. */
  etag(rel: string): Promise<string | undefined>;
  /** The object's ETag and the generation it was written with (putIf's), or undefined when there is none. */
  head(rel: string): Promise<{ etag: string; generation: number | undefined } | undefined>;
  put(rel: string, body: Buffer, headers: ObjectHeaders): Promise<void>;
  /**
   * A conditional write. 'lost': the condition failed (412), a concurrent
   * write got in the way (409, AWS), or the store answered 500, which Ceph
   * RGW gives some of the writers that lose a race;
   * either way the caller reads the object again to see who won. Written: the object's new ETag.
   */
  putIf(rel: string, body: Buffer, headers: ObjectHeaders, condition: WriteCondition, generation?: number): Promise<{ etag: string } | 'lost'>;
  /** Every object's path under the prefix (and under `under` within it). */
  list(under?: string): AsyncGenerator<string>;
  /** The names of the folders directly under `under` (which ends in '/'), sorted: one request per thousand. */
  folders(under: string): Promise<string[]>;
  remove(rels: string[]): Promise<void>;
  close(): void;
}

/** The user metadata that holds the manifest generation a derived document was derived from. */
const GENERATION_META = 'modmirror-generation';

/** Objects above this go up in parts (lib-storage), which a single PUT of gigabytes would not survive. */
const MULTIPART_BYTES = 16 * 1024 * 1024;

export function openBucket(location: BucketLocation): Bucket {
  // The SDK warns on every run under Node 20, which modmirror supports; the warning is for the SDK's future.
  process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';
  const config: S3ClientConfig = {
    ...(location.endpoint ? { endpoint: location.endpoint } : {}),
    ...(location.region ? { region: location.region } : {}),
    ...(location.pathStyle ? { forcePathStyle: true } : {}),
    // Checksums only where S3 requires them: stores such as Ceph RGW 16 do not know the newer checksum headers.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  };
  const client = new S3Client(config);
  // A conditional write is never retried by the SDK: a retry after a write that did land would fail its own condition.
  const once = new S3Client({ ...config, maxAttempts: 1 });
  const { bucket: Bucket, prefix } = location;
  const key = (rel: string) => `${prefix}${rel}`;
  const name = (rel: string) => `${describeBucket(location)}${rel}`;
  // Ceph RGW 16 matches If-Match only against the ETag without its quotes; AWS takes the quoted form. Learned on first use.
  let quoteEtags = false;

  const putCommand = (rel: string, body: Buffer, headers: ObjectHeaders, condition?: WriteCondition, generation?: number) => {
    const command = new PutObjectCommand({
      Bucket,
      Key: key(rel),
      Body: body,
      ContentType: headers['Content-Type'],
      CacheControl: headers['Cache-Control'],
      // User metadata (x-amz-meta-*): no client sees it.
      ...(generation !== undefined ? { Metadata: { [GENERATION_META]: String(generation) } } : {}),
      ...(condition && 'ifMatch' in condition ? { IfMatch: quoteEtags ? condition.ifMatch : condition.ifMatch.replace(/"/g, '') } : {}),
      ...(condition && 'ifNoneMatch' in condition ? { IfNoneMatch: '*' } : {}),
    });
    const get = headers['X-Terraform-Get'];
    // Not an S3 header, so the SDK has no field for it: added to the request as it is built (and signed).
    if (get !== undefined)
      command.middlewareStack.add((next) => (args) => (((args.request as { headers: Record<string, string> }).headers['x-terraform-get'] = get), next(args)), {
        step: 'build',
      });
    return command;
  };

  return {
    location,
    name,
    async get(rel) {
      try {
        const out = await client.send(new GetObjectCommand({ Bucket, Key: key(rel) }));
        return { body: Buffer.from(await out.Body!.transformToByteArray()), etag: out.ETag ?? '' };
      } catch (error) {
        if (statusOf(error) === 404 && nameOf(error) !== 'NoSuchBucket') return undefined;
        throw bucketError(error, `read ${name(rel)}`);
      }
    },
    etag: (rel) => currentEtag(rel),
    async head(rel) {
      try {
        const out = await client.send(new HeadObjectCommand({ Bucket, Key: key(rel) }));
        const generation = Number(out.Metadata?.[GENERATION_META]);
        return { etag: out.ETag ?? '', generation: Number.isInteger(generation) ? generation : undefined };
      } catch (error) {
        if (statusOf(error) === 404) return undefined;
        throw bucketError(error, `read ${name(rel)}`);
      }
    },
    async put(rel, body, headers) {
      try {
        if (body.length <= MULTIPART_BYTES) await client.send(putCommand(rel, body, headers));
        else {
          const params = { Bucket, Key: key(rel), Body: body, ContentType: headers['Content-Type'], CacheControl: headers['Cache-Control'] };
          // Loaded only for a large object: most pushes and every publish never need it.
          const { Upload } = await import('@aws-sdk/lib-storage');
          await new Upload({ client, params, partSize: MULTIPART_BYTES, queueSize: 2 }).done();
        }
      } catch (error) {
        throw bucketError(error, `write ${name(rel)}`);
      }
    },
    async putIf(rel, body, headers, condition, generation) {
      for (;;) {
        try {
          const out = await once.send(putCommand(rel, body, headers, condition, generation));
          return { etag: out.ETag ?? '' };
        } catch (error) {
          const status = statusOf(error);
          // 409: AWS's answer when a concurrent write to the key got in the way; retried like a lost race, as AWS advises.
          if (status !== 412 && status !== 409 && status !== 500) throw bucketError(error, `write ${name(rel)}`);
          // A 412 for an ETag that is still current means this store wants the other form of it: try that once.
          if (status === 412 && 'ifMatch' in condition && !quoteEtags && (await currentEtag(rel)) === condition.ifMatch) {
            quoteEtags = true;
            continue;
          }
          return 'lost';
        }
      }
    },
    async *list(under = '') {
      let token: string | undefined;
      do {
        let page;
        try {
          page = await client.send(new ListObjectsV2Command({ Bucket, Prefix: prefix + under, ContinuationToken: token }));
        } catch (error) {
          throw bucketError(error, `list ${describeBucket(location)}`);
        }
        for (const object of page.Contents ?? []) if (object.Key) yield object.Key.slice(prefix.length);
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
    },
    async folders(under) {
      const names: string[] = [];
      let token: string | undefined;
      do {
        let page;
        try {
          page = await client.send(new ListObjectsV2Command({ Bucket, Prefix: prefix + under, Delimiter: '/', ContinuationToken: token }));
        } catch (error) {
          throw bucketError(error, `list ${describeBucket(location)}`);
        }
        for (const p of page.CommonPrefixes ?? []) if (p.Prefix) names.push(p.Prefix.slice(prefix.length + under.length, -1));
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      return names.sort();
    },
    async remove(rels) {
      // DeleteObjects takes at most 1,000 keys a request.
      for (let i = 0; i < rels.length; i += 1000) {
        const batch = rels.slice(i, i + 1000);
        try {
          const out = await client.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects: batch.map((rel) => ({ Key: key(rel) })), Quiet: true } }));
          const failed = out.Errors?.[0];
          if (failed) throw new Error(`${failed.Key}: ${failed.Code} ${failed.Message ?? ''}`);
        } catch (error) {
          throw bucketError(error, `delete ${batch.length} objects from ${describeBucket(location)}`);
        }
      }
    },
    close() {
      client.destroy();
      once.destroy();
    },
  };

  async function currentEtag(rel: string): Promise<string | undefined> {
    try {
      return (await client.send(new HeadObjectCommand({ Bucket, Key: key(rel) }))).ETag;
    } catch {
      return undefined;
    }
  }
}

function statusOf(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

function nameOf(error: unknown): string {
  return (error as { name?: string }).name ?? '';
}

/** What went wrong talking to the store, with what to check. */
export function bucketError(error: unknown, what: string): MirrorError {
  const status = statusOf(error);
  const code = nameOf(error);
  const message = messageOf(error);
  let hint = 'Check the endpoint (--endpoint, AWS_ENDPOINT_URL), the bucket name and your network.';
  if (status === 403 || /InvalidAccessKeyId|SignatureDoesNotMatch|AccessDenied|credential/i.test(`${code} ${message}`)) {
    hint = 'Check the credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE and ~/.aws/credentials) and that they may use this bucket.';
  } else if (/region/i.test(message))
    hint = "Set the region: --region, AWS_REGION (or AWS_DEFAULT_REGION), or the profile's region in ~/.aws/config (us-east-1 for most S3-compatible stores).";
  else if (code === 'NoSuchBucket') hint = "Create the bucket first (aws s3 mb s3://BUCKET, or your store's own tool).";
  // The SDK says "UnknownError" for an error answer without a body (a HEAD, some stores' 404s): the code and status say more.
  const said =
    [code, message === 'UnknownError' || message === code ? '' : message].filter((part) => part && !message.startsWith(`${part}:`)).join(': ') || message;
  const detail = status === undefined || said.includes(String(status)) ? said : `${said} (HTTP ${status})`;
  return new MirrorError('OUTPUT_FAILED', `Could not ${what}: ${detail}`, { hint, cause: error });
}
