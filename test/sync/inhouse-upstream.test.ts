// One modmirror as another's upstream for providers: `sync --provider`
// against `modmirror serve` of a mirror with an in-house provider reads its
// providers.v1 (discovery, versions, download documents with relative URLs),
// checks SHA256SUMS and the signature as Terraform does, and stores the
// packages byte for byte in the provider folder.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/serve/index.js';
import { runCli, tempDir } from '../helpers.js';
import { testKey, signRelease } from '../providers/keys.js';
import { writeReleaseFolder } from '../providers/zips.js';
import { startUpstream } from './upstream.js';

let upstream: RunningServer | undefined;
afterAll(async () => {
  await upstream?.close();
});

describe('sync from a modmirror that publishes in-house providers', () => {
  it('copies the signed packages, checked, into the provider folder', async () => {
    const outside = tempDir('mm-inhouse-upstream-');
    const acme = await testKey(outside, 'Acme');
    await writeReleaseFolder(join(outside, 'releases'), 'widgets', '1.0.0', ['linux_amd64', 'darwin_arm64']);
    await signRelease(join(outside, 'releases'), 'widgets', '1.0.0', acme);
    upstream = await startUpstream(outside, {
      'mirror.config.yaml': `providers:\n  - folder: releases\n    namespace: acme\n    registry: true\n    hostname: registry.example.com\n    keys: [${acme.publicFile}]\n`,
    });

    const inside = tempDir('mm-inhouse-downstream-');
    const r = await runCli(
      [
        'sync',
        '--from',
        upstream.url,
        '--provider',
        'acme/widgets',
        '--platform',
        'linux_amd64',
        '--platform',
        'darwin_arm64',
        '--providers-into',
        'providers',
      ],
      inside,
    );
    expect(r.stderr).not.toContain('error');
    expect(r.code).toBe(0);
    const host = new URL(upstream.url).host;
    const folder = join(inside, 'providers', host, 'acme/widgets');
    expect(
      readdirSync(folder)
        .filter((f) => f.endsWith('.zip'))
        .sort(),
    ).toEqual(['terraform-provider-widgets_1.0.0_darwin_arm64.zip', 'terraform-provider-widgets_1.0.0_linux_amd64.zip']);
    for (const zip of ['terraform-provider-widgets_1.0.0_linux_amd64.zip', 'terraform-provider-widgets_1.0.0_darwin_arm64.zip']) {
      expect(readFileSync(join(folder, zip)).equals(readFileSync(join(outside, 'releases', zip)))).toBe(true);
    }
  }, 120_000);
});
