// A signed mirror: with a signing key, a write signs the mirror's truth it
// changes (each module state file it rewrites, and the root manifest.json),
// each with a detached armored signature beside it, FILE.asc, that `gpg
// --verify FILE.asc FILE` checks. Signing per file keeps a publish's cost
// with its change: one module's state and the root, never the whole mirror.
// `verify --trust` checks them (verify/signed.ts).
//
// A mirror is signed when its root has a signature beside it. Every write
// into one must keep it so: a write without the key that would change its
// truth is refused before anything is made live, since the signatures left
// beside the new bytes would no longer match them.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { MirrorError } from '../errors.js';
import { signFile } from '../openpgp/detached.js';
import type { PrivateSigningKey } from '../openpgp/keys.js';
import { MANIFEST_FILE } from '../protocol/paths.js';
import { isTruthFile, moduleStateFile, moduleStatesIn } from './manifest.js';
import { sameFile } from '../file-stamp.js';
import { sameFileBytes, type Staging } from './staging.js';

export const TRUTH_SIGNATURE_SUFFIX = '.asc';

/** Whether a path is a truth file's signature. */
export const isTruthSignature = (rel: string): boolean => rel.endsWith(TRUTH_SIGNATURE_SUFFIX) && isTruthFile(rel.slice(0, -TRUTH_SIGNATURE_SUFFIX.length));

/** Whether the mirror at `dir` is signed: its manifest.json has a signature beside it. */
export const isSignedMirror = (dir: string): boolean => existsSync(join(dir, MANIFEST_FILE + TRUTH_SIGNATURE_SUFFIX));

type StagedTruth = Pick<Staging, 'at' | 'write' | 'linkFrom' | 'remove'> & { root?: string; changed?: string[] };

/**
 * What a write staged: `whole`, a whole new mirror (a build); `copy`, a copy
 * of the live mirror the write changed in place (unbundle), its signatures
 * those copied or brought by the write; `change`, only what `changed` names.
 */
export type StagedAs = 'whole' | 'copy' | 'change';

/**
 * Keeps the truth's signatures right for what a write staged. With
 * `signer`, each truth file whose bytes are new is signed (one with the
 * live bytes keeps the live signature); the signature of a truth file the
 * write removes goes with it. Without one, a write that changes a signed
 * mirror's truth is refused (SIGNING_KEY_REQUIRED).
 */
export async function signTruth(liveDir: string, staging: StagedTruth, signer: PrivateSigningKey | undefined, as: StagedAs): Promise<void> {
  const changed = new Set(staging.changed ?? []);
  const files = as === 'change' ? [...changed].filter(isTruthFile) : [...moduleStatesIn(staging.root!).map(moduleStateFile), MANIFEST_FILE];
  const unsigned: string[] = [];
  for (const rel of files) {
    const staged = staging.at(rel);
    const signature = rel + TRUTH_SIGNATURE_SUFFIX;
    const liveSignature = join(liveDir, signature);
    if (!existsSync(staged)) {
      // Removed: a signature of bytes no longer there vouches for nothing.
      if (existsSync(liveSignature)) await staging.remove(signature);
      continue;
    }
    const kept = existsSync(liveSignature) && sameFileBytes(join(liveDir, rel), staged);
    if (as === 'copy') {
      // A signature the write brought (unbundle carries the bundle's), or the live one of bytes it kept.
      const stagedSignature = staging.at(signature);
      if (existsSync(stagedSignature) && (kept || !sameFile(stagedSignature, liveSignature))) continue;
    } else if (changed.has(signature)) continue;
    else if (kept) {
      // The live signature covers these bytes: a new generation links it, a change leaves it where it is.
      if (as === 'whole') await staging.linkFrom(liveSignature, signature);
      continue;
    }
    if (signer) await staging.write(signature, await signFile(staged, signer));
    else unsigned.push(rel);
  }
  if (signer || !isSignedMirror(liveDir)) return;
  // A new generation without a key would drop every signature, even of the bytes it keeps.
  if (as === 'whole' || unsigned.length > 0) throw unsignedWrite(as === 'whole' ? [MANIFEST_FILE] : unsigned);
}

/** The refusal of a write without a key that would change a signed mirror's truth (`files`). */
export function unsignedWrite(files: string[]): MirrorError {
  const shown = files.length > 3 ? `${files.slice(0, 3).join(', ')} and ${files.length - 3} more` : files.join(', ');
  // The fix is in the message itself: serve's answer carries the message alone (and no path of the server's).
  return new MirrorError(
    'SIGNING_KEY_REQUIRED',
    `The mirror is signed (${MANIFEST_FILE}${TRUTH_SIGNATURE_SUFFIX}), and this write has no key to sign what it changes (${shown}): ` +
      "give it the mirror's key, with --sign-key FILE or the config's provenance: key (which serve reads for its writes). Nothing was changed.",
    {
      hint: `To stop signing the mirror instead, remove its signatures first: ${MANIFEST_FILE}${TRUTH_SIGNATURE_SUFFIX} and state/**/*.json${TRUTH_SIGNATURE_SUFFIX}.`,
    },
  );
}
