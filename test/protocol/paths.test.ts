import { describe, expect, it } from 'vitest';
import {
  archiveFile,
  archiveLocation,
  basePathOf,
  basePathOfModulesService,
  downloadFile,
  downloadsSummaryFile,
  isValidName,
  listingPageUrl,
  modulesServiceUrl,
  versionDetailFile,
} from '../../src/protocol/paths.js';

describe('paths', () => {
  const a = { namespace: 'acme', name: 'vpc', provider: 'aws' };
  it('lays out protocol paths in the tree', () => {
    expect(versionDetailFile(a, '1.0.0')).toBe('v1/modules/acme/vpc/aws/1.0.0/index.json');
    expect(downloadFile(a, '1.0.0')).toBe('v1/modules/acme/vpc/aws/1.0.0/download');
    expect(archiveFile(a, '1.0.0')).toBe('v1/modules/acme/vpc/aws/1.0.0/vpc-aws-1.0.0.tar.gz');
    expect(downloadsSummaryFile(a)).toBe('v2/modules/acme/vpc/aws/downloads/summary');
    expect(archiveLocation(a, '1.0.0', '')).toBe('./vpc-aws-1.0.0.tar.gz');
    expect(archiveLocation(a, '1.0.0', 'https://r.example/m/')).toBe('https://r.example/m/v1/modules/acme/vpc/aws/1.0.0/vpc-aws-1.0.0.tar.gz');
    expect(modulesServiceUrl('')).toBe('/v1/modules/');
    expect(listingPageUrl('/', 'acme', 15, 15)).toBe('/v1/modules/acme?offset=15&limit=15');
  });
  it('accepts only names that are safe path segments', () => {
    for (const ok of ['acme', 'my-module', 'a_b', 'A1']) expect(isValidName(ok), ok).toBe(true);
    for (const bad of ['', '..', '.hidden', 'a/b', 'a\\b', '-lead', 'x'.repeat(65), 'a b', 'é']) expect(isValidName(bad), bad).toBe(false);
  });
});

describe('base path', () => {
  it('is / for relative locations, else the path of the base URL', () => {
    expect(basePathOf('')).toBe('/');
    expect(basePathOf('https://r.example/')).toBe('/');
    expect(basePathOf('https://r.example/m/')).toBe('/m/');
    expect(basePathOf('https://r.example/a/b%20c/')).toBe('/a/b%20c/');
  });
  it('is read back from discovery as the same path the base URL gave', () => {
    for (const baseUrl of ['', 'https://r.example/', 'https://r.example/m/', 'http://127.0.0.1:8080/a/b/']) {
      expect(basePathOfModulesService(modulesServiceUrl(baseUrl)), baseUrl).toBe(basePathOf(baseUrl));
    }
  });
  it('keeps a modules.v1 path that does not end in the protocol base as it is', () => {
    expect(basePathOfModulesService('/registry/')).toBe('/registry/');
    expect(basePathOfModulesService('./v1/modules/')).toBe('/');
  });
});
