// `modmirror verify --trust KEY`: the mirror's truth (manifest.json and each
// module state file) must carry a good signature by a trusted key, FILE.asc
// beside it (mirror/signed.ts writes them). With the truth authentic, the
// rest of verify checks every archive against the signed states' sha256.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { moduleStateFile, moduleStatesIn } from '../mirror/manifest.js';
import { TRUTH_SIGNATURE_SUFFIX } from '../mirror/signed.js';
import { verifyFileSignature, type TrustedKey } from '../openpgp/detached.js';
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
    if (!existsSync(file + TRUTH_SIGNATURE_SUFFIX)) {
      problems.push({ path: rel, message: `is not signed: no ${rel}${TRUTH_SIGNATURE_SUFFIX} beside it` });
      continue;
    }
    const checked = await verifyFileSignature(file, readFileSync(file + TRUTH_SIGNATURE_SUFFIX, 'utf8'), trusted);
    if (!checked.ok) problems.push({ path: rel, message: `${WHY[checked.reason]}${checked.keyId ? ` (${checked.keyId})` : ''}: ${checked.detail}` });
  }
  return problems;
}
