// Every command names the mirror it reads or writes the same way: --mirror
// DIR, or --mirror s3://BUCKET/PREFIX where a command takes a bucket. The
// spellings commands had before (--out, --dir, a positional DIR) still work,
// with a one-line note on stderr, so scripts keep running while they move.

import { isBucketUrl } from '../bucket/location.js';
import type { ResolvedConfig } from '../config/index.js';
import type { MirrorStore } from '../store/index.js';
import { usageError } from './args.js';
import { bucketLocation, refuseBucketFlags, type BucketValues } from './bucket-flags.js';

/** The values of a command whose mirror is named by --mirror. */
type MirrorValues = { mirror?: string | undefined };

/** The mirror given with --mirror, or with the flag the command took before (`--out`, `--dir`), which gets a note. */
export function mirrorFlag<K extends 'out' | 'dir'>(values: MirrorValues & { [k in K]?: string | undefined }, command: string, old: K): string | undefined {
  const mirror = values.mirror;
  const before = values[old];
  if (before === undefined) return mirror;
  if (mirror !== undefined) throw usageError(command, `--mirror and --${old} both name the mirror: give --mirror only.`);
  note(`modmirror ${command} --${old} is now --mirror; --${old} still works.`);
  return before;
}

/** The mirror given with --mirror, or as the positional argument the command took before (verify DIR, push DIR URL), which gets a note. */
export function mirrorArgument(values: MirrorValues, command: string, argument: string | undefined, was: string, now: string): string | undefined {
  const mirror = values.mirror;
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
  // Loaded here, when a command needs it: the mirror's code is not part of every command's start.
  const { requireMirrorAt } = await import('../mirror/home.js');
  await requireMirrorAt(dir, command);
}

/**
 * The store of the mirror a command names (`--mirror`, or its older spelling, as `target`): a bucket
 * for `s3://BUCKET/PREFIX`, with the bucket flags; else the folder, the config's `out` by default.
 * `resolve` reads the config, given the folder named (undefined for a bucket).
 */
export async function openMirror(
  values: MirrorValues & BucketValues,
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
