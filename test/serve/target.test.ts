import { describe, expect, it } from 'vitest';
import { isManagementTarget, MAX_URL_LENGTH, parseTarget } from '../../src/serve/target.js';

describe('parseTarget', () => {
  it('decodes path segments, dropping empty ones, and keeps the query', () => {
    const { segments, query } = parseTarget('/v1//modules/a%20b/?offset=2&q=x');
    expect(segments).toEqual(['v1', 'modules', 'a b']);
    expect(query.get('offset')).toBe('2');
    expect(parseTarget('/').segments).toEqual([]);
  });

  it('refuses what could step outside the tree, each with a request error', () => {
    for (const url of ['/a/../b', '/a/%2e%2e/b', '/a/%2E%2e', '/a%2fb', '/a%5cb', '/a%00b', '/./a', 'a/b', '/%zz']) {
      expect(() => parseTarget(url), url).toThrow(expect.objectContaining({ code: 'BAD_REQUEST' }));
    }
  });

  it('refuses an overlong URL', () => {
    expect(() => parseTarget(`/${'a'.repeat(MAX_URL_LENGTH)}`)).toThrow(expect.objectContaining({ code: 'URI_TOO_LONG' }));
  });
});

describe('isManagementTarget', () => {
  it('is true for /api/v2 paths, encoded or malformed ones included, so their errors are JSON:API', () => {
    for (const url of ['/api/v2/ping', '/api/v2', '//api//v2/x?y', '/api/%76%32/ping', '/api/v2/%zz', '/api/v2/../x'])
      expect(isManagementTarget(url), url).toBe(true);
    for (const url of ['/', '/api', '/api/v1/x', '/v1/modules', '/apiv2', '/x/api/v2']) expect(isManagementTarget(url), url).toBe(false);
  });
});
