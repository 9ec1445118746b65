// A signed mirror: with a signing key, a write signs the mirror's truth it
// changes (each module state file it rewrites, and the root manifest.json),
// each with a detached armored signature beside it, FILE.asc, that `gpg
// --verify FILE.asc FILE` checks. Signing per file keeps a publish's cost
// with its change: one module's state and the root, never the whole mirror.
// `verify --trust` checks them (verify/signed.ts).

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { signFile } from '../openpgp/detached.js';
import type { PrivateSigningKey } from '../openpgp/keys.js';
import { MANIFEST_FILE } from '../protocol/paths.js';
import { moduleOfStateFile, moduleStateFile, moduleStatesIn } from './manifest.js';
import type { Staging } from './staging.js';

export const TRUTH_SIGNATURE_SUFFIX = '.asc';

const isTruth = (rel: string) => rel === MANIFEST_FILE || moduleOfStateFile(rel) !== undefined;

/**
 * Signs the truth files a write staged. `whole`: the staging holds the whole
 * new mirror (a build): each state whose bytes are the live one's keeps its
 * live signature, the others are signed. Otherwise `changed` names what the
 * write changed, and only those are signed.
 */
export async function signTruth(
  liveDir: string,
  staging: Pick<Staging, 'at' | 'write' | 'linkFrom'> & { root?: string; changed?: string[] },
  signer: PrivateSigningKey,
  whole: boolean,
): Promise<void> {
  const files = whole ? [...moduleStatesIn(staging.root!).map(moduleStateFile), MANIFEST_FILE] : (staging.changed ?? []).filter(isTruth);
  for (const rel of files) {
    const staged = staging.at(rel);
    if (!existsSync(staged)) continue;
    const live = join(liveDir, rel);
    if (whole && existsSync(live + TRUTH_SIGNATURE_SUFFIX) && existsSync(live) && readFileSync(live).equals(readFileSync(staged))) {
      await staging.linkFrom(live + TRUTH_SIGNATURE_SUFFIX, rel + TRUTH_SIGNATURE_SUFFIX);
      continue;
    }
    await staging.write(rel + TRUTH_SIGNATURE_SUFFIX, await signFile(staged, signer));
  }
}
