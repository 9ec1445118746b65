// Which of a version's files are held in memory, and how the others are read
// again. A version's held files were copied to the packing thread, laid out
// in one tar buffer and compressed from there: a 1 GiB file took 3.2 GB of
// memory. A file from LARGE_FILE up, and every file once a version holds
// HELD_BYTES, is read again in chunks when it is packed instead.

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { MirrorError } from '../errors.js';
import type { LargeSource, SizeLimits, VersionFile } from '../types.js';
import { fileSize } from '../types.js';
import { showName } from './names.js';

/** Most modules' files are far smaller; one this large is rarely a .tf file, and is packed as it is read. */
export const LARGE_FILE = 8 * 1024 * 1024;
/** What one version holds at most before further files are streamed too (a build packs one version at a time). */
export const HELD_BYTES = 64 * 1024 * 1024;

/** Decides, file by file, what a version holds: below LARGE_FILE and within HELD_BYTES in all. */
export function holdBudget(): (size: number) => boolean {
  let held = 0;
  return (size) => {
    if (size >= LARGE_FILE || held + size > HELD_BYTES) return false;
    held += size;
    return true;
  };
}

/** A large file's bytes, in chunks. A git blob comes from a `git cat-file` of its own, which ends with the stream. */
export function openLarge(source: LargeSource): Readable {
  if (source.kind === 'disk') return createReadStream(Buffer.from(source.location));
  const child = spawn('git', ['cat-file', 'blob', source.oid], { cwd: source.gitDir, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.on('close', (code) => {
    if (code !== 0)
      child.stdout.destroy(new MirrorError('GIT_FAILED', `git cat-file blob ${source.oid} in ${source.gitDir} failed (exit ${code}): ${stderr.trim()}`));
  });
  child.stdout.on('close', () => child.kill());
  return child.stdout;
}

/** The sha1 of a large file's bytes, read in chunks: a folder version's identity needs its content. */
export async function digestLarge(source: LargeSource): Promise<string> {
  const hash = createHash('sha1');
  for await (const chunk of openLarge(source)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** A large file read whole: only for what must be read as text (a .tf file, a README), within the per-file bound. */
export async function readLarge(source: LargeSource): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of openLarge(source)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Refuses a version with a file over the per-file bound or more bytes than
 * the per-version one, naming the file, its size and the bound, before
 * anything of it is packed. Counted after .terraformignore and links: what the
 * archive would hold.
 */
export function checkSizes(label: string, files: VersionFile[], limits: SizeLimits): void {
  const hint = 'Leave the file out with .terraformignore, or raise the bound under `limits` in mirror.config.yaml.';
  let total = 0;
  for (const file of files) {
    const size = fileSize(file);
    if (size > limits.file) {
      throw new MirrorError(
        'FILE_TOO_LARGE',
        `${label}: ${showName(file.path)} is ${showSize(size)}, over the per-file bound of ${showSize(limits.file)} (limits.fileSize).`,
        { hint },
      );
    }
    total += size;
  }
  if (total > limits.version) {
    const largest = [...files].sort((a, b) => fileSize(b) - fileSize(a)).slice(0, 3);
    const named = largest.map((f) => `${showName(f.path)} (${showSize(fileSize(f))})`).join(', ');
    throw new MirrorError(
      'VERSION_TOO_LARGE',
      `${label}: its ${files.length} file(s) are ${showSize(total)}, over the per-version bound of ${showSize(limits.version)} (limits.versionSize); the largest: ${named}.`,
      { hint },
    );
  }
}

/** `1.5 GiB (1610612736 bytes)`: readable, and exact for comparing with `ls -l`. */
export function showSize(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  if (unit === 0) return `${bytes} bytes`;
  return `${Number(value.toFixed(1))} ${units[unit]} (${bytes} bytes)`;
}
