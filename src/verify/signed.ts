// `modmirror verify --trust KEY`: the mirror's truth (manifest.json and each
// module state file) must carry a good signature by a trusted key, FILE.asc
// beside it (mirror/signed.ts writes them). With the truth authentic, the
// rest of verify checks every archive against the signed states' sha256.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { moduleStateFile, moduleStatesIn } from '../mirror/manifest.js';
import { TRUTH_SIGNATURE_SUFFIX } from '../mirror/signed.js';
import { readSignatureFile, verifyFileSignature, type TrustedKey } from '../openpgp/detached.js';
import { MANIFEST_FILE } from '../protocol/paths.js';
import type { Problem } from '../mirror/transaction.js';

const WHY: Record<string, string> = {
  unreadable: 'its signature is unreadable',
  untrusted: 'it is signed by a key that is not trusted',
  revoked: 'it is signed by a revoked key',
  expired: 'it is signed by an expired key',
  future: 'its signature is dated in the future',
  altered: 'it changed after it was signed',
};

/** A problem for each truth file of the mirror at `dir` without a good signature by one of `trusted`. */
export async function verifyTruthSignatures(dir: string, trusted: TrustedKey[]): Promise<Problem[]> {
  const problems: Problem[] = [];
  for (const rel of [MANIFEST_FILE, ...moduleStatesIn(dir).map(moduleStateFile)]) {
    const file = join(dir, rel);
    if (!existsSync(file)) continue;
    const armored = readSignatureFile(file + TRUTH_SIGNATURE_SUFFIX);
    const checked = typeof armored === 'string' ? await verifyFileSignature(file, armored, trusted) : armored;
    if (checked.ok) continue;
    const by = checked.keyId ? ` (${checked.keyId})` : '';
    problems.push({
      path: rel,
      message: checked.reason === 'missing' ? `is not signed: no ${rel}${TRUTH_SIGNATURE_SUFFIX} beside it` : `${WHY[checked.reason]}${by}: ${checked.detail}`,
    });
  }
  return problems;
}
