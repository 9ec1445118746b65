// The README and the CLI say the same thing: every command and flag the CLI's
// help lists is documented, and every flag a README command line uses exists
// in that command's help.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it, vi } from 'vitest';
import { main } from '../src/cli.js';
import { ROOT } from './helpers.js';

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** What `modmirror ARGS` prints, run in-process. */
async function printed(args: string[]): Promise<string> {
  const lines: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((line: unknown) => void lines.push(String(line)));
  try {
    await main(args);
  } finally {
    log.mockRestore();
  }
  return lines.join('\n');
}

async function commands(): Promise<Map<string, Set<string>>> {
  const help = await printed(['--help']);
  const names = [...help.slice(help.indexOf('Commands:')).matchAll(/^ {2}([a-z][\w-]*) {2,}/gm)].map((m) => m[1]!);
  const flags = new Map<string, Set<string>>();
  for (const name of names) flags.set(name, new Set([...(await printed([name, '--help'])).matchAll(/--[a-z][\w-]*/g)].map((m) => m[0])));
  return flags;
}

it('documents every command and flag the help lists', async () => {
  const all = await commands();
  expect(all.size).toBeGreaterThan(10);
  const undocumented = [...all].flatMap(([name, flags]) => [
    ...(README.includes(`modmirror ${name}`) ? [] : [`modmirror ${name}`]),
    ...[...flags].filter((flag) => flag !== '--help' && !README.includes(flag)).map((flag) => `modmirror ${name} ${flag}`),
  ]);
  expect(undocumented).toEqual([]);
});

it('uses only flags that exist, on every README command line', async () => {
  const all = await commands();
  const unknown: string[] = [];
  for (const line of README.split('\n')) {
    for (const [, name, rest] of line.matchAll(/modmirror ([a-z][\w-]*)((?: +(?:[^\s|`]+))*)/g)) {
      const flags = all.get(name!);
      if (!flags) continue;
      for (const [flag] of rest!.matchAll(/--[a-z][\w-]*/g)) if (!flags.has(flag) && flag !== '--help') unknown.push(`modmirror ${name} ${flag}: ${line.trim().slice(0, 80)}`);
    }
  }
  expect(unknown).toEqual([]);
});
