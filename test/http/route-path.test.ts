// Route paths as serve and the management API match them: literal segments, `:name`, a final `*name`.

import { describe, expect, it } from 'vitest';
import { matchRoutePath, routePath } from '../../src/http/route-path.js';

describe('route paths', () => {
  it('capture one segment with :name, and the rest of the path (possibly nothing) with a final *name', () => {
    const module = routePath('v1/modules/:namespace/:name/:provider');
    expect(matchRoutePath(module, ['v1', 'modules', 'acme', 'net', 'aws'])).toEqual({ namespace: 'acme', name: 'net', provider: 'aws' });
    expect(matchRoutePath(module, ['v1', 'modules', 'acme', 'net'])).toBeUndefined();
    expect(matchRoutePath(module, ['v1', 'modules', 'acme', 'net', 'aws', 'versions'])).toBeUndefined();
    expect(matchRoutePath(routePath('v1/providers/*rest'), ['v1', 'providers'])).toEqual({ rest: '' });
    expect(matchRoutePath(routePath('v1/providers/*rest'), ['v1', 'providers', 'a', 'b'])).toEqual({ rest: 'a/b' });
    expect(matchRoutePath(routePath(''), [])).toEqual({});
    expect(matchRoutePath(routePath('account/details'), ['account', 'update'])).toBeUndefined();
  });
});
