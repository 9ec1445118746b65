// Extraction of the hard-case fixtures, compared with expected values written
// by hand from what hashicorp/terraform-config-inspect (and Terraform) produce.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { extractVersion } from '../../src/extract/index.js';
import type { SourceFile } from '../../src/types.js';
import { ROOT } from '../helpers.js';

const FIXTURES = join(ROOT, 'test/fixtures/hcl');

function filesOf(dir: string): SourceFile[] {
  return readdirSync(dir)
    .filter((name) => statSync(join(dir, name)).isFile() && !name.startsWith('expected'))
    .map((name) => ({ path: name, mode: 0o644, data: readFileSync(join(dir, name)) }));
}

const cases = readdirSync(FIXTURES).filter((name) => name !== 'syntax-error');

describe('extraction matches terraform-config-inspect on the hard cases', () => {
  it('has the cases the issue names', () => {
    expect(cases).toEqual(expect.arrayContaining(['heredocs', 'optional-types', 'numbers', 'templates', 'dynamic-and-for', 'json-syntax', 'overrides']));
  });

  it.each(cases)('%s', (name) => {
    const dir = join(FIXTURES, name);
    const expected = JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8'));
    const { root } = extractVersion(filesOf(dir));
    const { path: _path, readme: _readme, empty: _empty, ...actual } = root;
    // A required input has no default at all, as in expected.json.
    const normalised = { ...actual, inputs: actual.inputs.map((i) => (i.required ? (({ default: _d, ...rest }) => rest)(i) : i)) };
    expect(normalised).toEqual(expected);
  });

  it('reports a syntax error with file, line and column', () => {
    const dir = join(FIXTURES, 'syntax-error');
    const expected = JSON.parse(readFileSync(join(dir, 'expected-error.json'), 'utf8'));
    expect(() => extractVersion(filesOf(dir))).toThrow(`${expected.file}:${expected.line}:${expected.column}: `);
  });
});
