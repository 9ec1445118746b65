// The pure rules of provider sync: addresses as Terraform reads them, the
// lock file, and the checksum-list check with Terraform's wording.

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkChecksumList } from '../../src/providers/signature.js';
import { isBuiltInProvider, parseProviderSpec, providerFromSource } from '../../src/protocol/provider-address.js';
import { readLockFile } from '../../src/sync/lock-file.js';
import { tempDir, writeFiles } from '../helpers.js';

describe('provider addresses', () => {
  it('reads required_providers sources as terraform-registry-address does', () => {
    expect(providerFromSource('hashicorp/aws', 'aws')).toEqual({ hostname: 'registry.terraform.io', namespace: 'hashicorp', type: 'aws' });
    expect(providerFromSource('', 'random')).toEqual({ hostname: 'registry.terraform.io', namespace: 'hashicorp', type: 'random' });
    expect(providerFromSource('Registry.OpenTofu.org/Acme/Widget', 'w')).toEqual({ hostname: 'registry.opentofu.org', namespace: 'acme', type: 'widget' });
    expect(providerFromSource('example.com:443/acme/widget', 'w')?.hostname).toBe('example.com');
    expect(providerFromSource('a/b/c/d', 'x')).toBeUndefined();
    expect(providerFromSource('acme/wid_get', 'x')).toBeUndefined();
    expect(isBuiltInProvider(providerFromSource('terraform.io/builtin/terraform', 'terraform')!)).toBe(true);
  });

  it("reads --provider specs: a short NS/TYPE is the upstream host's", () => {
    const spec = parseProviderSpec('acme/widget@~> 1.2', 'registry.example.com');
    expect(spec.address).toEqual({ hostname: 'registry.example.com', namespace: 'acme', type: 'widget' });
    expect(['1.2.0', '1.9.1', '2.0.0'].filter(spec.matches)).toEqual(['1.2.0', '1.9.1']);
    expect(parseProviderSpec('registry.terraform.io/hashicorp/aws', 'x.example.com').address.hostname).toBe('registry.terraform.io');
    expect(() => parseProviderSpec('aws', 'x.example.com')).toThrow(/expected HOST\/NAMESPACE\/TYPE or NAMESPACE\/TYPE/);
    expect(() => parseProviderSpec('localhost/acme/w', 'x.example.com')).toThrow(/not a registry host name/);
  });
});

describe('the lock file', () => {
  it("gives each provider's version and hashes, and names file:line for a mistake", () => {
    const dir = tempDir('mm-lock-');
    writeFiles(dir, {
      'ok/.terraform.lock.hcl':
        '# This file is maintained automatically by "terraform init".\nprovider "registry.terraform.io/hashicorp/null" {\n  version     = "3.2.1"\n  constraints = "~> 3.0"\n  hashes = [\n    "h1:abc=",\n    "zh:0123",\n  ]\n}\n',
      'bad/.terraform.lock.hcl': 'provider "registry.terraform.io/hashicorp/null" {\n  hashes = []\n}\n',
    });
    expect(readLockFile(`${dir}/ok`)).toEqual(new Map([['registry.terraform.io/hashicorp/null', { version: '3.2.1', hashes: ['h1:abc=', 'zh:0123'] }]]));
    expect(readLockFile(`${dir}/none`)).toEqual(new Map());
    expect(() => readLockFile(`${dir}/bad`)).toThrow(
      /bad\/\.terraform\.lock\.hcl:2: provider "registry\.terraform\.io\/hashicorp\/null": version: expected a version string/,
    );
  });
});

describe('the checksum list', () => {
  const sum = createHash('sha256').update('zip').digest('hex');
  const list = Buffer.from(`${'0'.repeat(64)}  terraform-provider-x_1.0.0_darwin_arm64.zip\n${sum}  terraform-provider-x_1.0.0_linux_amd64.zip\n`);

  it("accepts the line naming the file with the registry's shasum, and refuses in Terraform's words otherwise", () => {
    expect(() => checkChecksumList(list, 'terraform-provider-x_1.0.0_linux_amd64.zip', sum)).not.toThrow();
    expect(() => checkChecksumList(list, 'terraform-provider-x_1.0.0_windows_amd64.zip', sum)).toThrow(
      'checksum list has no SHA-256 hash for "terraform-provider-x_1.0.0_windows_amd64.zip"',
    );
    expect(() => checkChecksumList(list, 'terraform-provider-x_1.0.0_darwin_arm64.zip', sum)).toThrow(
      `checksum list has unexpected SHA-256 hash ${'0'.repeat(64)} (expected ${sum})`,
    );
  });
});
