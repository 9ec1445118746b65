// Every command names the mirror it reads or writes the same way: --mirror
// DIR, or --mirror s3://BUCKET/PREFIX where a command takes a bucket. The
// spellings commands had before (--out, --dir, a positional DIR) still work,
// with a one-line note on stderr, so scripts keep running while they move.

import { isBucketUrl } from '../bucket/location.js';
import type { ResolvedConfig } from '../config/index.js';
import type { MirrorStore } from '../store/index.js';
import { stringFlag, usageError, type Values } from './args.js';
import { bucketLocation, refuseBucketFlags } from './bucket-flags.js';

export const MIRROR_OPTION = { mirror: { type: 'string' } } as const;

/** The mirror given with --mirror, or with the flag the command took before (`--out`, `--dir`), which gets a note. */
export function mirrorFlag(values: Values, command: string, old: 'out' | 'dir'): string | undefined {
  const mirror = stringFlag(values, 'mirror');
  const before = stringFlag(values, old);
  if (before === undefined) return mirror;
  if (mirror !== undefined) throw usageError(command, `--mirror and --${old} both name the mirror: give --mirror only.`);
  note(`modmirror ${command} --${old} is now --mirror; --${old} still works.`);
  return before;
}

/** The mirror given with --mirror, or as the positional argument the command took before (verify DIR, push DIR URL), which gets a note. */
export function mirrorArgument(values: Values, command: string, argument: string | undefined, was: string, now: string): string | undefined {
  const mirror = stringFlag(values, 'mirror');
  if (argument === undefined) return mirror;
  if (mirror !== undefined) throw usageError(command, `--mirror and the argument "${argument}" both name the mirror: give --mirror only.`);
  note(`${was} is now ${now}; the old form still works.`);
  return argument;
}

/**
 * A command that needs a built mirror, given one that is not there: a path
 * that does not exist, as every command reports it (exit 2), before any work.
 */
export async function requireMirror(dir: string, command: string): Promise<void> {
  // Loaded here, not with the command table (cli.ts imports MIRROR_OPTION from this file).
  const { requireMirrorAt } = await import('../mirror/home.js');
  await requireMirrorAt(dir, command);
}

/**
 * The store of the mirror a command names (`--mirror`, or its older spelling, as `target`): a bucket
 * for `s3://BUCKET/PREFIX`, with the bucket flags; else the folder, the config's `out` by default.
 * `resolve` reads the config, given the folder named (undefined for a bucket).
 */
export async function openMirror(
  values: Values,
  command: string,
  target: string | undefined,
  resolve: (out: string | undefined) => ResolvedConfig,
): Promise<{ store: MirrorStore; config: ResolvedConfig }> {
  const { openStore } = await import('../store/index.js');
  const bucket = isBucketUrl(target) ? bucketLocation(target, values, '--mirror') : undefined;
  if (bucket === undefined) refuseBucketFlags(values, `${command} --mirror`);
  const config = resolve(bucket === undefined ? target : undefined);
  const store = await openStore(bucket !== undefined ? { bucket } : { dir: config.outDir }, { command, imageHosts: config.imageHosts });
  return { store, config };
}

function note(text: string): void {
  console.error(`note: ${text}`);
}
