import { list } from 'tar';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { packVersion } from '../src/pack.js';

async function entries(data: Buffer): Promise<{ path: string; mode: number; mtime: string; uid: number; uname: string }[]> {
  const found: { path: string; mode: number; mtime: string; uid: number; uname: string }[] = [];
  await new Promise<void>((resolve, reject) => {
    const parser = list({ onReadEntry: (e) => found.push({ path: e.path, mode: e.mode ?? 0, mtime: e.mtime?.toISOString() ?? '', uid: e.uid ?? 0, uname: e.uname ?? '' }) });
    parser.on('end', resolve).on('error', reject);
    Readable.from(data).pipe(parser);
  });
  return found;
}

describe('packVersion', () => {
  const files = [
    { path: 'z.tf', mode: 0o600, data: Buffer.from('z') },
    { path: 'scripts/run.sh', mode: 0o775, data: Buffer.from('#!/bin/sh\n') },
    { path: 'a.tf', mode: 0o644, data: Buffer.from('a') },
  ];

  it('gives the same bytes for the same files in any order', async () => {
    const one = await packVersion(files);
    const two = await packVersion([...files].reverse());
    expect(one.data.equals(two.data)).toBe(true);
    expect(one.sha256).toBe(two.sha256);
    expect(one.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('sorts entries, fixes the mtime, drops owners and normalises modes', async () => {
    const found = await entries((await packVersion(files)).data);
    expect(found).toEqual([
      { path: 'a.tf', mode: 0o644, mtime: '2000-01-01T00:00:00.000Z', uid: 0, uname: '' },
      { path: 'scripts/run.sh', mode: 0o755, mtime: '2000-01-01T00:00:00.000Z', uid: 0, uname: '' },
      { path: 'z.tf', mode: 0o644, mtime: '2000-01-01T00:00:00.000Z', uid: 0, uname: '' },
    ]);
  });

  it('changes the digest when a byte changes', async () => {
    const changed = files.map((f) => (f.path === 'a.tf' ? { ...f, data: Buffer.from('b') } : f));
    expect((await packVersion(changed)).sha256).not.toBe((await packVersion(files)).sha256);
  });
});
