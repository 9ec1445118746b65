// A derived file's text (src/bundle/derive.ts): the receiver's own document
// with the bundle's values, in the sender's key order, written as emit writes.

import { describe, expect, it } from 'vitest';
import { derivedText } from '../../src/bundle/derive.js';
import { jsonText } from '../../src/mirror/staging.js';

const own = jsonText({ id: 'a/b/c/1.0.0', root: { readme: '# hi' }, versions: ['1.0.0'], deprecation: { reason: 'old', link: null } });

describe('derivedText', () => {
  it('takes each key from the entry, else the shared values, else the own file, in the listed order', () => {
    const made = derivedText(own, { keys: ['id', 'root', 'versions'], values: { id: 'a/b/c/1.0.0' } }, { versions: ['1.1.0', '1.0.0'] });
    expect(made).toBe(jsonText({ id: 'a/b/c/1.0.0', root: { readme: '# hi' }, versions: ['1.1.0', '1.0.0'] }));
    // A key left out of the list (an ended deprecation) is gone; one the entry carries wins over a shared one.
    expect(derivedText(own, { keys: ['versions', 'id'], values: { versions: [] } }, { versions: ['x'] })).toBe(jsonText({ versions: [], id: 'a/b/c/1.0.0' }));
  });

  it('says why when the own file cannot give the document', () => {
    expect(derivedText(own, { keys: ['id', 'examples'], values: {} })).toEqual({ problem: 'has no "examples"' });
    expect(derivedText('{"id": 1', { keys: ['id'], values: {} })).toEqual({ problem: 'is not JSON' });
    expect(derivedText('[1]', { keys: [], values: {} })).toEqual({ problem: 'is not a JSON object' });
  });

  it('keeps a key named __proto__ as a plain key', () => {
    const made = derivedText('{}', { keys: ['__proto__'], values: JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, unknown> });
    expect(made).toBe('{\n  "__proto__": {\n    "polluted": true\n  }\n}\n');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
