// A real S3 server for the bucket tests: Ceph's RADOS Gateway on 127.0.0.1,
// started by test/s3/rgw.sh in a temp folder for one test file, with a
// website endpoint that stores x-terraform-get; and an SDK client to look at
// what modmirror left in it.

import { execFile } from 'node:child_process';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, PutBucketPolicyCommand, PutBucketWebsiteCommand, S3Client } from '@aws-sdk/client-s3';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { freePort, ROOT } from '../helpers.js';

const run = promisify(execFile);
const SCRIPT = join(ROOT, 'test/s3/rgw.sh');

export interface Rgw {
  endpoint: string;
  website: string;
  /** Environment for the CLI: credentials, and no region or endpoint from the machine's own config. */
  env: Record<string, string>;
  client: S3Client;
  /** The CLI flags that point at this server. */
  flags: string[];
  createBucket(name: string, website?: boolean): Promise<void>;
  /** Every object under a prefix: key -> ETag. */
  list(bucket: string, prefix?: string): Promise<Map<string, string>>;
  /** Every object under a prefix: key -> its ETag and size. */
  sizes(bucket: string, prefix?: string): Promise<Map<string, { etag: string; size: number }>>;
  get(bucket: string, key: string): Promise<{ body: Buffer; contentType?: string; cacheControl?: string; etag?: string } | undefined>;
  stop(): Promise<void>;
}

export async function startRgw(dir: string): Promise<Rgw> {
  const [port, web, mon] = [await freePort(), await freePort(), await freePort()];
  await run('bash', [SCRIPT, 'start', dir, String(port), String(web), String(mon)], { timeout: 60_000 });
  const endpoint = `http://127.0.0.1:${port}`;
  const credentials = { accessKeyId: 'testaccesskey', secretAccessKey: 'testsecretkey' };
  process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';
  const client = new S3Client({
    endpoint,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  async function sizes(bucket: string, prefix = ''): Promise<Map<string, { etag: string; size: number }>> {
    const out = new Map<string, { etag: string; size: number }>();
    let token: string | undefined;
    do {
      const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
      for (const o of page.Contents ?? []) out.set(o.Key!, { etag: o.ETag!, size: o.Size ?? 0 });
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return out;
  }
  return {
    endpoint,
    website: `http://127.0.0.1:${web}`,
    env: {
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      AWS_CONFIG_FILE: '/dev/null',
      AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
    },
    client,
    flags: ['--endpoint', endpoint, '--path-style'],
    async createBucket(name, website = false) {
      await client.send(new CreateBucketCommand({ Bucket: name }));
      if (!website) return;
      await client.send(new PutBucketWebsiteCommand({ Bucket: name, WebsiteConfiguration: { IndexDocument: { Suffix: 'index.json' } } }));
      const policy = {
        Version: '2012-10-17',
        Statement: [{ Effect: 'Allow', Principal: '*', Action: ['s3:GetObject'], Resource: [`arn:aws:s3:::${name}/*`] }],
      };
      await client.send(new PutBucketPolicyCommand({ Bucket: name, Policy: JSON.stringify(policy) }));
    },
    async list(bucket, prefix = '') {
      return new Map([...(await sizes(bucket, prefix))].map(([key, { etag }]) => [key, etag]));
    },
    sizes,
    async get(bucket, key) {
      try {
        const o = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        return { body: Buffer.from(await o.Body!.transformToByteArray()), contentType: o.ContentType, cacheControl: o.CacheControl, etag: o.ETag };
      } catch (error) {
        if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return undefined;
        throw error;
      }
    },
    async stop() {
      client.destroy();
      await run('bash', [SCRIPT, 'stop', dir], { timeout: 60_000 });
    },
  };
}
