// `modmirror deprecate ... --out s3://BUCKET/PREFIX`: the deprecation every
// mirror gets (publish/deprecate.ts), recorded in the manifest and made on
// the part of the bucket's mirror it rewrites (the module's documents, the
// indexes), then uploaded by writeToBucket's race-safe commit.

import type { Deprecation } from '../mirror/deprecations.js';
import type { PrivateSigningKey } from '../openpgp/keys.js';
import { setDeprecation, type DeprecateResult } from '../publish/deprecate.js';
import { refreshModules } from '../publish/refresh.js';
import { addressKey } from '../protocol/paths.js';
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
  options: { imageHosts: string[]; signer?: PrivateSigningKey },
): Promise<DeprecateResult & BucketWriteResult & { target: string }> {
  const result = await writeToBucket(
    bucket,
    {
      reads: (manifest) => moduleReads(address, manifest, { siblings: false }),
      write: (dir) => setDeprecation(dir, address, version, deprecation, { hashArchives: false, ...(options.signer ? { signer: options.signer } : {}) }),
      unchanged: (r) => !r.changed,
      modules: [addressKey(address)],
      refresh: (dir, keys) => refreshModules(keys, { outDir: dir, imageHosts: options.imageHosts, hashArchives: false }),
    },
    options.signer ? { signer: options.signer } : {},
  );
  return { ...result, target: describeBucket(bucket.location) };
}
