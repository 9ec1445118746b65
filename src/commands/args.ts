// A command's flags are declared once, beside the command, as the options
// object node:util's parseArgs takes, each flag with its help: cli.ts parses
// with it, --help is written from it, and the command receives its values
// typed from it (FlagValues), so a misspelt flag is a compile error.

import { parseArgs } from 'node:util';
import { MirrorError } from '../errors.js';

interface FlagType {
  type: 'string' | 'boolean';
  /** Repeatable: the values come as a list, in the order given. */
  multiple?: boolean;
}

/** A flag --help lists: `--NAME VALUE  help`. */
interface ListedFlag extends FlagType {
  /** What the value stands for in help (`--mirror DIR`); none for a boolean. */
  value?: string;
  /** What the flag does, wrapped to the help's width (a `\n` starts a new line). */
  help: string;
  /** A heading --help prints above this flag, for the flags after it. */
  section?: string;
}

/** A spelling a command took before, still parsed (the command says so with a note) but no longer listed. */
interface OlderSpelling extends FlagType {
  olderSpellingOf: string;
}

export type Flag = ListedFlag | OlderSpelling;

/** A command's options: what parseArgs takes, with the help of each. */
export type Flags = Readonly<Record<string, Flag>>;

/** The values parseArgs gives for `options`, as node:util types them: a string, a boolean, or a list for `multiple`; undefined when not given. */
export type FlagValues<O extends Flags> = ReturnType<typeof parseArgs<{ args: string[]; options: O; strict: true; allowPositionals: true }>>['values'];

/** Names of the positional arguments; the first `required` of them must be given, no more than all; `missing` says what to give. */
export interface Positionals {
  names: string[];
  required: number;
  missing?: string;
}

/** What --help and the dispatch need of a command, whatever its flags. */
export interface Command {
  summary: string;
  /** The synopsis, after `Usage: `, as written (continuation lines included). */
  usage: string;
  /** The positional arguments --help describes, before the flags: [name, help]. */
  arguments?: readonly (readonly [string, string])[];
  options: Flags;
  /** Paragraphs --help prints after the flags, as written. */
  notes?: string;
  positionals?: Positionals;
  /** The arguments parsed with the command's options (strict: an unknown flag throws parseArgs' error), ready to run. */
  parse(args: string[]): { positionals: string[]; run: () => Promise<number> };
}

export interface CommandSpec<O extends Flags> extends Omit<Command, 'options' | 'parse'> {
  options: O;
  /** Loads the command's module (on demand, so `modmirror --version` stays fast) and runs it. */
  run: (values: FlagValues<O>, positionals: string[]) => Promise<number>;
}

/** A command from its declaration: its run receives the values parsed with its own options, typed from them. */
export function command<const O extends Flags>(spec: CommandSpec<O>): Command {
  const { run, ...rest } = spec;
  return {
    ...rest,
    parse(args) {
      const { values, positionals } = parseArgs({ args, options: spec.options, strict: true, allowPositionals: true });
      return { positionals, run: () => run(values, positionals) };
    },
  };
}

/** The flags --help lists: every declared flag but the older spellings. */
export function listedFlags(options: Flags): [string, ListedFlag][] {
  return Object.entries(options).filter((entry): entry is [string, ListedFlag] => !('olderSpellingOf' in entry[1]));
}

/** A usage error (exit code 2) that points at the command's help. */
export function usageError(command: string, message: string): MirrorError {
  return new MirrorError('USAGE', message, { hint: `Run modmirror ${command} --help.` });
}

/** `1 module`, `2 modules`: a count with its noun, as a person would write it. */
export function plural(count: number, noun: string, nouns = `${noun}s`): string {
  return `${count} ${count === 1 ? noun : nouns}`;
}

/**
 * A command's --json answer, as every command prints it: one JSON object on
 * one line of stdout (a script reads it whole), `seconds` to the millisecond.
 * Human lines, progress and warnings are not printed beside it.
 */
export function printJson(result: object): void {
  const { seconds } = result as { seconds?: unknown };
  console.log(JSON.stringify(typeof seconds === 'number' ? { ...result, seconds: Number(seconds.toFixed(3)) } : result));
}
