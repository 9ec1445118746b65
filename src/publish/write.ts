// What every writer that changes part of a mirror does first (a module or a
// provider publish, a deprecation, a removal): take the mirror's one write, a
// change made in place; open the mirror once; refuse a mirror that is not
// there unless a new one was asked for, since a mistyped path must not look
// like a first publish. What the write checks is the part it rewrote.

import type { PrivateSigningKey } from '../openpgp/keys.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { MirrorError } from '../errors.js';
import { homeOf, putBackSetAside } from '../mirror/home.js';
import type { LedgerPermissions } from '../mirror/ledger.js';
import { openMirror, type OpenedMirror } from '../mirror/read.js';
import { problemLines, withMirrorWrite, type MirrorView, type MirrorWrite } from '../mirror/transaction.js';
import { MANIFEST_FILE } from '../protocol/paths.js';
import { verifyMirror, type VerifyOptions } from '../verify/index.js';

export interface PartialWriteOptions {
  outDir: string;
  /** How the failure names the write: "publishing", "the deprecation". */
  what: string;
  /** Start a new mirror when there is none. */
  newMirror?: boolean;
  dryRun?: boolean;
  allow?: LedgerPermissions;
  /** What to verify of the new mirror, known once it is written. */
  check: () => VerifyOptions;
  /**
   * The modules whose states the write reads and may rewrite, given the live mirror's folder
   * (under the lock); undefined reads every module. The rest of the mirror is left as it is.
   */
  modules: (dir: string) => string[] | undefined;
  /** Signs the truth files the write changes. */
  signer?: PrivateSigningKey;
}

export async function withPartialWrite<T>(options: PartialWriteOptions, fn: (tx: MirrorWrite, mirror: OpenedMirror) => Promise<T>): Promise<T> {
  const home = homeOf(options.outDir);
  // Before the lock, which would make the folder's parents: a refused write leaves nothing behind.
  await putBackSetAside(home);
  if (options.newMirror !== true && !existsSync(join(home, MANIFEST_FILE))) throw missingMirror(home);
  const write = {
    start: 'in-place' as const,
    dryRun: options.dryRun === true,
    ...(options.allow ? { allow: options.allow } : {}),
    ...(options.signer ? { signer: options.signer } : {}),
    check: (mirror: MirrorView) => verifyMirror(mirror, options.check()),
    failure: (problems: Parameters<typeof problemLines>[0]) =>
      new MirrorError('MIRROR_INVALID', `The mirror failed verification after ${options.what}; it is left as it was:\n${problemLines(problems)}`),
  };
  return withMirrorWrite(home, write, async (tx) => {
    const mirror = openMirror(tx.outDir, () => tx.live(options.modules(tx.outDir)));
    if (!mirror.exists && options.newMirror !== true) throw missingMirror(tx.outDir);
    return fn(tx, mirror);
  });
}

function missingMirror(dir: string): MirrorError {
  return new MirrorError('USAGE', `There is no mirror at ${dir}.`, {
    hint: "Check --mirror (default: the config's out, else dist). To start a new mirror with this write (a first publish), pass --new-mirror.",
  });
}
