// Nesting past MAX_NESTING is a syntax error of that file, with its line and
// column, in every reader: never a stack overflow (issue 26).

import { describe, expect, it, vi } from 'vitest';
import { declarationsFromJson } from '../../src/extract/declarations.js';
import { HclSyntaxError, MAX_NESTING, parseHcl } from '../../src/extract/hcl.js';
import { parseHcl1 } from '../../src/extract/hcl1.js';
import { extractDocumentation } from '../../src/extract/index.js';

// A reader that still overflows the stack, for the last line of defence in extract/index.ts.
vi.mock('../../src/extract/declarations.js', async (original) => {
  const actual = await original<typeof import('../../src/extract/declarations.js')>();
  return {
    ...actual,
    declarationsFromHcl: (source: string) => {
      if (source.includes('# overflow')) throw new RangeError('Maximum call stack size exceeded');
      return actual.declarationsFromHcl(source);
    },
  };
});

function errorOf(read: () => unknown): HclSyntaxError {
  try {
    read();
  } catch (error) {
    if (error instanceof HclSyntaxError) return error;
    throw error;
  }
  throw new Error('expected a syntax error');
}

const nested = (open: string, inner: string, close: string, n: number) => `${open.repeat(n)}${inner}${close.repeat(n)}`;
const file = (text: string) => ({ path: 'main.tf', mode: 0o644, data: Buffer.from(text) });

describe('HCL native syntax', () => {
  it(`reads ${MAX_NESTING} levels and refuses the next one where it opens`, () => {
    expect(() => parseHcl(`x = ${nested('[', '', ']', MAX_NESTING)}\n`)).not.toThrow();
    const error = errorOf(() => parseHcl(`x = ${nested('[', '', ']', MAX_NESTING + 1)}\n`));
    expect(error.message).toMatch(/nested more than 128 levels deep/i);
    expect([error.line, error.column]).toEqual([1, 5 + MAX_NESTING]);
  });

  it.each([
    ['a 1000-deep tuple default', `variable "d" {\n  default = ${nested('[', '', ']', 1000)}\n}\n`, 2],
    ['1000 parentheses', `locals {\n  x = ${nested('(', '1', ')', 1000)}\n}\n`, 2],
    ['1000 objects', `locals {\n  x = ${nested('{a = ', '1', '}', 1000)}\n}\n`, 2],
    ['1000 unary operators', `locals {\n  x = ${'!'.repeat(1000)}true\n}\n`, 2],
    ['1000 function calls', `locals {\n  x = ${nested('f(', '1', ')', 1000)}\n}\n`, 2],
    ['1000 index brackets', `locals {\n  x = ${nested('a[', '1', ']', 1000)}\n}\n`, 2],
    ['1000 conditionals', `locals {\n  x = ${'true ? 1 : '.repeat(1000)}2\n}\n`, 2],
    ['1000 template interpolations', `locals {\n  x = ${nested('"${', '1', '}"', 1000)}\n}\n`, 2],
    ['1000 nested blocks', `${'a {\n'.repeat(1000)}${'}\n'.repeat(1000)}`, MAX_NESTING + 1],
    ['100,000 brackets', `x = ${nested('[', '', ']', 100_000)}\n`, 1],
  ])('%s: a syntax error on its line, not a stack overflow', (_, source, line) => {
    const error = errorOf(() => parseHcl(source));
    expect(error.message).toMatch(/nested more than 128 levels deep/i);
    expect(error.line).toBe(line);
  });

  it('counts a heredoc interpolation inside another as one level more', () => {
    let text = '1';
    for (let i = 0; i < 1000; i++) text = `<<E${i}\n\${${text}}\nE${i}\n`;
    const error = errorOf(() => parseHcl(`x = ${text}`));
    expect(error.message).toMatch(/nested more than 128 levels deep/i);
    expect(error.line).toBe(MAX_NESTING + 1);
  });
});

describe('HCL1', () => {
  it.each([
    ['lists', (n: number) => `default = ${nested('[', '', ']', n)}\n`],
    ['objects', (n: number) => `variable "d" ${nested('{ a = ', '1', '}', n)}\n`],
  ])(`reads ${MAX_NESTING} nested %s; past that, a syntax error where the level opens`, (_, source) => {
    expect(() => parseHcl1(source(MAX_NESTING))).not.toThrow();
    const error = errorOf(() => parseHcl1(source(1000)));
    expect(error.message).toMatch(/nested more than 128 levels deep/i);
    expect(error.line).toBe(1);
    expect(error.column).toBeGreaterThan(MAX_NESTING);
  });
});

describe('.tf.json', () => {
  it('refuses a default nested past the bound at the bracket that opens it, not counting brackets in strings', () => {
    const source = `{\n  "variable": {\n    "d": {\n      "description": "\\"[[[{{",\n      "default": ${nested('[', '', ']', 100_000)}\n    }\n  }\n}\n`;
    const error = errorOf(() => declarationsFromJson(source));
    expect(error.message).toMatch(/nested more than 128 levels deep/i);
    // Three objects open around the default, so its 126th bracket is the 129th level.
    expect([error.line, error.column]).toEqual([5, 18 + MAX_NESTING - 3]);
  });
});

describe('extraction', () => {
  it('makes a deep file a problem of its own and reads the others', () => {
    const { content, problems } = extractDocumentation([
      file(`variable "d" {\n  default = ${nested('[', '', ']', 1000)}\n}\n`),
      { path: 'outputs.tf', mode: 0o644, data: Buffer.from('output "o" {\n  value = 1\n}\n') },
    ]);
    expect(problems).toEqual([expect.stringMatching(/^main\.tf:2:\d+: Nested more than 128 levels deep/)]);
    expect(content.root.outputs.map((o) => o.name)).toEqual(['o']);
  });

  it('turns a stack overflow in a reader into a problem of that file', () => {
    // HCL1, tried on a folder HCL2 cannot read, cannot read it either (a reference), so HCL2's problem stands.
    const { problems } = extractDocumentation([file('# overflow\nvariable "a" {\n  default = var.b\n}\n')]);
    expect(problems).toEqual(['main.tf:1:1: Could not be read: Maximum call stack size exceeded']);
  });
});
