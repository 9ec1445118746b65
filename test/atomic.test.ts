import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { writeFileAtomic, writeFileAtomicWith } from '../src/atomic.js';
import { tempDir } from './helpers.js';

it('replaces a file whole, leaving no temp file', async () => {
  const dir = tempDir();
  const file = join(dir, 'data.json');
  writeFileSync(file, 'old');
  await writeFileAtomic(file, 'new');
  await writeFileAtomicWith(file, (temp) => writeFile(temp, 'newer'));
  expect(readFileSync(file, 'utf8')).toBe('newer');
  expect(readdirSync(dir)).toEqual(['data.json']);
});

it('keeps the old file, and no temp file, when the write fails midway', async () => {
  const dir = tempDir();
  const file = join(dir, 'bundle.tar.gz');
  writeFileSync(file, 'old');
  const failing = async (temp: string) => {
    await writeFile(temp, 'half');
    throw new Error('disk full');
  };
  await expect(writeFileAtomicWith(file, failing)).rejects.toThrow('disk full');
  expect(readFileSync(file, 'utf8')).toBe('old');
  expect(readdirSync(dir)).toEqual(['bundle.tar.gz']);
});
