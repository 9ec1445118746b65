// Which module call sources sync can take from a registry, read as
// Terraform reads them (addrs.ParseModuleSource), and which hosts an upstream
// answers for.

import { describe, expect, it } from 'vitest';
import { parseConstraint } from '../../src/protocol/constraint.js';
import { normalizeHost, parseModuleSource, servedHosts } from '../../src/protocol/source-address.js';

const registry = (host: string, namespace: string, name: string, provider: string, subdir = '') => ({
  kind: 'registry',
  host,
  address: { namespace, name, provider },
  subdir,
});

describe('module call sources', () => {
  it('reads registry addresses, with or without a host, with a //subdir', () => {
    expect(parseModuleSource('acme/vpc/aws')).toEqual(registry('registry.terraform.io', 'acme', 'vpc', 'aws'));
    expect(parseModuleSource('terraform-aws-modules/kms/aws')).toEqual(registry('registry.terraform.io', 'terraform-aws-modules', 'kms', 'aws'));
    expect(parseModuleSource('Registry.OpenTofu.org/acme/vpc/aws//modules/nat/')).toEqual(
      registry('registry.opentofu.org', 'acme', 'vpc', 'aws', 'modules/nat'),
    );
    expect(parseModuleSource('registry.example.com:443/acme/vpc/aws')).toEqual(registry('registry.example.com', 'acme', 'vpc', 'aws'));
    expect(parseModuleSource('127.0.0.1:8080/acme/vpc/aws')).toEqual(registry('127.0.0.1:8080', 'acme', 'vpc', 'aws'));
  });

  it('takes local paths as local, whatever follows', () => {
    for (const source of ['./modules/x', '../shared', '.\\win', '..\\up']) expect(parseModuleSource(source).kind, source).toBe('local');
  });

  it('leaves everything that does not parse as a registry address to go-getter, as Terraform does', () => {
    const getter = (source: string) => {
      const parsed = parseModuleSource(source);
      return parsed.kind === 'remote' ? parsed.getter : parsed.kind;
    };
    expect(getter('git::https://example.com/vpc.git?ref=v1.2.0')).toBe('git');
    expect(getter('git@github.com:acme/vpc.git')).toBe('git');
    expect(getter('github.com/acme/vpc')).toBe('git');
    // github.com and bitbucket.org are never registry hosts, even with four parts.
    expect(getter('github.com/acme/vpc/aws')).toBe('git');
    expect(getter('https://example.com/vpc.zip')).toBe('url');
    expect(getter('s3::https://s3.amazonaws.com/bucket/vpc.zip')).toBe('url');
    // A host needs a dot; a provider is lower case; names are at most 64 characters.
    expect(getter('localhost:8080/acme/vpc/aws')).toBe('other');
    expect(getter('acme/vpc/AWS')).toBe('other');
    expect(getter(`acme/${'x'.repeat(65)}/aws`)).toBe('other');
    expect(getter('acme/vpc')).toBe('other');
    expect(getter('acme/vpc/aws//../escape')).toBe('other');
    expect(getter('')).toBe('other');
  });
});

describe('hosts an upstream answers for', () => {
  it('are the public registries it stands in for, and its own host', () => {
    expect([...servedHosts(new URL('https://registry.example.com/'), ['registry.terraform.io'])]).toEqual(['registry.terraform.io', 'registry.example.com']);
    expect([...servedHosts(new URL('http://127.0.0.1:9000/'), [])]).toEqual(['127.0.0.1:9000']);
    expect([...servedHosts(new URL('http://mirror.local/'), [])]).toEqual(['mirror.local']);
    expect(normalizeHost('Registry.Terraform.IO:443')).toBe('registry.terraform.io');
    expect(normalizeHost('localhost')).toBeUndefined();
    expect(normalizeHost('a..b')).toBeUndefined();
  });

  it('a call without a version takes any release, never a pre-release', () => {
    expect(['1.0.0', '2.0.0-rc.1'].filter(parseConstraint(''))).toEqual(['1.0.0']);
  });
});
