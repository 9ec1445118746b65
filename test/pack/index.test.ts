import { Header, list, Pack, ReadEntry } from 'tar';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ARCHIVE_MTIME, packVersion } from '../../src/pack/index.js';
import { nameFromBytes } from '../../src/scan/names.js';
import type { SourceFile } from '../../src/types.js';

/** The tar that tar's own portable Pack writes for the files: what every mirror's archives were before packVersion laid them out itself. */
async function tarPackOf(files: SourceFile[]): Promise<Buffer> {
  const pack = new Pack({ portable: true, mtime: ARCHIVE_MTIME, noDirRecurse: true });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    pack
      .on('data', (c: Buffer) => chunks.push(c))
      .on('end', () => resolve(Buffer.concat(chunks)))
      .on('error', reject);
  });
  for (const file of [...files].sort((a, b) => (a.path < b.path ? -1 : 1))) {
    const header = new Header({
      path: file.path,
      type: 'File',
      mode: file.mode & 0o111 ? 0o755 : 0o644,
      size: file.data.length,
      mtime: ARCHIVE_MTIME,
      uid: 0,
      gid: 0,
    });
    const entry = new ReadEntry(header);
    entry.end(file.data);
    pack.add(entry);
  }
  pack.end();
  return done;
}

async function entries(data: Buffer): Promise<{ path: string; mode: number; mtime: string; uid: number; uname: string }[]> {
  const found: { path: string; mode: number; mtime: string; uid: number; uname: string }[] = [];
  await new Promise<void>((resolve, reject) => {
    const parser = list({
      onReadEntry: (e) => found.push({ path: e.path, mode: e.mode ?? 0, mtime: e.mtime?.toISOString() ?? '', uid: e.uid ?? 0, uname: e.uname ?? '' }),
    });
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
    const one = packVersion(files);
    const two = packVersion([...files].reverse());
    expect(one.data.equals(two.data)).toBe(true);
    expect(one.sha256).toBe(two.sha256);
    expect(one.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('sorts entries, fixes the mtime, drops owners and normalises modes', async () => {
    const found = await entries(packVersion(files).data);
    expect(found).toEqual([
      { path: 'a.tf', mode: 0o644, mtime: '2000-01-01T00:00:00.000Z', uid: 0, uname: '' },
      { path: 'scripts/run.sh', mode: 0o755, mtime: '2000-01-01T00:00:00.000Z', uid: 0, uname: '' },
      { path: 'z.tf', mode: 0o644, mtime: '2000-01-01T00:00:00.000Z', uid: 0, uname: '' },
    ]);
  });

  it('changes the digest when a byte changes', async () => {
    const changed = files.map((f) => (f.path === 'a.tf' ? { ...f, data: Buffer.from('b') } : f));
    expect(packVersion(changed).sha256).not.toBe(packVersion(files).sha256);
  });

  it("lays out the tar byte for byte as tar's own Pack does, long and non-ASCII paths included", async () => {
    const awkward: SourceFile[] = [
      { path: 'empty.tf', mode: 0o644, data: Buffer.alloc(0) },
      { path: 'exactly-one-block.txt', mode: 0o644, data: Buffer.alloc(512, 'x') },
      { path: 'one-over.txt', mode: 0o755, data: Buffer.alloc(513, 'y') },
      { path: 'modules/é-ü/读我.md', mode: 0o644, data: Buffer.from('# 读我\n') },
      // Over 100 bytes: split into the ustar prefix.
      { path: `${'deep/'.repeat(25)}main.tf`, mode: 0o644, data: Buffer.from('variable "x" {}\n') },
      // A name over 100 bytes with no folder to split at: only a pax header holds it.
      { path: `examples/${'n'.repeat(140)}.tf`, mode: 0o644, data: Buffer.from('output "y" { value = 1 }\n') },
      { path: `${'p'.repeat(200)}/${'q'.repeat(120)}.tf`, mode: 0o755, data: Buffer.alloc(70_000, 'z') },
    ];
    const ours = gunzipSync(packVersion(awkward).data);
    expect(ours.equals(await tarPackOf(awkward))).toBe(true);
    expect((await entries(packVersion(awkward).data)).map((e) => e.path)).toEqual([...awkward.map((f) => f.path)].sort());
  });

  it('writes a name that is not UTF-8 as its own bytes, in a header whose checksum holds', async () => {
    const raw = (...parts: (string | number)[]) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.of(p))));
    const names = [raw('bad', 0xff, '.txt'), raw(`${'p'.repeat(120)}/q`, 0xe9, '.tf'), raw('n'.repeat(140), 0xfe, '.tf')];
    const files = names.map((name) => ({ path: nameFromBytes(name), mode: 0o644, data: Buffer.from('x') }));
    const tar = gunzipSync(packVersion(files).data);
    const warnings: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const parser = list({ onwarn: (code: string) => warnings.push(code), onReadEntry: () => {} });
      parser.on('end', resolve).on('error', reject);
      Readable.from(tar).pipe(parser);
    });
    expect(warnings).toEqual([]);
    // In the ustar name field (short), across the prefix and name fields (split), in a pax path (no folder to split at).
    expect(tar.subarray(0, 100).indexOf(raw('bad', 0xff, '.txt', 0))).toBe(0);
    expect(tar.includes(raw(`q`, 0xe9, '.tf', 0))).toBe(true);
    expect(tar.includes(raw(' path=', 'n'.repeat(140), 0xfe, '.tf\n'))).toBe(true);
  });

  it("gives zlib's own bytes whatever the size of its output pieces", async () => {
    const shapes: SourceFile[][] = [
      [{ path: 'main.tf', mode: 0o644, data: Buffer.from('variable "x" {}\n') }],
      // Incompressible: the gzip is nearly the size of the tar, its one output piece.
      [{ path: 'blob.bin', mode: 0o644, data: randomBytes(40_000) }],
      // Larger than the largest piece: several, gathered.
      [
        { path: 'big.txt', mode: 0o644, data: Buffer.alloc(600_000, 'a') },
        { path: 'noise.bin', mode: 0o644, data: randomBytes(300_000) },
      ],
    ];
    for (const files of shapes) {
      const tar = await tarPackOf(files);
      const archive = packVersion(files).data;
      expect(archive.equals(gzipSync(tar, { level: 6 }))).toBe(true);
      expect(gunzipSync(archive).equals(tar)).toBe(true);
    }
  });
});
