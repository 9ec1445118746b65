// The one mirror write (src/transaction.ts) on a real built mirror: a write
// that fails verification, or throws, leaves the live mirror as it was and no
// staging copy behind; one that verifies is swapped in whole.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { expect, it } from 'vitest';
import { MirrorError } from '../src/errors.js';
import { MANIFEST_FILE } from '../src/protocol/paths.js';
import { problemLines, withMirrorWrite } from '../src/transaction.js';
import { mirrorLeftovers, runCli, tempDir, writeFiles } from './helpers.js';

async function builtMirror(): Promise<string> {
  const dir = tempDir();
  writeFiles(dir, { 'mods/acme/thing/aws/1.0.0/main.tf': 'variable "x" {}\n' });
  expect((await runCli(['build', '--modules', 'mods', '--json'], dir)).code).toBe(0);
  return join(dir, 'dist');
}

const failure = (problems: Parameters<typeof problemLines>[0]) => new MirrorError('BUILD_FAILED', `verification failed:\n${problemLines(problems)}`);

it('commits a staged change that verifies, and leaves nothing beside the mirror', async () => {
  const dist = await builtMirror();
  await withMirrorWrite(dist, { seed: true, failure }, (tx) => tx.stage(async (staging) => staging.write('notes.json', '{"hello": 1}\n')));
  expect(readFileSync(join(dist, 'notes.json'), 'utf8')).toBe('{"hello": 1}\n');
  expect(await mirrorLeftovers(dirname(dist))).toEqual([]);
});

it('keeps the live mirror when the staged one fails verification or the write throws', async () => {
  const dist = await builtMirror();
  const manifest = readFileSync(join(dist, MANIFEST_FILE), 'utf8');
  const breakArchive = withMirrorWrite(dist, { seed: true, failure }, (tx) =>
    tx.stage(async (staging) => {
      await staging.write('v1/modules/acme/thing/aws/1.0.0/thing-aws-1.0.0.tar.gz', 'not an archive');
    }),
  );
  await expect(breakArchive).rejects.toThrow(/verification failed:\n.*thing-aws-1.0.0.tar.gz/);
  const throwing = withMirrorWrite(dist, { seed: true, failure }, (tx) =>
    tx.stage(async (staging) => {
      await staging.write('half.json', '{}');
      throw new Error('disk full');
    }),
  );
  await expect(throwing).rejects.toThrow('disk full');
  expect(readFileSync(join(dist, MANIFEST_FILE), 'utf8')).toBe(manifest);
  expect(existsSync(join(dist, 'half.json'))).toBe(false);
  expect(await mirrorLeftovers(dirname(dist))).toEqual([]);
});
