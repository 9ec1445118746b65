// The CLI finds the command, parses its arguments with the command's own
// declaration (commands/options/), runs it and turns what it throws into an
// error report and an exit code. Each command's module is loaded on demand, so
// `modmirror --version` stays fast in pipelines.

import type { Command } from './commands/args.js';
import { commandHelp } from './commands/help.js';
import { COMMANDS } from './commands/table.js';
import { exitCodeFor, MirrorError } from './errors.js';
import { VERSION } from './version.js';

/** Help pads command names to the longest, so the summaries line up whatever commands are added. */
const COMMAND_WIDTH = Math.max(...Object.keys(COMMANDS).map((name) => name.length));

const HELP = `modmirror ${VERSION}: Terraform/OpenTofu modules -> a static module registry

Usage: modmirror <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(COMMAND_WIDTH)} ${c.summary}`)
  .join('\n')}

Options:
  --help        show help (also: modmirror <command> --help)
  --version     print the version
  --debug       print stack traces on errors

Every command names its mirror with --mirror DIR (or s3://BUCKET/PREFIX where it takes a bucket); the
spellings before it (--out, --dir, a DIR argument) still work, with a note.

Exit codes: 0 ok, 1 failure, 2 usage error (a path given, or the default, that is not there among them).`;

export async function main(argv: string[]): Promise<number> {
  const debug = argv.includes('--debug');
  const args = argv.filter((a) => a !== '--debug');
  const [name, ...rest] = args;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    console.log(HELP);
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-v') {
    console.log(VERSION);
    return 0;
  }
  const command = COMMANDS[name];
  try {
    if (!command) {
      const near = closest(name, Object.keys(COMMANDS));
      throw new MirrorError('USAGE', `Unknown command "${name}".${near ? ` Did you mean "${near}"?` : ''}`, {
        hint: 'Run modmirror --help for the list of commands.',
      });
    }
    if (rest.includes('--help') || rest.includes('-h')) {
      console.log(commandHelp(command));
      return 0;
    }
    let parsed: ReturnType<Command['parse']>;
    try {
      parsed = command.parse(rest);
    } catch (error) {
      const unknownOption = (error as NodeJS.ErrnoException).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION';
      const hint = unknownOption ? `modmirror ${name} --help lists its options.` : `Usage: ${command.usage}`;
      throw new MirrorError('USAGE', argumentProblem(error as NodeJS.ErrnoException, Object.keys(command.options)), { hint });
    }
    checkPositionals(name, command, parsed.positionals);
    return await parsed.run();
  } catch (error) {
    reportError(error, debug);
    return exitCodeFor(error);
  }
}

/** Node's parser explains an unknown option in its own terms; say which option, and the one that was probably meant. */
function argumentProblem(error: NodeJS.ErrnoException, options: string[]): string {
  const unknown = error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /'(-{1,2}[^']*)'/.exec(error.message)?.[1] : undefined;
  if (unknown === undefined) return error.message;
  const near = closest(unknown.replace(/^-+/, '').split('=')[0]!, options);
  return `Unknown option ${unknown}.${near ? ` Did you mean --${near}?` : ''}`;
}

/** The candidate within two edits of `word` (or that it begins), if one is clearly meant. */
function closest(word: string, candidates: string[]): string | undefined {
  const scored = candidates.map((c) => ({ c, d: c.startsWith(word) && word.length >= 3 ? 0 : editDistance(word, c) })).sort((a, b) => a.d - b.d);
  return scored[0] && scored[0].d <= Math.min(2, Math.floor(word.length / 2)) ? scored[0].c : undefined;
}

/** Edits (insert, delete, substitute, swap two neighbours: "claen" is one slip from "clean") from `a` to `b`. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/** The command table decides how many positional arguments a command takes, for every command alike. */
function checkPositionals(name: string, command: Command, positionals: string[]): void {
  const { names, required, missing } = command.positionals ?? { names: [], required: 0 };
  if (positionals.length < required) {
    throw new MirrorError('USAGE', missing ?? `Missing ${names.slice(positionals.length, required).join(' ')}: modmirror ${name} ${names.join(' ')}.`, {
      hint: `Usage: ${command.usage}`,
    });
  }
  if (positionals.length > names.length) {
    throw new MirrorError('USAGE', `Unexpected argument "${positionals[names.length]}".`, { hint: `Usage: ${command.usage}` });
  }
}

export function reportError(error: unknown, debug: boolean): void {
  if (error instanceof MirrorError) {
    console.error(`error: ${error.message}`);
    if (error.hint) console.error(`hint: ${error.hint}`);
    if (debug && error.cause) console.error(error.cause);
    if (debug) console.error(error.stack);
  } else {
    console.error(`error: ${error instanceof Error ? (debug ? error.stack : error.message) : String(error)}`);
    if (!debug) console.error('hint: run again with --debug for the stack trace; this is a bug in modmirror, please report it.');
  }
}
