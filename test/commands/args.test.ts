// A command's flags are declared once: the values it receives are typed and
// parsed from that declaration, an undeclared flag is a usage error, and its
// --help lists every flag it declares (the real command table, so a flag
// added without a help line fails here).

import { describe, expect, expectTypeOf, it } from 'vitest';
import { command, listedFlags, type Flags, type FlagValues } from '../../src/commands/args.js';
import { COMMANDS } from '../../src/commands/table.js';
import { runCli } from '../helpers.js';

const OPTIONS = {
  mirror: { type: 'string', value: 'DIR', help: 'the mirror' },
  trust: { type: 'string', multiple: true, value: 'KEY', help: 'a trusted key (repeatable)' },
  json: { type: 'boolean', help: 'print JSON' },
  out: { type: 'string', olderSpellingOf: 'mirror' },
} as const satisfies Flags;

describe('a declaration', () => {
  it('types the values the command receives: a string, a list for a repeatable flag, a boolean, each undefined when not given', () => {
    expectTypeOf<FlagValues<typeof OPTIONS>>().toEqualTypeOf<{
      mirror?: string | undefined;
      trust?: string[] | undefined;
      json?: boolean | undefined;
      out?: string | undefined;
    }>();
    // A misspelt flag does not compile.
    // @ts-expect-error: no flag "mirorr" is declared
    expectTypeOf<FlagValues<typeof OPTIONS>['mirorr']>().toBeUndefined();
  });

  it('hands the command the values parsed with its own options, and its positional arguments', async () => {
    const received: [FlagValues<typeof OPTIONS>, string[]][] = [];
    const declared = command({
      summary: 'test',
      usage: 'test',
      options: OPTIONS,
      run: async (values, positionals) => {
        received.push([values, positionals]);
        return 0;
      },
    });
    await declared.parse(['--mirror', 'dist', 'extra', '--trust', 'a.asc', '--trust=b.asc', '--json']).run();
    await declared.parse(['--out', 'old']).run();
    expect(received.map(([values, positionals]) => [{ ...values }, positionals])).toEqual([
      [{ mirror: 'dist', trust: ['a.asc', 'b.asc'], json: true }, ['extra']],
      [{ out: 'old' }, []],
    ]);
    expect(() => declared.parse(['--mirorr', 'dist'])).toThrow(expect.objectContaining({ code: 'ERR_PARSE_ARGS_UNKNOWN_OPTION' }));
  });
});

describe('the command table', () => {
  it('refuses a flag a command does not declare as a usage error (exit 2) naming it, on every command', async () => {
    for (const name of Object.keys(COMMANDS)) {
      const r = await runCli([name, '--no-such-flag', 'x']);
      expect([r.code, r.stdout], name).toEqual([2, '']);
      expect(r.stderr, name).toBe(`error: Unknown option --no-such-flag.\nhint: modmirror ${name} --help lists its options.\n`);
    }
    // The flag meant is suggested when it is clear.
    expect((await runCli(['build', '--claen'])).stderr).toMatch(/^error: Unknown option --claen\. Did you mean --clean\?$/m);
  });

  it('lists every flag a command declares in its --help, each on a line of its own with its help, and no older spelling', async () => {
    for (const [name, declared] of Object.entries(COMMANDS)) {
      const help = await runCli([name, '--help']);
      expect(help.code, name).toBe(0);
      const listed = listedFlags(declared.options);
      expect(listed.length, name).toBeGreaterThan(0);
      for (const [flag, { value }] of listed) {
        const label = value === undefined ? `--${flag}` : `--${flag} ${value}`;
        expect(help.stdout, `${name} --${flag}`).toMatch(new RegExp(`^  ${escape(label)}  +\\S`, 'm'));
      }
      for (const [flag, spec] of Object.entries(declared.options)) {
        if (!('olderSpellingOf' in spec)) continue;
        expect(Object.keys(declared.options), `${name} --${flag}`).toContain(spec.olderSpellingOf);
        expect(help.stdout, `${name} --${flag}`).not.toMatch(new RegExp(`^ +--${flag}\\b`, 'm'));
      }
    }
  });

  it('wraps the help of each flag at 110 columns', async () => {
    for (const name of Object.keys(COMMANDS)) {
      const { stdout } = await runCli([name, '--help']);
      const flagLines = stdout.slice(stdout.indexOf('\n\n')).split('\n\n')[1]!.split('\n');
      for (const line of flagLines) expect(line.length, `${name}: ${line}`).toBeLessThanOrEqual(110);
    }
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
