// Every command names the mirror it reads or writes the same way: --mirror
// DIR, or --mirror s3://BUCKET/PREFIX where a command takes a bucket. The
// spellings commands had before (--out, --dir, a positional DIR) still work,
// with a one-line note on stderr, so scripts keep running while they move.

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

function note(text: string): void {
  console.error(`note: ${text}`);
}
