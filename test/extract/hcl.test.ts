import { describe, expect, it } from 'vitest';
import { HclSyntaxError, parseHcl, UNKNOWN } from '../../src/extract/hcl.js';

/** The value of `x = <expr>` in a one-attribute file. */
function valueOf(expr: string): unknown {
  return parseHcl(`x = ${expr}\n`).attributes[0]!.expr.value;
}

function errorOf(source: string): HclSyntaxError {
  try {
    parseHcl(source);
  } catch (error) {
    if (error instanceof HclSyntaxError) return error;
    throw error;
  }
  throw new Error('expected a syntax error');
}

describe('parseHcl values', () => {
  it('decodes numbers, including exponents', () => {
    expect(valueOf('1e3')).toBe(1000);
    expect(valueOf('1.5e-2')).toBe(0.015);
    expect(valueOf('2E+2')).toBe(200);
    expect(valueOf('-7')).toBe(-7);
    expect(valueOf('0.5')).toBe(0.5);
  });

  it('evaluates operators on constants the way HCL does', () => {
    expect(valueOf('1 + 2 * 3')).toBe(7);
    expect(valueOf('(1 + 2) * 3')).toBe(9);
    expect(valueOf('10 % 4 == 2 && !false')).toBe(true);
    expect(valueOf('1 > 2 ? "a" : "b"')).toBe('b');
    expect(valueOf('var.x + 1')).toBe(UNKNOWN);
  });

  it('decodes collections with either separator and trailing commas', () => {
    expect(valueOf('[1, "a", true, null,]')).toEqual([1, 'a', true, null]);
    expect(valueOf('{\n  a = 1\n  "b" : [2]\n  c = { d = "e" },\n}')).toEqual({ a: 1, b: [2], c: { d: 'e' } });
    expect(valueOf('{ a = 1, b = 2 }')).toEqual({ a: 1, b: 2 });
  });

  it('treats references, function calls and for expressions as unknown', () => {
    expect(valueOf('var.region')).toBe(UNKNOWN);
    expect(valueOf('upper("a")')).toBe(UNKNOWN);
    expect(valueOf('[for s in ["a"] : upper(s)]')).toBe(UNKNOWN);
    expect(valueOf('{ for k, v in var.m : k => v... if v != null }')).toBe(UNKNOWN);
    expect(valueOf('[1, var.x]')).toBe(UNKNOWN);
    expect(valueOf('provider::aws::arn_parse("x").account')).toBe(UNKNOWN);
    expect(valueOf('aws_instance.web[*].id')).toBe(UNKNOWN);
    expect(valueOf('local.list.0')).toBe(UNKNOWN);
  });

  it('indexes constant collections', () => {
    expect(valueOf('["a", "b"][1]')).toBe('b');
    expect(valueOf('{ a = { b = 3 } }.a.b')).toBe(3);
  });

  it('decodes string escapes and template escapes', () => {
    expect(valueOf('"a\\n\\t\\"\\\\ \\u00e9 \\U0001F600"')).toBe('a\n\t"\\ é 😀');
    expect(valueOf('"$${literal} %%{literal}"')).toBe('${literal} %{literal}');
    expect(valueOf('"cost: $5"')).toBe('cost: $5');
    // Literal text is taken in runs that stop at `$`, `%` and a backslash: each of them also stands alone.
    expect(valueOf('"100% of $x, ${"y"}z$"')).toBe('100% of $x, yz$');
    expect(valueOf('"%$\\\\%"')).toBe('%$\\%');
  });

  it('evaluates templates of constants and gives up on references', () => {
    expect(valueOf('"a-${1 + 1}-${true}"')).toBe('a-2-true');
    expect(valueOf('"${42}"')).toBe(42);
    expect(valueOf('"x-${var.y}"')).toBe(UNKNOWN);
    expect(valueOf('"%{ if var.a }yes%{ else }no%{ endif }"')).toBe(UNKNOWN);
    expect(valueOf('"a ${~ "b" ~} c"')).toBe('abc');
  });

  it('decodes heredocs, stripping common indentation of <<- only', () => {
    const src = 'x = <<EOT\n  keep\n    indent\nEOT\ny = <<-EOT\n    strip\n      two\n\n    end\n    EOT\n';
    const body = parseHcl(src);
    expect(body.attributes[0]!.expr.value).toBe('  keep\n    indent\n');
    expect(body.attributes[1]!.expr.value).toBe('strip\n  two\n\nend\n');
  });

  it('keeps interpolations in heredocs as templates', () => {
    expect(valueOf('<<EOT\nhello ${var.name}\nEOT')).toBe(UNKNOWN);
    expect(valueOf('<<EOT\nliteral $${x} "quoted" \\n\nEOT')).toBe('literal ${x} "quoted" \\n\n');
  });
});

describe('parseHcl structure', () => {
  it('reads blocks, labels, nested blocks and exact expression text', () => {
    const src = [
      'variable "settings" {',
      '  type = object({',
      '    name = string # comment',
      '    size = optional(number, 1e3) // another',
      '    /* block',
      '       comment */',
      '  })',
      '}',
      'resource aws_s3_bucket "b" {',
      '  dynamic "rule" {',
      '    for_each = var.rules',
      '    content { id = rule.value.id }',
      '  }',
      '}',
      'locals { single = 1 }',
      '',
    ].join('\n');
    const body = parseHcl(src);
    expect(body.blocks.map((b) => [b.type, b.labels])).toEqual([
      ['variable', ['settings']],
      ['resource', ['aws_s3_bucket', 'b']],
      ['locals', []],
    ]);
    const type = body.blocks[0]!.body.attributes[0]!.expr;
    expect(src.slice(type.start, type.end)).toBe(
      'object({\n    name = string # comment\n    size = optional(number, 1e3) // another\n    /* block\n       comment */\n  })',
    );
    const dynamic = body.blocks[1]!.body.blocks[0]!;
    expect(dynamic.type).toBe('dynamic');
    expect(dynamic.body.blocks[0]!.body.attributes[0]!.name).toBe('id');
    expect(body.blocks[2]!.body.attributes[0]!.expr.value).toBe(1);
  });

  it('reads objects whose items are partly unknown item by item', () => {
    const expr = parseHcl('aws = { source = "hashicorp/aws", configuration_aliases = [aws.east] }\n').attributes[0]!.expr;
    expect(expr.value).toBe(UNKNOWN);
    expect(expr.entries?.map((e) => [e.key, e.expr.value])).toEqual([
      ['source', 'hashicorp/aws'],
      ['configuration_aliases', UNKNOWN],
    ]);
  });

  it('accepts CRLF line endings and a file without a final newline', () => {
    expect(parseHcl('a = 1\r\nb = "x"').attributes.map((a) => a.expr.value)).toEqual([1, 'x']);
  });
});

describe('parseHcl syntax errors', () => {
  it('reports line and column of an unclosed block', () => {
    const error = errorOf('variable "a" {\n  default = 1\n');
    expect(error.message).toMatch(/Unclosed block/);
    expect(error.line).toBe(3);
  });

  it('reports a missing expression where it is', () => {
    const error = errorOf('variable "a" {\n  default = \n}\n');
    expect([error.line, error.column]).toEqual([2, 13]);
    expect(error.message).toMatch(/Expected an expression/);
  });

  it('reports an unterminated string at its opening quote', () => {
    const error = errorOf('a = 1\nb = "open\n');
    expect([error.line, error.column]).toEqual([2, 5]);
  });

  it('reports an unterminated heredoc and a bad escape', () => {
    expect(errorOf('x = <<EOT\nno end\n').message).toMatch(/heredoc/);
    expect(errorOf('x = "\\q"\n').message).toMatch(/escape/);
  });

  it('rejects a stray closing brace and two items on one line', () => {
    expect(errorOf('}\n').message).toMatch(/no block to close/);
    const error = errorOf('a = 1 b = 2\n');
    expect([error.line, error.column]).toEqual([1, 7]);
  });

  it('reports errors inside heredoc interpolations on the file line', () => {
    const error = errorOf('a = 1\nx = <<EOT\nline\n${ }\nEOT\n');
    expect(error.line).toBe(4);
  });
});
