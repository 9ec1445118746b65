// Format 3 on disk: each module's truth in `state/NS/NAME.PROVIDER.json`, the
// root in manifest.json; read back as one manifest, whole or in part, with
// each module's ledger records after the root's.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { moduleOfStateFile, moduleStateFile, moduleStatesIn, readManifest, recentVersions } from '../../src/mirror/manifest.js';
import { tempDir } from '../helpers.js';

const version = (v: string, at = '2024-01-02T03:04:05.000Z') => ({
  version: v,
  tag: v,
  archive: `v1/modules/acme/vpc/aws/${v}/vpc-aws-${v}.tar.gz`,
  sha256: 'ab'.repeat(32),
  size: 1234,
  published_at: at,
});

function write(dir: string, rel: string, value: unknown): void {
  mkdirSync(join(dir, rel, '..'), { recursive: true });
  writeFileSync(join(dir, rel), `${JSON.stringify(value, null, 2)}\n`);
}

describe('module states', () => {
  it('name each module by a path that gives its key back, and only such paths', () => {
    expect(moduleStateFile('acme/vpc-x/aws')).toBe('state/acme/vpc-x.aws.json');
    expect(moduleOfStateFile('state/acme/vpc-x.aws.json')).toBe('acme/vpc-x/aws');
    for (const other of ['state/acme/vpc.json', 'state/acme/x/vpc.aws.json', 'manifest.json', 'v1/modules/acme/vpc/aws/versions'])
      expect(moduleOfStateFile(other), other).toBeUndefined();
  });

  it('read back as one manifest, whole or for the modules asked, the ledger of each after the root', () => {
    const dir = tempDir();
    const removal = { provider: 'example.com/acme/widgets', version: '0.1.0', archives: { linux_amd64: 'cd'.repeat(32) }, at: '2024-01-01T00:00:00Z' };
    write(dir, 'manifest.json', { format: 3, generator: 'test', base_url: '', removed: [removal] });
    const forced = { module: 'acme/vpc/aws', version: '1.0.0', previous_sha256: 'ef'.repeat(32), sha256: 'ab'.repeat(32), at: '2024-01-03T00:00:00Z' };
    write(dir, moduleStateFile('acme/vpc/aws'), { format: 3, module: 'acme/vpc/aws', versions: [version('1.0.0')], forced: [forced] });
    const gone = { module: 'beta/dns/aws', version: '2.0.0', sha256: '12'.repeat(32), at: '2024-01-04T00:00:00Z' };
    write(dir, moduleStateFile('beta/dns/aws'), { format: 3, module: 'beta/dns/aws', versions: [], removed: [gone] });

    expect(moduleStatesIn(dir)).toEqual(['acme/vpc/aws', 'beta/dns/aws']);
    expect(moduleStatesIn(dir, 'beta')).toEqual(['beta/dns/aws']);
    const whole = readManifest(dir)!;
    expect(Object.keys(whole.modules)).toEqual(['acme/vpc/aws', 'beta/dns/aws']);
    expect(whole.forced).toEqual([forced]);
    expect(whole.removed).toEqual([removal, gone]);
    const part = readManifest(dir, ['acme/vpc/aws', 'acme/none/aws'])!;
    expect(Object.keys(part.modules)).toEqual(['acme/vpc/aws']);
    expect(part.removed).toEqual([removal]);
  });

  it('refuse a state that names another module, naming its file', () => {
    const dir = tempDir();
    write(dir, 'manifest.json', { format: 3, generator: 'test', base_url: '' });
    write(dir, moduleStateFile('acme/vpc/aws'), { format: 3, module: 'acme/other/aws', versions: [] });
    expect(() => readManifest(dir)).toThrow(/state\/acme\/vpc\.aws\.json" is unreadable: it names the module "acme\/other\/aws"/);
  });

  it('keep the most recent versions over a write of some modules, without the rows of those it rewrote', () => {
    const previous = [
      { module: 'acme/a/aws', version: '1.0.0', published_at: '2024-01-05T00:00:00Z' },
      { module: 'acme/b/aws', version: '1.0.0', published_at: '2024-01-04T00:00:00Z' },
    ];
    const rewritten = [{ module: 'acme/b/aws', versions: [version('2.0.0', '2024-01-06T00:00:00Z')] }];
    expect(recentVersions(rewritten, previous, 2)).toEqual([
      { module: 'acme/b/aws', version: '2.0.0', published_at: '2024-01-06T00:00:00Z' },
      { module: 'acme/a/aws', version: '1.0.0', published_at: '2024-01-05T00:00:00Z' },
    ]);
  });
});
