// How a mirror's files become objects, without a server: the bucket URL (and its region), the
// headers (what the nginx block sends), the object record's parts, the upload phases, what a new
// archive's lost conditional write means.

import { describe, expect, it, vi } from 'vitest';
import { parseBucketUrl } from '../../src/bucket/location.js';
import { bucketLocation } from '../../src/commands/bucket-flags.js';
import { joinClaims, objectHeaders, objectId, ownerOfObject, splitClaims } from '../../src/bucket/objects.js';
import type { Bucket, StoredObject } from '../../src/bucket/store.js';
import { uploadInOrder } from '../../src/bucket/upload.js';
import { ARCHIVE_TYPE, CACHE_LONG, CACHE_SHORT, JSON_TYPE, PROVIDER_ZIP_TYPE, RELEASE_SIGNATURE_TYPE, RELEASE_SUMS_TYPE } from '../../src/protocol/headers.js';
import { runCli, tempDir } from '../helpers.js';

describe('bucket URLs', () => {
  it('takes s3://BUCKET and s3://BUCKET/PREFIX', () => {
    expect(parseBucketUrl('s3://modules', '--out')).toEqual({ bucket: 'modules', prefix: '' });
    expect(parseBucketUrl('s3://modules/a/b/', '--out', { endpoint: 'http://127.0.0.1:7480', pathStyle: true })).toEqual({
      bucket: 'modules',
      prefix: 'a/b/',
      endpoint: 'http://127.0.0.1:7480',
      pathStyle: true,
    });
  });

  it('refuses what is not one, naming the flag', () => {
    for (const bad of ['s3://', 's3://A_B', 's3://okay/../x', 's3://okay/a//b', 'https://x']) expect(() => parseBucketUrl(bad, '--out'), bad).toThrow(/--out/);
    expect(() => parseBucketUrl('s3://okay', '--out', { endpoint: 'ftp://x' })).toThrow(/--endpoint/);
  });

  it('take the region as the AWS CLI does: --region, AWS_REGION, AWS_DEFAULT_REGION, the profile; else us-east-1 with an endpoint', () => {
    const region = (env: Record<string, string>, flags: Record<string, string> = {}) => {
      for (const name of ['AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_PROFILE', 'AWS_ENDPOINT_URL', 'AWS_ENDPOINT_URL_S3']) vi.stubEnv(name, env[name]);
      try {
        return bucketLocation('s3://mirror/p', flags, '--out').region;
      } finally {
        vi.unstubAllEnvs();
      }
    };
    const endpoint = { endpoint: 'http://127.0.0.1:7480' };
    expect(region({ AWS_DEFAULT_REGION: 'eu-west-1' })).toBe('eu-west-1');
    expect(region({ AWS_DEFAULT_REGION: 'eu-west-1' }, endpoint)).toBe('eu-west-1');
    expect(region({ AWS_REGION: 'us-west-2', AWS_DEFAULT_REGION: 'eu-west-1' })).toBe('us-west-2');
    expect(region({ AWS_REGION: '', AWS_DEFAULT_REGION: 'eu-west-1' })).toBe('eu-west-1');
    expect(region({ AWS_DEFAULT_REGION: 'eu-west-1' }, { region: 'ap-south-1' })).toBe('ap-south-1');
    // The profile's region is the SDK's to read; an endpoint with no region anywhere is S3's default.
    expect(region({ AWS_PROFILE: 'registry' }, endpoint)).toBeUndefined();
    expect(region({}, endpoint)).toBe('us-east-1');
    expect(region({})).toBeUndefined();
  });

  it('are reached with AWS_DEFAULT_REGION alone, not refused as "Region is missing"', async () => {
    const env = { AWS_REGION: '', AWS_DEFAULT_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'id', AWS_SECRET_ACCESS_KEY: 'secret' };
    // Nothing listens there: the store is asked, and the answer is that it cannot be reached.
    const r = await runCli(['verify', '--mirror', 's3://mirror/p', '--endpoint', 'http://127.0.0.1:9'], tempDir(), env);
    expect(r.code).toBe(1);
    expect(r.stderr).not.toMatch(/Region is missing/);
    expect(r.stderr).toMatch(/^error: Could not list s3:\/\/mirror\/p\/: .*ECONNREFUSED/m);
  });
});

describe('objects', () => {
  it('get the content type and cache lifetime the nginx block sends for their kind', () => {
    const of = (rel: string) => objectHeaders(rel, Buffer.from('{}'), {});
    expect(of('v1/modules/a/b/c/1.0.0/b-c-1.0.0.tar.gz')).toEqual({ 'Content-Type': ARCHIVE_TYPE, 'Cache-Control': CACHE_LONG });
    expect(of('providers/h/n/t/terraform-provider-t_1.0.0_linux_amd64.zip')).toEqual({ 'Content-Type': PROVIDER_ZIP_TYPE, 'Cache-Control': CACHE_LONG });
    expect(of('v1/providers/n/t/1.0.0/terraform-provider-t_1.0.0_SHA256SUMS')).toEqual({ 'Content-Type': RELEASE_SUMS_TYPE, 'Cache-Control': CACHE_LONG });
    expect(of('v1/providers/n/t/1.0.0/terraform-provider-t_1.0.0_SHA256SUMS.sig')).toEqual({
      'Content-Type': RELEASE_SIGNATURE_TYPE,
      'Cache-Control': CACHE_LONG,
    });
    expect(of('v1/modules/a/b/c/1.0.0/b-c-1.0.0.tar.gz.intoto.jsonl')).toEqual({ 'Content-Type': JSON_TYPE, 'Cache-Control': CACHE_LONG });
    for (const rel of ['v1/modules/a/b/c/versions', 'v1/modules/a/b/c/1.0.0/download', 'v2/modules/a/b/c/downloads/summary', 'manifest.json']) {
      expect(of(rel), rel).toEqual({ 'Content-Type': JSON_TYPE, 'Cache-Control': CACHE_SHORT });
    }
    expect(of('browse/app.js')['Content-Type']).toBe('text/javascript');
  });

  it('carry the download location as x-terraform-get only when asked, and then have another id', () => {
    const body = Buffer.from('{"location":"./b-c-1.0.0.tar.gz"}');
    const rel = 'v1/modules/a/b/c/1.0.0/download';
    expect(objectHeaders(rel, body, { terraformGet: true })['X-Terraform-Get']).toBe('./b-c-1.0.0.tar.gz');
    expect(objectHeaders(rel, body, {})['X-Terraform-Get']).toBeUndefined();
    expect(objectId(body, objectHeaders(rel, body, { terraformGet: true }))).not.toBe(objectId(body, objectHeaders(rel, body, {})));
  });
});

describe('a new archive whose conditional write is lost', () => {
  /** A bucket that loses the first `losses` conditional writes (as a 500 that stored nothing), then holds `held`. */
  function losing(losses: number, held?: Buffer) {
    const stored = new Map<string, StoredObject>();
    let calls = 0;
    const bucket = {
      name: (rel: string) => `s3://b/${rel}`,
      get: (rel: string) => Promise.resolve(stored.get(rel)),
      putIf: (rel: string, body: Buffer) => {
        calls += 1;
        if (calls <= losses) return Promise.resolve('lost' as const);
        if (held) stored.set(rel, { body: held, etag: '"x"' });
        else stored.set(rel, { body, etag: '"y"' });
        return Promise.resolve(held ? ('lost' as const) : ('written' as const));
      },
    } as unknown as Bucket;
    return { bucket, stored, calls: () => calls };
  }
  const rel = 'v1/modules/a/b/c/1.0.0/b-c-1.0.0.tar.gz';
  const upload = (body: Buffer) => ({
    rel,
    body: () => body,
    headers: objectHeaders(rel, body, {}),
    id: objectId(body, objectHeaders(rel, body, {})),
    create: true,
  });

  it('is tried again while nothing is there, and stores the archive', async () => {
    const { bucket, stored, calls } = losing(2);
    await uploadInOrder(bucket, [upload(Buffer.from('mine'))], { concurrency: 1 });
    expect([calls(), stored.get(rel)?.body.toString()]).toEqual([3, 'mine']);
  });

  it('is a version conflict when another writer stored other bytes there', async () => {
    const { bucket } = losing(0, Buffer.from('theirs'));
    await expect(uploadInOrder(bucket, [upload(Buffer.from('mine'))], { concurrency: 1 })).rejects.toMatchObject({ code: 'VERSION_CONFLICT' });
  });

  it('fails, saying so, when the store keeps refusing and holds nothing', async () => {
    const { bucket } = losing(Infinity);
    await expect(uploadInOrder(bucket, [upload(Buffer.from('mine'))], { concurrency: 1 })).rejects.toThrow(/refused it 5 times .* yet holds nothing there/);
  });
});

describe('the object record split into parts', () => {
  const objects = {
    'state/acme/net/aws.json': 's1',
    'v1/modules/acme/net/aws/1.0.0/download': 'd1',
    'v2/modules/acme/net/aws/downloads/summary': 'c1',
    'v1/modules/acme/net/index.json': 'f1',
    'v1/modules/acme/net/google/1.0.0/download': 'd2',
    'v1/modules/acme/index.json': 'l1',
    'browse/index.json': 'b1',
  };

  it('gives each object to its module, its name (every provider of it), or the root', () => {
    expect(ownerOfObject('state/acme/net/aws.json')).toBeUndefined(); // not a state file's path: states are state/NS/NAME.PROVIDER.json
    expect(ownerOfObject('state/acme/net.aws.json')).toEqual({ module: 'acme/net/aws' });
    expect(ownerOfObject('v1/modules/acme/net/aws/1.0.0/download')).toEqual({ module: 'acme/net/aws' });
    expect(ownerOfObject('v2/modules/acme/net/aws/downloads/summary')).toEqual({ module: 'acme/net/aws' });
    expect(ownerOfObject('v1/modules/acme/net/index.json')).toEqual({ family: 'acme/net' });
    expect(ownerOfObject('v1/modules/acme/index.json')).toBeUndefined();
    expect(ownerOfObject('providers/registry.example.com/acme/x/index.json')).toBeUndefined();
  });

  it("puts a module's claims and its name's in its part, and leaves the other modules' in the root", () => {
    const split = splitClaims(objects, ['acme/net/aws']);
    expect(split.part('acme/net/aws')).toEqual({
      'v1/modules/acme/net/aws/1.0.0/download': 'd1',
      'v2/modules/acme/net/aws/downloads/summary': 'c1',
      'v1/modules/acme/net/index.json': 'f1',
    });
    expect(Object.keys(split.root).sort()).toEqual([
      'browse/index.json',
      'state/acme/net/aws.json',
      'v1/modules/acme/index.json',
      'v1/modules/acme/net/google/1.0.0/download',
    ]);
  });

  it("trusts a name's claim only where every provider of the name makes it, and a module's part over the root", () => {
    const aws: Record<string, string> = { 'v1/modules/acme/net/aws/1.0.0/download': 'd1-new', 'v1/modules/acme/net/index.json': 'f1' };
    const google: Record<string, string> = { 'v1/modules/acme/net/google/1.0.0/download': 'd2', 'v1/modules/acme/net/index.json': 'f0' };
    const claims = joinClaims(
      { 'v1/modules/acme/net/aws/1.0.0/download': 'd1' },
      new Map([
        ['acme/net/aws', aws],
        ['acme/net/google', google],
      ]),
    );
    expect(claims).toEqual({ 'v1/modules/acme/net/aws/1.0.0/download': 'd1-new', 'v1/modules/acme/net/google/1.0.0/download': 'd2' });
    const agreed = joinClaims(
      {},
      new Map([
        ['acme/net/aws', aws],
        ['acme/net/google', { ...google, 'v1/modules/acme/net/index.json': 'f1' }],
      ]),
    );
    expect(agreed['v1/modules/acme/net/index.json']).toBe('f1');
    // A provider with no part (an older record): nothing is known of the name's objects from the parts.
    expect(
      joinClaims(
        {},
        new Map([
          ['acme/net/aws', aws],
          ['acme/net/google', undefined],
        ]),
      )['v1/modules/acme/net/index.json'],
    ).toBeUndefined();
    expect(joinClaims({}, new Map([['acme/net/aws', aws]]), { families: false })['v1/modules/acme/net/index.json']).toBeUndefined();
  });
});
