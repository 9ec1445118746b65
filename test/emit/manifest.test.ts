// The manifest is written a module at a time; its bytes must stay those of
// jsonText over the whole object, which earlier mirrors were written with.

import { describe, expect, it } from 'vitest';
import { manifestChunks } from '../../src/emit/index.js';
import type { Manifest, ManifestVersion } from '../../src/mirror/manifest.js';
import { jsonText } from '../../src/mirror/staging.js';

const version = (v: string, tag: string): ManifestVersion => ({
  version: v,
  tag,
  archive: `v1/modules/acme/vpc/aws/${v}/vpc-aws-${v}.tar.gz`,
  sha256: 'ab'.repeat(32),
  size: 1234,
  published_at: '2024-01-02T03:04:05.000Z',
});

function streamed(manifest: Manifest): string {
  const { modules, ...head } = manifest;
  return [
    ...manifestChunks(
      head,
      Object.entries(modules).map(([key, m]) => [key, m.versions]),
    ),
  ].join('');
}

describe('manifestChunks', () => {
  it('gives the bytes of jsonText over the whole manifest', () => {
    const manifest: Manifest = {
      format: 1,
      generator: 'modmirror 0.1.0',
      forced: [{ module: 'acme/vpc/aws', version: '1.0.0', previous_sha256: 'cd'.repeat(32), sha256: 'ab'.repeat(32), at: '2024-05-01T00:00:00.000Z' }],
      modules: {
        'acme/vpc/aws': { versions: [version('1.1.0', 'v1.1.0'), version('1.0.0', 'tag with "quotes"\nand a newline')] },
        'acme/zone/aws': { versions: [] },
        'zeta/net/google': { versions: [version('0.1.0-rc.1+build.5', '0.1.0-rc.1+build.5')] },
      },
    };
    expect(streamed(manifest)).toBe(jsonText(manifest));
    const { forced: _forced, ...unforced } = manifest;
    expect(streamed(unforced)).toBe(jsonText(unforced));
  });

  it('writes an empty mirror as jsonText does', () => {
    const empty: Manifest = { format: 1, generator: 'modmirror 0.1.0', modules: {} };
    expect(streamed(empty)).toBe(jsonText(empty));
  });
});
