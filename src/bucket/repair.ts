// `modmirror verify --repair s3://BUCKET/PREFIX`: every derived document of
// the bucket's mirror written again from its manifest (publish/refresh.ts on
// the whole mirror fetched), uploading what differs from the bucket's objects
// as they are, not as a record says they are. It heals a bucket whose
// listings and indexes disagree with its manifest, whatever left them so,
// and upgrades a format-1 manifest, through writeToBucket's commit.

import { refreshModules } from '../publish/refresh.js';
import { moduleReads } from './reads.js';
import type { Bucket } from './store.js';
import { writeToBucket, type BucketReads } from './write.js';
import { parseAddressKey } from '../protocol/paths.js';

export async function repairBucket(bucket: Bucket, options: { imageHosts: string[]; concurrency?: number }): Promise<{ uploaded: string[] }> {
  const refresh = (dir: string, keys: string[] | 'all') => refreshModules(keys, { outDir: dir, imageHosts: options.imageHosts, hashArchives: false });
  return writeToBucket(
    bucket,
    {
      reads: (manifest) => {
        const reads: BucketReads = { files: [], standIns: [] };
        for (const key of Object.keys(manifest?.modules ?? {})) {
          const part = moduleReads(parseAddressKey(key), manifest, { siblings: false });
          reads.files.push(...part.files);
          reads.standIns.push(...part.standIns);
        }
        return { files: [...new Set(reads.files)], standIns: reads.standIns };
      },
      // A write of its own (its manifest gets the next generation): its documents replace whatever the bucket holds.
      write: (dir) => refresh(dir, 'all'),
      unchanged: () => false,
      modules: [],
      whole: true,
      refresh,
    },
    { ...options, distrustRecord: true },
  );
}
