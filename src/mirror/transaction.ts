// The one way to change a mirror, and its one commit. Under the mirror's lock
// (lock.ts), first repair what a writer that died left (home.ts, delta.ts),
// then write a new generation (staging.ts) or gather a change to the live
// one (delta.ts), hold its manifest against the live one (ledger.ts), check
// it (the writer's verification) and make it live: a generation swapped in
// whole, a change applied in place under its journal. On any failure the
// new files go and the live mirror stays as it was.
// Readers that must see one mirror throughout (bundle) hold the same lock.
//
// The check is the writer's to pass (verify/ reads the documents emit/
// writes, which import this folder): the mirror's home knows its files, not
// what a correct document says.

import type { PrivateSigningKey } from '../openpgp/keys.js';
import { signTruth } from './signed.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { MirrorError } from '../errors.js';
import { createDeltaStaging, replayJournals } from './delta.js';
import { homeOf, recoverInterruptedSwap } from './home.js';
import { ledgerRefusal, ledgerViolations, type LedgerPermissions } from './ledger.js';
import { withLock } from './lock.js';
import { frozenManifest, moduleOfStateFile, moduleStatesIn, readManifest, readManifestAt, stateNamespacesIn, type Manifest } from './manifest.js';
import { createStaging, dryRunStaging, type Staging } from './staging.js';
import { MANIFEST_FILE } from '../protocol/paths.js';

export interface Problem {
  path: string;
  message: string;
}

/**
 * A mirror to check: where each of its files is (`at`), and its folder when
 * it is one whole folder (not a change gathered beside the live mirror).
 */
export interface MirrorView {
  at: (rel: string) => string;
  root?: string;
  /** The modules whose states to read (format 3): every one of a whole mirror; of a change, those it read or wrote. */
  modules: () => string[];
  /** Every module a namespace has a state for, sorted. */
  modulesIn: (namespace: string) => string[];
  /** Every namespace with a state, sorted. */
  namespaces: () => string[];
}

/** Checks a mirror on disk (a new generation or a change before it is made live, or the live mirror). */
export type MirrorCheck = (mirror: MirrorView) => Promise<Problem[]>;

/** The error to throw for a mirror that fails its check: each command says what it leaves behind. */
export type VerifyFailure = (problems: Problem[]) => MirrorError;

export interface MirrorWriteOptions {
  /**
   * How the new mirror is written: a new generation from nothing (build, the
   * default), a new generation from a hard-linked copy of the live one
   * (unbundle), or a change to the live one applied in place (publish,
   * deprecate, remove: its cost follows the change, not the mirror).
   */
  start?: 'empty' | 'copy' | 'in-place';
  /** Write nothing: stage into a recorder of changed files, and neither check nor commit. */
  dryRun?: boolean;
  /** The changes to published versions this write may make, each recorded in its manifest's ledger; default none. */
  allow?: LedgerPermissions;
  /** Checks the new generation; read once it is written, since publish checks only what it rewrote. */
  check: MirrorCheck;
  failure: VerifyFailure;
  /** Signs the truth files the write changes (signed.ts); without it, none is signed, and a change to a signed mirror's truth is refused. */
  signer?: PrivateSigningKey;
}

export interface MirrorWrite {
  /** The path of the live mirror, through any link of the user's own. */
  readonly outDir: string;
  /**
   * The live mirror's manifest as this write found it under the lock (undefined when there is none yet),
   * with the states of `modules` (default: every module): the part of the mirror the write reads. Read
   * once, frozen; the ledger holds the new manifest against the live one for those modules and any other
   * whose state the write changes.
   */
  readonly live: (modules?: string[]) => Manifest | undefined;
  /**
   * Writes the new mirror with `write`, checks it and swaps it in, returning
   * what `write` returned. Call it once, or not at all when there is nothing to write.
   */
  stage<R>(write: (staging: Staging & { changed?: string[] }) => Promise<R>): Promise<R>;
}

/** Runs `fn` under the mirror's lock, after recovery; `fn` writes through `tx.stage`. */
export function withMirrorWrite<T>(outDir: string, options: MirrorWriteOptions, fn: (tx: MirrorWrite) => Promise<T>): Promise<T> {
  const home = homeOf(outDir);
  return withRecoveredMirror(home, () => {
    let found: { manifest: Manifest | undefined; part: string[] | undefined } | undefined;
    const live = (modules?: string[]) => (found ??= { manifest: frozenManifest(readManifest(home, modules)), part: modules }).manifest;
    return fn({ outDir: home, live, stage: (write) => stageAndCommit(home, options, () => found?.part, write) });
  });
}

async function stageAndCommit<R>(
  outDir: string,
  options: MirrorWriteOptions,
  part: () => string[] | undefined,
  write: (staging: Staging & { changed?: string[] }) => Promise<R>,
): Promise<R> {
  const inPlace = options.start === 'in-place' && existsSync(join(outDir, MANIFEST_FILE));
  // A dry run in place gathers the change as a real one would (its listings read the states it writes), then drops it.
  const staging = inPlace
    ? createDeltaStaging(outDir)
    : options.dryRun
      ? dryRunStaging(outDir)
      : await createStaging(outDir, { seed: options.start === 'copy' });
  try {
    const result = await write(staging);
    if (options.dryRun) {
      await staging.discard();
      return result;
    }
    // Signs what the write changed, or refuses a change to a signed mirror's truth without a key.
    await signTruth(outDir, staging, options.signer, inPlace ? 'change' : options.start === 'copy' ? 'copy' : 'whole');
    // A change in place is held against the live mirror for the modules it read and those it wrote; a whole new one, whole.
    // Read once the write is done: what it changed stays as it is from here on.
    let changedKeys: string[] | undefined;
    const changed = () => (changedKeys ??= (staging.changed ?? []).map(moduleOfStateFile).filter((key) => key !== undefined));
    const modules =
      staging.root !== undefined ? () => moduleStatesIn(staging.root!) : () => [...new Set([...(part() ?? moduleStatesIn(outDir)), ...changed()])].sort();
    const tree = staging.root ?? outDir;
    const view: MirrorView = {
      at: (rel) => staging.at(rel),
      ...(staging.root !== undefined ? { root: staging.root } : {}),
      modules,
      modulesIn: (namespace) => [...new Set([...moduleStatesIn(tree, namespace), ...changed().filter((k) => k.startsWith(`${namespace}/`))])].sort(),
      namespaces: () => [...new Set([...stateNamespacesIn(tree), ...changed().map((k) => k.slice(0, k.indexOf('/')))])].sort(),
    };
    const before = readManifest(outDir, staging.root !== undefined ? undefined : modules());
    const written = readManifestAt(view.at, view.modules) ?? { format: 1, generator: '', modules: {} };
    const violations = ledgerViolations(before, written, options.allow);
    if (violations.length > 0) throw ledgerRefusal(violations);
    await checkOrThrow(view, options.check, options.failure);
    await staging.commit();
    return result;
  } catch (error) {
    await staging.discard();
    throw error;
  }
}

export interface MirrorRead {
  /** The path of the live mirror, through any link of the user's own. */
  readonly dir: string;
  /** Checks the live mirror, throwing `failure` when it has problems. */
  check(check: MirrorCheck, failure: VerifyFailure): Promise<void>;
}

/** Runs `fn` under the mirror's lock, after recovery, so no writer swaps the mirror while it is read. */
export function withMirrorRead<T>(dir: string, fn: (mirror: MirrorRead) => Promise<T>): Promise<T> {
  const home = homeOf(dir);
  return withRecoveredMirror(home, () => fn({ dir: home, check: (check, failure) => checkOrThrow(treeView(home), check, failure) }));
}

function withRecoveredMirror<T>(outDir: string, fn: () => Promise<T>): Promise<T> {
  return withLock(outDir, async () => {
    await recoverInterruptedSwap(outDir, (deltas) => replayJournals(outDir, deltas));
    return fn();
  });
}

/** The mirror whose files are all in `root`. */
export function treeView(root: string): MirrorView {
  return {
    root,
    at: (rel) => join(root, rel),
    modules: () => moduleStatesIn(root),
    modulesIn: (namespace) => moduleStatesIn(root, namespace),
    namespaces: () => stateNamespacesIn(root),
  };
}

async function checkOrThrow(mirror: MirrorView, check: MirrorCheck, failure: VerifyFailure): Promise<void> {
  const problems = await check(mirror);
  if (problems.length > 0) throw failure(problems);
}

/** Problems one a line, as every verification failure lists them; `limit` keeps a long list readable. */
export function problemLines(problems: Problem[], limit = Infinity): string {
  return problems
    .slice(0, limit)
    .map((p) => `${p.path}: ${p.message}`)
    .join('\n');
}
