// Required providers, implied ones included: each fixture's names are what
// terraform-config-inspect prints as `required_providers` for the folder
// (worked out from tfconfig/load_hcl.go, load_legacy.go and Module.init),
// except where Terraform differs and we follow Terraform (noted per case).

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { providerRefName } from '../../src/extract/declarations.js';
import { createExtractCache, extractVersion } from '../../src/extract/index.js';
import { impliedLocalName } from '../../src/extract/providers.js';
import type { SourceFile } from '../../src/types.js';
import { ROOT } from '../helpers.js';

const FIXTURES = join(ROOT, 'test/fixtures/hcl');

function filesOf(dir: string): SourceFile[] {
  return readdirSync(dir)
    .filter((name) => statSync(join(dir, name)).isFile() && !name.startsWith('expected'))
    .map((name) => ({ path: name, mode: 0o644, data: readFileSync(join(dir, name)) }));
}

const providersOf = (fixture: string) => extractVersion(filesOf(join(FIXTURES, fixture))).root.providers;

describe('required providers, declared and implied', () => {
  it.each([
    // Resources and data sources only: each type's prefix, a type without `_` whole.
    ['implied-only', { aws: '', google: '', time: '' }],
    // The declared aws keeps its source; kubernetes and google are implied.
    ['implied-mixed', { aws: 'acme/aws >= 1.0', google: '', kubernetes: '', random: ' ~> 3.5', tls: ' ~> 4.0' }],
    // `provider = google-beta.east` (and quoted `"azurerm.second"`) names the provider, not the type.
    ['implied-alias', { aws: '', azurerm: '', 'google-beta': '' }],
    // A module call's providers map requires nothing of this folder.
    ['implied-module-providers', { null: '' }],
    // terraform-config-inspect also prints `terraform`; Terraform's is built in, never installed.
    ['implied-remote-state', { aws: '' }],
    // The HCL1 loader: `provider = "aws.dr"` is aws, `"azure.second"` is azure.
    ['implied-hcl1', { aws: '', azure: '', template: '' }],
    // terraform-config-inspect reads override.tf as an ordinary file: it would print aws and google.
    ['implied-overrides', { awsalt: '', 'google-beta': '' }],
    // Declared in required_providers and provider blocks: nothing implied.
    [
      'providers',
      {
        acmecorp: 'example.com/acmecorp/widgets ~> 1.0',
        aws: 'hashicorp/aws != 5.1.0, >= 5.0, < 6.0',
        google: 'registry.terraform.io/hashicorp/google',
        null: '',
        random: ' ~> 3.5',
        tls: ' < 5.0, 4.0.5',
      },
    ],
  ])('%s', (fixture, expected) => {
    const shown = Object.fromEntries(providersOf(fixture).map((p) => [p.name, p.version === '' ? p.source : `${p.source} ${p.version}`]));
    expect(shown).toEqual(expected);
  });

  it('gives an implied provider no source, namespace or version: hashicorp/NAME is how readers resolve it', () => {
    expect(providersOf('implied-only')[0]).toEqual({ name: 'aws', namespace: '', source: '', version: '' });
  });

  it('names the provider of a type by its prefix up to the first underscore', () => {
    expect(impliedLocalName('aws_s3_bucket')).toBe('aws');
    expect(impliedLocalName('google-beta_x')).toBe('google-beta');
    expect(impliedLocalName('time')).toBe('time');
  });

  it('reads the local name of a provider reference, bare or quoted', () => {
    expect(providerRefName('aws')).toBe('aws');
    expect(providerRefName('aws.west')).toBe('aws');
    expect(providerRefName(' google-beta . east ')).toBe('google-beta');
    expect(providerRefName('var.x.y')).toBeUndefined();
    expect(providerRefName('lookup(var.p, "x")')).toBeUndefined();
  });

  it('reads the provider argument of a .tf.json resource', () => {
    const json = JSON.stringify({ resource: { aws_instance: { web: { provider: 'awsalt.west' } } }, data: { google_project: { p: {} } } });
    const root = extractVersion([{ path: 'main.tf.json', mode: 0o644, data: Buffer.from(json) }]).root;
    expect(root.providers.map((p) => p.name)).toEqual(['awsalt', 'google']);
  });

  it('takes no requirement from a provider-defined function, as `terraform providers` lists none for it', () => {
    const tf =
      'locals {\n  t = provider::time::rfc3339_parse("2023-07-25T23:43:16Z")\n}\n\noutput "arn" {\n  value = provider::aws::arn_parse("arn:aws:s3:::b").account_id\n}\n\nresource "null_resource" "x" {}\n';
    const root = extractVersion([{ path: 'main.tf', mode: 0o644, data: Buffer.from(tf) }]).root;
    expect(root.providers.map((p) => p.name)).toEqual(['null']);
  });

  it('leaves out a provider block or declaration of the built-in terraform provider', () => {
    const tf = 'terraform {\n  required_providers {\n    terraform = { source = "terraform.io/builtin/terraform" }\n  }\n}\nprovider "null" {}\n';
    const root = extractVersion([{ path: 'main.tf', mode: 0o644, data: Buffer.from(tf) }]).root;
    expect(root.providers.map((p) => p.name)).toEqual(['null']);
  });

  it('does not let an override change the cached reading of the file it overrides', () => {
    const cache = createExtractCache();
    const files = filesOf(join(FIXTURES, 'implied-overrides'));
    expect(extractVersion(files, cache).root.providers.map((p) => p.name)).toEqual(['awsalt', 'google-beta']);
    const withoutOverride = files.filter((f) => f.path !== 'override.tf');
    expect(extractVersion(withoutOverride, cache).root.providers.map((p) => p.name)).toEqual(['aws', 'google-beta']);
  });
});
