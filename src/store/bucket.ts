// A mirror in a bucket of an S3-compatible store: each write runs the
// folder's writers on the part of the mirror it fetches and commits by
// conditional writes (bucket/write.ts), so many writers share one prefix;
// verify fetches the objects and checks them as a folder.

import { describeBucket, type BucketLocation } from '../bucket/location.js';
import { MirrorError } from '../errors.js';
import { deprecateInBucket } from '../bucket/deprecate.js';
import { publishToBucket } from '../bucket/publish.js';
import { repairBucket } from '../bucket/repair.js';
import { openBucket } from '../bucket/store.js';
import { verifyBucket } from '../bucket/verify.js';
import type { MirrorStore, StoreOptions } from './index.js';

export function openBucketStore(location: BucketLocation, options: StoreOptions): MirrorStore {
  const bucket = openBucket(location);
  const shown = describeBucket(location);
  return {
    shown,
    location: shown,
    publish: (source, publishOptions) => publishToBucket(bucket, source, publishOptions),
    publishProvider() {
      return Promise.reject(
        new MirrorError(
          'USAGE',
          '--provider-release publishes into a mirror in a folder, not a bucket yet: publish into the folder, then modmirror push it to the bucket.',
        ),
      );
    },
    deprecate: (address, version, deprecation, signer) =>
      deprecateInBucket(bucket, address, version, deprecation, { imageHosts: options.imageHosts, ...(signer ? { signer } : {}) }),
    async verify({ repair = false, complete, trusted } = {}) {
      if (complete) throw new MirrorError('USAGE', '--complete reads the mirror as a folder: verify the folder you pushed, or sync the bucket to one first.');
      const repaired = repair ? (await repairBucket(bucket, { imageHosts: options.imageHosts })).uploaded : undefined;
      return { problems: await verifyBucket(bucket, trusted ? { trusted } : {}), ...(repaired ? { repaired } : {}) };
    },
    unbundle() {
      return Promise.reject(
        new MirrorError(
          'USAGE',
          `unbundle takes a bundle into a mirror in a folder, not a bucket: unbundle into the folder, then modmirror push ${shown} --mirror DIR.`,
        ),
      );
    },
    close: () => bucket.close(),
  };
}
