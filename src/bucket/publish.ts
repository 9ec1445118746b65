// `modmirror publish --out s3://BUCKET/PREFIX`: the publish every mirror gets
// (publish/module.ts, its ledger check included), made on the part of the
// bucket's mirror it reads, then uploaded by writeToBucket's race-safe commit.

import { publish, type PublishOptions, type PublishResult } from '../publish/module.js';
import { refreshModules } from '../publish/refresh.js';
import { addressKey } from '../protocol/paths.js';
import type { VersionSource } from '../types.js';
import { describeBucket } from './location.js';
import { moduleReads } from './reads.js';
import type { Bucket } from './store.js';
import { writeToBucket, type BucketWriteOptions, type BucketWriteResult } from './write.js';

export type BucketPublishOptions = Omit<PublishOptions, 'outDir' | 'hashArchives' | 'newMirror'> & BucketWriteOptions;

export async function publishToBucket(
  bucket: Bucket,
  source: VersionSource,
  options: BucketPublishOptions,
): Promise<PublishResult & BucketWriteResult & { target: string }> {
  const result = await writeToBucket(
    bucket,
    {
      reads: (manifest) => moduleReads(source.address, manifest),
      // A fresh mirror when the bucket has none.
      // A redo takes the version the first attempt built (and checked strictly) from the build cache.
      write: (dir, attempt) => publish(source, { ...options, outDir: dir, hashArchives: false, newMirror: true, reuseBuilt: attempt > 1 }),
      unchanged: (r) => r.outcome === 'unchanged',
      modules: [addressKey(source.address)],
      refresh: (dir, keys) => refreshModules(keys, { outDir: dir, imageHosts: options.imageHosts, hashArchives: false }),
    },
    options,
  );
  return { ...result, target: describeBucket(bucket.location) };
}
