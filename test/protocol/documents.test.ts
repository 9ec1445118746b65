import { describe, expect, it } from 'vitest';
import { pageMeta } from '../../src/protocol/documents.js';
import { archiveLocation, basePathOf, isValidName, listingPageUrl, modulesServiceUrl, versionDetailFile } from '../../src/protocol/paths.js';

describe('pageMeta (spec 8)', () => {
  const url = (next: number) => `/v1/modules?offset=${next}&limit=10`;
  it('has next_offset and next_url only when more results exist', () => {
    expect(pageMeta(25, 0, 10, url)).toEqual({ limit: 10, current_offset: 0, next_offset: 10, next_url: '/v1/modules?offset=10&limit=10' });
    expect(pageMeta(20, 10, 10, url)).toEqual({ limit: 10, current_offset: 10, prev_offset: 0 });
    expect(pageMeta(0, 0, 10, url)).toEqual({ limit: 10, current_offset: 0 });
  });
  it('has prev_offset only when offset > 0, never below 0', () => {
    expect(pageMeta(100, 3, 10, url).prev_offset).toBe(0);
    expect(pageMeta(100, 30, 10, url).prev_offset).toBe(20);
  });
});

describe('paths', () => {
  const a = { namespace: 'acme', name: 'vpc', provider: 'aws' };
  it('lays out protocol paths in the tree', () => {
    expect(versionDetailFile(a, '1.0.0')).toBe('v1/modules/acme/vpc/aws/1.0.0/index.json');
    expect(archiveLocation(a, '1.0.0', '')).toBe('./vpc-aws-1.0.0.tar.gz');
    expect(archiveLocation(a, '1.0.0', 'https://r.example/m/')).toBe('https://r.example/m/v1/modules/acme/vpc/aws/1.0.0/vpc-aws-1.0.0.tar.gz');
    expect(modulesServiceUrl('')).toBe('/v1/modules/');
    expect(basePathOf('https://r.example/m/')).toBe('/m/');
    expect(listingPageUrl('/', 'acme', 15, 15)).toBe('/v1/modules/acme?offset=15&limit=15');
  });
  it('accepts only names that are safe path segments', () => {
    for (const ok of ['acme', 'my-module', 'a_b', 'A1']) expect(isValidName(ok), ok).toBe(true);
    for (const bad of ['', '..', '.hidden', 'a/b', 'a\\b', '-lead', 'x'.repeat(65), 'a b', 'é']) expect(isValidName(bad), bad).toBe(false);
  });
});
