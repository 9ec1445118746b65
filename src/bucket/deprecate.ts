// `modmirror deprecate ... --out s3://BUCKET/PREFIX`: the deprecation every
// mirror gets (publish/deprecate.ts), made on the part of the bucket's mirror
// it rewrites (the module's documents, the indexes, deprecations.json), then
// uploaded by writeToBucket's race-safe commit.

import type { Deprecation } from '../mirror/deprecations.js';
import { setDeprecation, type DeprecateResult } from '../publish/deprecate.js';
import type { ModuleAddress } from '../types.js';
import { describeBucket } from './location.js';
import { moduleReads } from './reads.js';
import type { Bucket } from './store.js';
import { writeToBucket, type BucketWriteResult } from './write.js';

export async function deprecateInBucket(
  bucket: Bucket,
  address: ModuleAddress,
  version: string,
  deprecation: Deprecation | null,
): Promise<DeprecateResult & BucketWriteResult & { target: string }> {
  const result = await writeToBucket(bucket, {
    reads: (manifest) => moduleReads(address, manifest),
    write: (dir) => setDeprecation(dir, address, version, deprecation, { hashArchives: false }),
    unchanged: (r) => !r.changed,
  });
  return { ...result, target: describeBucket(bucket.location) };
}
