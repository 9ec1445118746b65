// The HCL1 fallback: the parser on its own, the legacy loader's decoding, and
// when a folder is read with it. Expected values follow terraform-config-inspect
// (tfconfig/load_legacy.go over hashicorp/hcl v1 as its go.mod pins it).

import { describe, expect, it } from 'vitest';
import { HclSyntaxError } from '../../src/extract/hcl.js';
import { parseHcl1 } from '../../src/extract/hcl1.js';
import { extractDocumentation } from '../../src/extract/index.js';
import { declarationsFromHcl1 } from '../../src/extract/legacy.js';

const defaultOf = (body: string) => declarationsFromHcl1(`variable "x" {\n  default = ${body}\n}\n`).variables[0]!.default?.value;

function errorOf(source: string): HclSyntaxError {
  try {
    declarationsFromHcl1(source);
  } catch (error) {
    if (error instanceof HclSyntaxError) return error;
    throw error;
  }
  throw new Error('expected an error');
}

const folder = (files: Record<string, string>) =>
  extractDocumentation(Object.entries(files).map(([path, text]) => ({ path, mode: 0o644, data: Buffer.from(text) })));

describe('parseHcl1', () => {
  it('reads unquoted dotted keys, items without newlines and all three comment forms', () => {
    const items = parseHcl1('# c\nlocals { m = { c4.2xlarge = 58 } } // c\n/* c */ a = 1 b = "x"');
    expect(items.map((i) => i.keys.map((k) => k.text).join(' '))).toEqual(['locals', 'a', 'b']);
    const locals = items[0]!.value;
    expect(locals.kind === 'object' && locals.items[0]!.value.kind === 'object' && locals.items[0]!.value.items[0]!.keys[0]!.text).toBe('c4.2xlarge');
  });

  it('fails where HCL1 fails, with line and column', () => {
    expect(errorOf('a = b\n')).toMatchObject({ line: 1, column: 5, message: expect.stringContaining('Unknown token: IDENT') });
    expect(errorOf('x {\n  y = [1 2]\n}\n')).toMatchObject({ line: 2, column: 10 });
    expect(errorOf('s = "no end\n')).toMatchObject({ line: 1, column: 5, message: 'literal not terminated' });
    expect(errorOf('h = <<EOF\nnever closed\n')).toMatchObject({ message: 'heredoc not terminated' });
    expect(errorOf('n = 08\n')).toMatchObject({ message: 'illegal octal number' });
  });

  it('stops quietly at `KEY =` at the end of the file, as HCL1 does', () => {
    expect(parseHcl1('a = 1\nb =').map((i) => i.keys[0]!.text)).toEqual(['a']);
  });
});

describe('legacy decoding', () => {
  it('decodes literals as Go does: octal and hex integers, floats, raw ${} text', () => {
    expect(defaultOf('0x1F')).toBe(31);
    expect(defaultOf('017')).toBe(15);
    expect(defaultOf('-3')).toBe(-3);
    expect(defaultOf('1e3')).toBe(1000);
    expect(defaultOf('"${var.a}-\\"q\\"-${f("a", "{b}")}"')).toBe('${var.a}-"q"-${f("a", "{b}")}');
    // HCL1 counts braces inside ${} without regard to quotes: this one ends early.
    expect(errorOf('x = "${f("}")}"\n')).toMatchObject({ line: 1, column: 13, message: 'illegal char' });
  });

  it('merges a map default, but keeps a nested object as a list of one map', () => {
    expect(defaultOf('{ a = 1, b = { c = "d" } }')).toEqual({ a: 1, b: [{ c: 'd' }] });
    expect(defaultOf('{}')).toEqual({});
    expect(defaultOf('[{ a = 1 }, { b = [2] }]')).toEqual([{ a: 1 }, { b: [2] }]);
  });

  it('reads heredocs with HCL1 arithmetic', () => {
    expect(defaultOf('<<EOF\nline\n  EOF\n')).toBe('line\n  ');
    expect(defaultOf('<<-EOF\n    a\n      b\n    EOF\n')).toBe('a\n  b\n');
  });

  it('takes a variable type as its string and matches field names ignoring case', () => {
    const [v] = declarationsFromHcl1('variable "l" {\n  Type = "list"\n  DESCRIPTION = "d"\n}\n').variables;
    expect(v).toEqual({ name: 'l', type: 'list', description: 'd' });
  });

  it('rejects what the legacy loader rejects', () => {
    expect(errorOf('terraform {\n  required_providers { aws = "1" }\n}\n').message).toContain('required_providers must not exist');
    expect(errorOf('variable "a" "b" {}\n').message).toContain('no label');
    expect(errorOf('output "o" {\n  sensitive = "true"\n}\n').message).toContain('bool');
  });
});

describe('a folder HCL2 cannot read', () => {
  it('is read whole with HCL1 rules, giving no problems', () => {
    const { content, problems } = folder({ 'main.tf': 'variable "ok" { type = "string" }\n', 'locals.tf': 'locals {\n  m = { c4.2xlarge = 58 }\n}\n' });
    expect(problems).toEqual([]);
    expect(content.root.inputs.map((i) => [i.name, i.type, i.required])).toEqual([['ok', 'string', true]]);
  });

  it('keeps HCL2 reading and its errors when HCL1 cannot read it either', () => {
    const { content, problems } = folder({ 'a.tf': 'variable "modern" {\n  type = list(string)\n}\n', 'b.tf': 'locals {\n  m = { c4.2xlarge = 58 }\n}\n' });
    expect(problems).toEqual(['b.tf:2:13: Expected "=" or ":" after the object key, found character "x"']);
    expect(content.root.inputs.map((i) => i.name)).toEqual(['modern']);
  });

  it('keeps HCL2 errors when the legacy loader finds a duplicate', () => {
    const { problems } = folder({ 'a.tf': 'variable "x" {}\nlocals {\n  m = { c4.2xlarge = 58 }\n}\n', 'b.tf': 'variable "x" {}\n' });
    expect(problems).toHaveLength(1);
  });
});
