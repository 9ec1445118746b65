// The pure parts of sync: Terraform-style version constraints, module
// specs, Retry-After, and the download location forms go-getter accepts.

import { describe, expect, it } from 'vitest';
import { parseConstraint, parseModuleSpec } from '../../src/protocol/constraint.js';
import { retryAfterMs } from '../../src/sync/http.js';
import { parseLocation } from '../../src/sync/location.js';

const VERSIONS = ['0.9.0', '1.0.0', '1.2.0', '1.2.5', '1.3.0', '1.10.0', '2.0.0', '2.0.0-rc.1', '1.3.0-beta.2'];
const matching = (constraint: string) => VERSIONS.filter(parseConstraint(constraint));

describe('version constraints', () => {
  it('reads them as Terraform does', () => {
    expect(matching('>= 1.2, < 2.0')).toEqual(['1.2.0', '1.2.5', '1.3.0', '1.10.0']);
    expect(matching('~> 1.2')).toEqual(['1.2.0', '1.2.5', '1.3.0', '1.10.0']);
    expect(matching('~> 1.2.0')).toEqual(['1.2.0', '1.2.5']);
    expect(matching('~> 1')).toEqual(['1.0.0', '1.2.0', '1.2.5', '1.3.0', '1.10.0', '2.0.0']);
    expect(matching('1.2.5')).toEqual(['1.2.5']);
    expect(matching('= 1.2.5')).toEqual(['1.2.5']);
    expect(matching('>= 1.0, != 1.2.0, < 1.3')).toEqual(['1.0.0', '1.2.5']);
    expect(matching('> 1.10.0')).toEqual(['2.0.0']);
    expect(matching('<= 1.0')).toEqual(['0.9.0', '1.0.0']);
  });

  it('admits a pre-release only when a clause names it exactly', () => {
    expect(matching('>= 1.0')).not.toContain('2.0.0-rc.1');
    expect(matching('= 2.0.0-rc.1')).toEqual(['2.0.0-rc.1']);
    expect(matching('2.0.0-rc.1')).toEqual(['2.0.0-rc.1']);
  });

  it('takes npm ranges too, and refuses nonsense naming it', () => {
    expect(matching('^1.2.0')).toEqual(['1.2.0', '1.2.5', '1.3.0', '1.10.0']);
    expect(() => parseConstraint('>> 1')).toThrow(/Invalid version constraint ">> 1"/);
  });

  it('parses module specs', () => {
    const spec = parseModuleSpec('acme/vpc/aws@~> 2.0');
    expect(spec.address).toEqual({ namespace: 'acme', name: 'vpc', provider: 'aws' });
    expect(spec.constraint).toBe('~> 2.0');
    expect(spec.matches('2.5.0')).toBe(true);
    expect(spec.matches('3.0.0')).toBe(false);
    expect(parseModuleSpec('acme/vpc/aws').matches('0.0.1-alpha')).toBe(true);
    expect(() => parseModuleSpec('acme/../aws')).toThrow(/Invalid module/);
    expect(() => parseModuleSpec('acme/vpc/aws@')).toThrow(/nothing follows "@"/);
  });
});

describe('Retry-After', () => {
  it('reads seconds and HTTP dates', () => {
    expect(retryAfterMs('3')).toBe(3000);
    const now = Date.parse('2024-01-01T00:00:00Z');
    expect(retryAfterMs('Mon, 01 Jan 2024 00:00:10 GMT', now)).toBe(10_000);
    expect(retryAfterMs('Sun, 31 Dec 2023 00:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs(undefined)).toBeUndefined();
    expect(retryAfterMs('soon')).toBeUndefined();
  });
});

describe('download locations', () => {
  const from = new URL('https://registry.example.com/v1/modules/acme/vpc/aws/1.0.0/download');

  it('resolves archive URLs against the download URL', () => {
    expect(parseLocation('./vpc-aws-1.0.0.tar.gz', from)).toEqual({
      kind: 'archive',
      url: new URL('https://registry.example.com/v1/modules/acme/vpc/aws/1.0.0/vpc-aws-1.0.0.tar.gz'),
      subdir: '',
    });
    expect(parseLocation('/files/x.tgz', from)).toMatchObject({ url: new URL('https://registry.example.com/files/x.tgz') });
    expect(parseLocation('https://cdn.example.com/get?id=3&archive=tar.gz', from)).toMatchObject({ url: new URL('https://cdn.example.com/get?id=3') });
    expect(parseLocation('https://codeload.example.com/a/b/tar.gz/v1.tar.gz//*', from)).toMatchObject({ subdir: '*' });
  });

  it('reads git:: addresses with ref and subfolder', () => {
    expect(parseLocation('git::https://git.example.com/acme/infra.git//modules/vpc?ref=v1.2.0', from)).toEqual({
      kind: 'git',
      url: 'https://git.example.com/acme/infra.git',
      ref: 'v1.2.0',
      subdir: 'modules/vpc',
    });
    expect(parseLocation('git::https://git.example.com/x.git', from)).toMatchObject({ ref: undefined, subdir: '' });
  });

  it('refuses what it cannot fetch, saying why', () => {
    expect(() => parseLocation('s3::https://bucket/x.tar.gz', from)).toThrow(/"s3::" getter is not supported/);
    expect(() => parseLocation('git::file:///etc/repo', from)).toThrow(/git over file: is not allowed/);
    expect(() => parseLocation('https://example.com/x.zip', from)).toThrow(/zip archives are not supported/);
    expect(() => parseLocation('https://example.com/module', from)).toThrow(/does not end in \.tar\.gz/);
    expect(() => parseLocation('https://example.com/x.tar.gz//../../etc', from)).toThrow(/outside the module/);
  });
});
