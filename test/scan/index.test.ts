// The scan stage as a whole (src/scan/index.ts): every source of a config
// becomes one sorted list of versions, one entry per module version.

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/index.js';
import { scan } from '../../src/scan/index.js';
import { makeRepo, tempDir, writeFiles } from '../helpers.js';

const configIn = (dir: string, yaml: string) => {
  writeFiles(dir, { 'mirror.config.yaml': yaml });
  return resolveConfig({}, dir);
};

describe('scan', () => {
  it('sorts by module address, then newest version first, and fills module metadata from the config', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'mods/acme/vpc/aws/1.2.0/main.tf': '', 'mods/acme/vpc/aws/1.10.0/main.tf': '', 'mods/acme/dns/aws/0.1.0/main.tf': '' });
    makeRepo(join(dir, 'terraform-aws-zone'), [{ date: '2024-01-01T00:00:00Z', files: { 'main.tf': '' }, tags: ['v0.9.0', 'v1.0.0-rc.1'] }]);
    const config = configIn(
      dir,
      'sources:\n  - folder: mods\n  - git: terraform-aws-zone\n    namespace: acme\n    owner: net-team\nmodules:\n  acme/vpc/aws:\n    verified: true\n',
    );

    const { versions, warnings } = await scan(config);

    expect(versions.map((v) => `${v.address.namespace}/${v.address.name}/${v.address.provider}@${v.version}`)).toEqual([
      'acme/dns/aws@0.1.0',
      'acme/vpc/aws@1.10.0',
      'acme/vpc/aws@1.2.0',
      'acme/zone/aws@1.0.0-rc.1',
      'acme/zone/aws@0.9.0',
    ]);
    expect(warnings).toEqual([]);
    expect(versions[1]!.meta).toEqual({ owner: '', description: '', source: '', verified: true });
    expect(versions[3]!.meta).toEqual({ owner: 'net-team', description: '', source: '', verified: false });
  });

  it('keeps the first of two tags naming one version, and says which one it skipped', async () => {
    const dir = tempDir();
    const repo = makeRepo(join(dir, 'terraform-aws-vpc'), [{ date: '2024-01-01T00:00:00Z', files: { 'main.tf': '' }, tags: ['1.0.0', 'v1.0.0'] }]);
    const config = configIn(dir, 'sources:\n  - git: terraform-aws-vpc\n    namespace: acme\n');

    const { versions, warnings } = await scan(config);

    // for-each-ref lists tags by name: "1.0.0" before "v1.0.0".
    expect(versions.map((v) => v.tag)).toEqual(['1.0.0']);
    expect(warnings).toEqual([`${repo}@v1.0.0: skipping: version 1.0.0 of acme/vpc/aws is already given by ${repo}@1.0.0`]);
  });

  it('refuses one module address given by two sources, naming both', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'mods/acme/vpc/aws/1.0.0/main.tf': '' });
    const repo = makeRepo(join(dir, 'terraform-aws-vpc'), [{ date: '2024-01-01T00:00:00Z', files: { 'main.tf': '' }, tags: ['v2.0.0'] }]);
    const config = configIn(dir, 'sources:\n  - folder: mods\n  - git: terraform-aws-vpc\n    namespace: acme\n');

    await expect(scan(config)).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: `Duplicate module address acme/vpc/aws: it comes from two sources (${join(dir, 'mods')} and ${repo}).`,
    });
  });
});
