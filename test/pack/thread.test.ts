// The build's packing thread runs the compiled worker (lib/pack/worker.js): `npm run build:ts` first, as for every
// test of the CLI. What it packs must be what pack.ts packs on this thread, byte for byte.

import { afterAll, describe, expect, it } from 'vitest';
import { packVersion } from '../../src/pack/index.js';
import { threadPacker } from '../../src/pack/thread.js';
import type { HeldArchive, SourceFile } from '../../src/types.js';
import { tempDir } from '../helpers.js';

describe('threadPacker', () => {
  const packer = threadPacker(tempDir());
  afterAll(() => packer.close());

  it('packs the same bytes as packVersion on this thread, several versions at a time', async () => {
    const shared = Buffer.from(`${'#'.repeat(9000)}\nvariable "x" {}\n`);
    const versions: SourceFile[][] = [
      [
        { path: 'main.tf', mode: 0o644, data: Buffer.from('variable "a" {}\n') },
        { path: 'scripts/run.sh', mode: 0o775, data: Buffer.from('#!/bin/sh\n') },
        { path: 'empty.tf', mode: 0o644, data: Buffer.alloc(0) },
      ],
      [
        // Slices of a larger buffer, as git's reader and Node's pool hand out: only their own bytes are packed.
        { path: 'a.tf', mode: 0o644, data: shared.subarray(9001) },
        { path: 'b.md', mode: 0o644, data: shared.subarray(100, 7000) },
        { path: `examples/${'n'.repeat(140)}.tf`, mode: 0o755, data: Buffer.alloc(300_000, 'z') },
      ],
      [{ path: 'modules/é-ü/读我.md', mode: 0o644, data: Buffer.from('# 读我\n') }],
    ];
    const threaded = await Promise.all(versions.map((files) => packer.pack(files)));
    for (const [i, files] of versions.entries()) {
      const inline = packVersion(files);
      expect(threaded[i]!.sha256, `version ${i}`).toBe(inline.sha256);
      expect((threaded[i] as HeldArchive).data.equals(inline.data), `version ${i}`).toBe(true);
    }
    // The files are left as they were: their bytes were copied to the thread, not moved.
    expect(shared.length).toBe(9017);
    expect(versions[1]![0]!.data.toString()).toBe('variable "x" {}\n');
  });

  it('refuses a pack once closed, rather than leaving it waiting', async () => {
    const closed = threadPacker(tempDir());
    await closed.pack([{ path: 'main.tf', mode: 0o644, data: Buffer.from('x') }]);
    await closed.close();
    await expect(closed.pack([{ path: 'main.tf', mode: 0o644, data: Buffer.from('x') }])).rejects.toThrow(/packing thread was closed/);
  });
});
