// Every command names the mirror it reads or writes the same way: --mirror
// DIR, or --mirror s3://BUCKET/PREFIX where a command takes a bucket. The
// spellings commands had before (--out, --dir, a positional DIR) still work,
// with a one-line note on stderr, so scripts keep running while they move.

import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { MirrorError } from '../errors.js';
import { MANIFEST_FILE } from '../protocol/paths.js';
import { stringFlag, usageError, type Values } from './args.js';

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
 * A mirror a writer that died mid-swap set aside is put back first, as every
 * reader does.
 */
export async function requireMirror(dir: string, command: string): Promise<void> {
  // Loaded here, not with the command table (cli.ts imports MIRROR_OPTION from this file).
  const { homeOf, putBackSetAside } = await import('../mirror/home.js');
  await putBackSetAside(homeOf(dir));
  if (existsSync(join(dir, MANIFEST_FILE))) return;
  const shown = relative(process.cwd(), dir) || '.';
  throw new MirrorError(
    'PATH_NOT_FOUND',
    existsSync(dir) ? `${shown} holds no built mirror (no ${MANIFEST_FILE}).` : `There is no built mirror at ${shown}: the folder does not exist.`,
    {
      hint: `Did you build the mirror? Run modmirror build, or name the folder it wrote: modmirror ${command} --mirror DIR (default: the config's out, else dist).`,
    },
  );
}

function note(text: string): void {
  console.error(`note: ${text}`);
}
