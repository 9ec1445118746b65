// The one way to change a mirror: under its lock (lock.ts), first put back a
// mirror an interrupted swap left aside, then write a staging copy
// (emit/staging.ts), verify it, and swap it in whole; on any failure the
// staging copy goes and the live mirror stays as it was. Readers that must see
// one mirror throughout (bundle) hold the same lock and verify what they read.
//
// It sits beside emit/ rather than in it because it verifies, and verify.ts
// reads emit's records: inside emit/ it would close an import circle.

import { createStaging, dryRunStaging, recoverInterruptedSwap, type Staging } from './emit/staging.js';
import type { MirrorError } from './errors.js';
import { withLock } from './lock.js';
import { verifyMirror, type Problem, type VerifyOptions } from './verify.js';

/** The error to throw for a mirror that fails verification: each command says what it leaves behind. */
export type VerifyFailure = (problems: Problem[]) => MirrorError;

export interface MirrorWriteOptions {
  /** Start from a hard-linked copy of the current mirror (publish, unbundle) rather than from nothing (build). */
  seed?: boolean;
  /**
   * With `seed`: after the swap, a detached process links the next writer's
   * copy ahead of time (the default). False for a folder deleted right after:
   * that process would still be adding files to it.
   */
  spare?: boolean;
  /** Write nothing: stage into a recorder of changed files, and neither verify nor commit. */
  dryRun?: boolean;
  /** What to check of the staged mirror (default everything); read once it is written, since publish checks only what it rewrote. */
  verify?: () => VerifyOptions;
  failure: VerifyFailure;
}

export interface MirrorWrite {
  /**
   * Writes the new mirror with `write`, verifies it and swaps it in, returning
   * what `write` returned. Call it once, or not at all when there is nothing to write.
   */
  stage<R>(write: (staging: Staging & { changed?: string[] }) => Promise<R>): Promise<R>;
}

/** Runs `fn` under the mirror's lock, after recovery; `fn` writes through `tx.stage`. */
export function withMirrorWrite<T>(outDir: string, options: MirrorWriteOptions, fn: (tx: MirrorWrite) => Promise<T>): Promise<T> {
  return withRecoveredMirror(outDir, () => fn({ stage: (write) => stageAndCommit(outDir, options, write) }));
}

async function stageAndCommit<R>(outDir: string, options: MirrorWriteOptions, write: (staging: Staging & { changed?: string[] }) => Promise<R>): Promise<R> {
  const staging = options.dryRun ? dryRunStaging(outDir) : await createStaging(outDir, { seed: options.seed === true, spare: options.spare !== false });
  try {
    const result = await write(staging);
    if (options.dryRun) return result;
    await verifyOrThrow(staging.root, options.verify?.() ?? {}, options.failure);
    await staging.commit();
    return result;
  } catch (error) {
    await staging.discard();
    throw error;
  }
}

export interface MirrorRead {
  /** Verifies the live mirror, throwing `failure` when it has problems. */
  verify(options: VerifyOptions, failure: VerifyFailure): Promise<void>;
}

/** Runs `fn` under the mirror's lock, after recovery, so no writer swaps the mirror while it is read. */
export function withMirrorRead<T>(dir: string, fn: (mirror: MirrorRead) => Promise<T>): Promise<T> {
  return withRecoveredMirror(dir, () => fn({ verify: (options, failure) => verifyOrThrow(dir, options, failure) }));
}

function withRecoveredMirror<T>(outDir: string, fn: () => Promise<T>): Promise<T> {
  return withLock(outDir, async () => {
    await recoverInterruptedSwap(outDir);
    return fn();
  });
}

async function verifyOrThrow(dir: string, options: VerifyOptions, failure: VerifyFailure): Promise<void> {
  const problems = await verifyMirror(dir, options);
  if (problems.length > 0) throw failure(problems);
}

/** Problems one a line, as every verification failure lists them; `limit` keeps a long list readable. */
export function problemLines(problems: Problem[], limit = Infinity): string {
  return problems.slice(0, limit).map((p) => `${p.path}: ${p.message}`).join('\n');
}
