import { describe, expect, it } from 'vitest';
import { versionsIndexOf, versionsIndexText } from '../../src/mirror/versions-index.js';

describe('versions index', () => {
  it('writes one module a line and reads back the same lists', () => {
    const modules: [string, string[]][] = [
      ['acme/a/aws', ['1.1.0', '1.0.0']],
      ['acme/b/google', ['0.1.0-beta.1']],
    ];
    const text = versionsIndexText(modules);
    expect(text).toBe('{"modules":{\n"acme/a/aws":["1.1.0","1.0.0"],\n"acme/b/google":["0.1.0-beta.1"]\n}}\n');
    expect([...versionsIndexOf(JSON.parse(text))]).toEqual(modules);
    expect([...versionsIndexOf(JSON.parse(versionsIndexText([])))]).toEqual([]);
  });

  it('refuses a document without a modules object or with a list that is not of strings, naming the module', () => {
    expect(() => versionsIndexOf({})).toThrow('no "modules" object');
    expect(() => versionsIndexOf({ modules: [] })).toThrow('no "modules" object');
    expect(() => versionsIndexOf({ modules: { 'acme/a/aws': ['1.0.0', 1] } })).toThrow('acme/a/aws: expected a list of version strings');
    expect(() => versionsIndexOf({ modules: { 'acme/a/aws': '1.0.0' } })).toThrow('acme/a/aws: expected a list of version strings');
  });
});
