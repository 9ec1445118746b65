// `modmirror verify s3://BUCKET/PREFIX`: the checks verify makes of a folder,
// made of the bucket's objects. They are fetched into a temporary folder
// (verify reads every object anyway: each document, and each archive to hash
// it), and the folder is checked by the same verifyMirror (and, with trusted
// keys, the truth's signatures by the same check as a folder's).

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Problem } from '../mirror/transaction.js';
import type { TrustedKey } from '../openpgp/detached.js';
import { verifyMirror } from '../verify/index.js';
import { verifyTruthSignatures } from '../verify/signed.js';
import { RECORD_PREFIX } from './objects.js';
import type { Bucket } from './store.js';

export async function verifyBucket(bucket: Bucket, options: { concurrency?: number; trusted?: TrustedKey[] } = {}): Promise<Problem[]> {
  const temp = mkdtempSync(join(tmpdir(), 'modmirror-verify-'));
  try {
    const rels: string[] = [];
    for await (const rel of bucket.list()) if (!rel.startsWith(RECORD_PREFIX) && rel !== '' && !rel.endsWith('/')) rels.push(rel);
    let next = 0;
    const worker = async () => {
      while (next < rels.length) {
        const rel = rels[next++]!;
        const object = await bucket.get(rel);
        if (!object) continue;
        mkdirSync(dirname(join(temp, rel)), { recursive: true });
        writeFileSync(join(temp, rel), object.body);
      }
    };
    await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 16, rels.length) }, worker));
    return [...(options.trusted ? await verifyTruthSignatures(temp, options.trusted) : []), ...(await verifyMirror(temp))];
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}
