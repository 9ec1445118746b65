// The documentation and the CLI say the same thing: every command and flag
// the CLI's help lists is documented in README.md or docs/, every flag a
// command line in README.md, CONTRIBUTING.md or docs/ uses exists in that
// command's help, and every relative link between those files (and
// bench/README.md) leads to a file and heading that exist.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { main } from '../src/cli.js';
import { ROOT } from './helpers.js';

/** The user documentation: where a command or flag counts as documented. */
const USER_DOCS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
/** Every file whose command lines must be right. */
const COMMAND_DOCS = [...USER_DOCS, 'CONTRIBUTING.md'];
/** Every file whose links must resolve. */
const LINKED_DOCS = [...COMMAND_DOCS, 'bench/README.md'];

const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

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

/** Each command of `modmirror --help` with the flags its own `--help` names. */
async function commands(): Promise<Map<string, Set<string>>> {
  const help = await printed(['--help']);
  const names = [...help.slice(help.indexOf('Commands:')).matchAll(/^ {2}([a-z][\w-]*) {1,}/gm)].map((m) => m[1]!);
  const flags = new Map<string, Set<string>>();
  for (const name of names) flags.set(name, new Set([...(await printed([name, '--help'])).matchAll(/--[a-z][\w-]*/g)].map((m) => m[0])));
  return flags;
}

describe('commands and flags', () => {
  it('documents every command and flag the help lists, each flag beside its command', async () => {
    const all = await commands();
    expect(all.size).toBeGreaterThan(10);
    const docs = USER_DOCS.map(read);
    const undocumented = [...all].flatMap(([name, flags]) => {
      // A flag counts where its command is named too: --out alone is in every guide.
      const withCommand = docs.filter((text) => text.includes(`modmirror ${name}`));
      return [
        ...(withCommand.length > 0 ? [] : [`modmirror ${name}`]),
        ...[...flags].filter((flag) => flag !== '--help' && !withCommand.some((text) => text.includes(flag))).map((flag) => `modmirror ${name} ${flag}`),
      ];
    });
    expect(undocumented).toEqual([]);
  });

  it('uses only flags that exist, on every command line of the docs', async () => {
    const all = await commands();
    const unknown: string[] = [];
    let lines = 0;
    for (const file of COMMAND_DOCS) {
      // A command continued with a trailing backslash is one command line.
      for (const line of read(file).replace(/\\\n/g, ' ').split('\n')) {
        // A command ends where the shell's next one starts (`&&`, `;`, `|`).
        for (const [, name, rest] of line.matchAll(/modmirror ([a-z][\w-]*)((?: +(?:[^\s|`&;]+))*)/g)) {
          const flags = all.get(name!);
          if (!flags) continue;
          lines++;
          for (const [flag] of rest!.matchAll(/--[a-z][\w-]*/g))
            if (!flags.has(flag) && flag !== '--help') unknown.push(`${file}: modmirror ${name} ${flag}: ${line.trim().slice(0, 80)}`);
        }
      }
    }
    expect(lines).toBeGreaterThan(50);
    expect(unknown).toEqual([]);
  });
});

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens; repeats get -1, -2. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, heading] of withoutCode(markdown).matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const slug = heading!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

/** The text outside fenced code blocks, whose brackets are code, not links (inline code is kept: headings hold it). */
function withoutCode(markdown: string): string {
  return markdown.replace(/^```[^\n]*\n[\s\S]*?^```[^\n]*$/gm, '');
}

describe('links between the docs', () => {
  it('resolve to files that exist, and to headings that exist in them', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const file of LINKED_DOCS) {
      const text = withoutCode(read(file)).replace(/`[^`\n]*`/g, (code) => code.replace(/[[\]()]/g, ' '));
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target!)) continue; // http:, https:, mailto:
        checked++;
        const [path, anchor] = target!.split('#') as [string, string | undefined];
        const linked = path === '' ? join(ROOT, file) : resolve(dirname(join(ROOT, file)), decodeURIComponent(path));
        if (!existsSync(linked)) {
          broken.push(`${file}: ${target} (no ${relative(ROOT, linked)})`);
          continue;
        }
        if (anchor !== undefined && !(linked.endsWith('.md') && anchorsOf(readFileSync(linked, 'utf8')).has(anchor))) {
          broken.push(`${file}: ${target} (no heading #${anchor} in ${relative(ROOT, linked)})`);
        }
      }
    }
    expect(checked).toBeGreaterThan(30);
    expect(broken).toEqual([]);
  });

  it('finds a broken link and a missing heading (the check itself works)', () => {
    expect([...anchorsOf('# What is in `dist/`\n## Keep the public addresses: the `host` override\n## Notes\n## Notes\n')]).toEqual([
      'what-is-in-dist',
      'keep-the-public-addresses-the-host-override',
      'notes',
      'notes-1',
    ]);
    expect(withoutCode('a\n```sh\n[x](nowhere.md)\n```\nb\n')).not.toContain('nowhere');
  });
});
