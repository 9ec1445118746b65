// The streaming packer (src/pack/stream.ts) must give packVersion's bytes for
// the same files, whether a file is held or read from disk or git as it is
// packed: published archives' sha256 must not change with the way they are packed.

import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { Parser, type ReadEntry } from 'tar';
import { describe, expect, it } from 'vitest';
import { packVersion } from '../../src/pack/index.js';
import { packVersionToFile } from '../../src/pack/stream.js';
import { nameFromBytes } from '../../src/scan/names.js';
import type { LargeFile, SourceFile, VersionFile } from '../../src/types.js';
import { git, tempDir } from '../helpers.js';

const MiB = 1024 * 1024;

/** A file's bytes as a large file on disk, read again as it is packed. */
function onDisk(dir: string, file: SourceFile, i: number): LargeFile {
  const location = join(dir, `f${i}`);
  writeFileSync(location, file.data);
  return { path: file.path, mode: file.mode, size: file.data.length, source: { kind: 'disk', location: Buffer.from(location) } };
}

/** Deterministic inputs of many shapes: empty, block-edge sizes, long and non-UTF-8 names, text and noise, several MiB. */
function inputs(): SourceFile[][] {
  const text = (n: number) => Buffer.from('variable "x" { default = 1 }\n'.repeat(Math.ceil(n / 29)).slice(0, n));
  return [
    [{ path: 'main.tf', mode: 0o644, data: text(100) }],
    [
      { path: 'empty', mode: 0o644, data: Buffer.alloc(0) },
      { path: 'b511', mode: 0o755, data: randomBytes(511) },
      { path: 'b512', mode: 0o644, data: randomBytes(512) },
      { path: 'b513', mode: 0o644, data: randomBytes(513) },
    ],
    [
      { path: `examples/${'n'.repeat(140)}/main.tf`, mode: 0o644, data: text(5000) },
      { path: nameFromBytes(Buffer.from([0x6e, 0xff, 0x2e, 0x62, 0x69, 0x6e])), mode: 0o644, data: randomBytes(70_000) },
      { path: 'modules/é/读我.md', mode: 0o644, data: Buffer.from('# 读我\n') },
    ],
    [
      { path: 'main.tf', mode: 0o644, data: text(2000) },
      { path: 'lambda.zip', mode: 0o644, data: randomBytes(9 * MiB + 123) },
      { path: 'data/zeros.bin', mode: 0o644, data: Buffer.alloc(12 * MiB) },
      { path: 'data/text.txt', mode: 0o644, data: text(3 * MiB + 7) },
    ],
  ];
}

describe('packVersionToFile', () => {
  it("gives packVersion's bytes for the same files, held or read from disk", async () => {
    const dir = tempDir();
    for (const [v, files] of inputs().entries()) {
      const expected = packVersion(files);
      // Every file held, then every file on disk, then every other one.
      const ways: VersionFile[][] = [files, files.map((f, i) => onDisk(dir, f, i)), files.map((f, i) => (i % 2 ? onDisk(dir, f, i) : f))];
      for (const [w, way] of ways.entries()) {
        const archive = await packVersionToFile(way, join(dir, `v${v}-${w}.tar.gz`));
        const bytes = readFileSync(archive.file);
        expect(bytes.equals(expected.data), `input ${v}, way ${w}`).toBe(true);
        expect(archive.sha256).toBe(expected.sha256);
        expect(archive.size).toBe(expected.data.length);
      }
    }
  });

  it("gives packVersion's bytes for a git blob read as it is packed", async () => {
    const repo = tempDir();
    git(repo, ['init', '-q']);
    const data = randomBytes(3 * MiB);
    writeFileSync(join(repo, 'blob'), data);
    const oid = git(repo, ['hash-object', '-w', 'blob']).trim();
    const archive = await packVersionToFile(
      [{ path: 'x.bin', mode: 0o644, size: data.length, source: { kind: 'git', gitDir: repo, oid } }],
      join(repo, 'out.tar.gz'),
    );
    expect(readFileSync(archive.file).equals(packVersion([{ path: 'x.bin', mode: 0o644, data }]).data)).toBe(true);
  });

  it('round-trips a 64 MiB file exactly', async () => {
    const dir = tempDir();
    const big = join(dir, 'disk.img');
    // Noise at both ends of a sparse middle: a wrong offset or a lost chunk shows in the digest.
    writeFileSync(big, randomBytes(MiB));
    truncateSync(big, 64 * MiB);
    const source = readFileSync(big);
    randomBytes(MiB).copy(source, 63 * MiB);
    writeFileSync(big, source);
    const digest = createHash('sha256').update(source).digest('hex');
    const archive = await packVersionToFile(
      [
        { path: 'main.tf', mode: 0o644, data: Buffer.from('variable "a" {}\n') },
        { path: 'images/disk.img', mode: 0o644, size: source.length, source: { kind: 'disk', location: Buffer.from(big) } },
      ],
      join(dir, 'out.tar.gz'),
    );
    const found: Record<string, { size: number; sha256: string }> = {};
    const parser = new Parser({
      onReadEntry: (entry: ReadEntry) => {
        const hash = createHash('sha256');
        let size = 0;
        entry.on('data', (c: Buffer) => (hash.update(c), (size += c.length)));
        entry.on('end', () => (found[entry.path] = { size, sha256: hash.digest('hex') }));
      },
    });
    await pipeline(createReadStream(archive.file), createGunzip(), parser);
    expect(found['images/disk.img']).toEqual({ size: 64 * MiB, sha256: digest });
    expect(found['main.tf']?.size).toBe(16);
    expect(archive.sha256).toBe(
      packVersion([
        { path: 'main.tf', mode: 0o644, data: Buffer.from('variable "a" {}\n') },
        { path: 'images/disk.img', mode: 0o644, data: source },
      ]).sha256,
    );
  });

  it('fails naming a file that changed size while it was packed, and leaves no archive', async () => {
    const dir = tempDir();
    const path = join(dir, 'grows');
    writeFileSync(path, Buffer.alloc(1000));
    const target = join(dir, 'out.tar.gz');
    await expect(
      packVersionToFile([{ path: 'grows.bin', mode: 0o644, size: 500, source: { kind: 'disk', location: Buffer.from(path) } }], target),
    ).rejects.toThrow(/grows\.bin changed while it was packed/);
    expect(() => readFileSync(target)).toThrow();
  });
});
