// What the CLI hands a command: its parsed flags and its positional
// arguments, already checked against the command table in cli.ts.

import { MirrorError } from '../errors.js';

export type Values = Record<string, string | boolean | undefined>;

/** A string flag, or undefined when it was not given. */
export function stringFlag(values: Values, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
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
