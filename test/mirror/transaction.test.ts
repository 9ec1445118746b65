// The one mirror write (src/mirror/transaction.ts) on a real built mirror: a write
// that fails verification, or throws, leaves the live mirror as it was and no
// staging copy behind; one that verifies is swapped in whole.

import { existsSync, readFileSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MirrorError } from '../../src/errors.js';
import { MANIFEST_FILE } from '../../src/protocol/paths.js';
import { moduleStateFile } from '../../src/mirror/manifest.js';
import { problemLines, withMirrorWrite, type MirrorView } from '../../src/mirror/transaction.js';
import { verifyMirror } from '../../src/verify/index.js';
import { liveGenerationName, mirrorLeftovers, runCli, tempDir, treeOf, writeFiles } from '../helpers.js';

async function builtMirror(): Promise<string> {
  const dir = tempDir();
  writeFiles(dir, { 'mods/acme/thing/aws/1.0.0/main.tf': 'variable "x" {}\n' });
  expect((await runCli(['build', '--modules', 'mods', '--json'], dir)).code).toBe(0);
  return join(dir, 'dist');
}

const check = (mirror: MirrorView) => verifyMirror(mirror);
const failure = (problems: Parameters<typeof problemLines>[0]) => new MirrorError('MIRROR_INVALID', `verification failed:\n${problemLines(problems)}`);

it('commits a staged change that verifies, and leaves nothing beside the mirror', async () => {
  const dist = await builtMirror();
  await withMirrorWrite(dist, { start: 'copy', check, failure }, (tx) => tx.stage(async (staging) => staging.write('notes.json', '{"hello": 1}\n')));
  expect(readFileSync(join(dist, 'notes.json'), 'utf8')).toBe('{"hello": 1}\n');
  expect(await mirrorLeftovers(dirname(dist))).toEqual([]);
});

it('keeps the live mirror when the staged one fails verification or the write throws', async () => {
  const dist = await builtMirror();
  const manifest = readFileSync(join(dist, MANIFEST_FILE), 'utf8');
  const breakArchive = withMirrorWrite(dist, { start: 'copy', check, failure }, (tx) =>
    tx.stage(async (staging) => {
      await staging.write('v1/modules/acme/thing/aws/1.0.0/thing-aws-1.0.0.tar.gz', 'not an archive');
    }),
  );
  await expect(breakArchive).rejects.toThrow(/verification failed:\n.*thing-aws-1.0.0.tar.gz/);
  const throwing = withMirrorWrite(dist, { start: 'copy', check, failure }, (tx) =>
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

it("writes again at once while the last write's replaced mirror is still being removed", async () => {
  // A server's writes share one process id. Here the last write's old mirror is still on disk,
  // as a large one is while its background `rm -rf` runs; the next swap must not need its name.
  const dist = await builtMirror();
  const removing = join(dirname(dist), `.dist.old-${process.pid}`);
  for (let d = 0; d < 40; d++) writeFiles(join(removing, `d${d}`), Object.fromEntries(Array.from({ length: 500 }, (_, f) => [`f${f}`, ''])));
  await withMirrorWrite(dist, { start: 'copy', check, failure }, (tx) => tx.stage(async (staging) => staging.write('notes.json', '{"again": 1}\n')));
  expect(readFileSync(join(dist, 'notes.json'), 'utf8')).toBe('{"again": 1}\n');
  expect(await mirrorLeftovers(dirname(dist))).toEqual([]);
});

it('after a crash between the renames, puts back the mirror set aside, never a spare an older modmirror was removing', async () => {
  const dist = await builtMirror();
  const parent = dirname(dist);
  const manifest = readFileSync(join(dist, MANIFEST_FILE), 'utf8');
  writeFiles(join(parent, '.dist.old-spare-4242'), { [MANIFEST_FILE]: '{"half": "removed"}\n' });
  writeFiles(join(parent, '.dist.trash-4242-0a0b0c0d'), { [MANIFEST_FILE]: '{"half": "removed"}\n' });
  renameSync(dist, join(parent, '.dist.old-4242-01020304'));
  await withMirrorWrite(dist, { start: 'copy', check, failure }, (tx) => tx.stage(async (staging) => staging.write('notes.json', '{}\n')));
  expect(readFileSync(join(dist, MANIFEST_FILE), 'utf8')).toBe(manifest);
  expect(await mirrorLeftovers(parent)).toEqual([]);
});

it('refuses, naming both digests, a write that changes or drops a published version without a record in the ledger', async () => {
  const dist = await builtMirror();
  const STATE = moduleStateFile('acme/thing/aws');
  const text = readFileSync(join(dist, STATE), 'utf8');
  const root = readFileSync(join(dist, MANIFEST_FILE), 'utf8');
  const state = JSON.parse(text);
  const [entry] = state.versions;
  const other = 'f'.repeat(64);
  const writeState = (value: unknown, allow = {}) =>
    withMirrorWrite(dist, { start: 'copy', check, failure, allow }, (tx) => tx.stage((staging) => staging.write(STATE, JSON.stringify(value))));
  const changed = { ...state, versions: [{ ...entry, sha256: other }] };
  await expect(writeState(changed)).rejects.toThrow(`acme/thing/aws 1.0.0: published sha256 ${entry.sha256}, this write ${other}`);
  // Allowed but not recorded is refused too: the record is what makes it deliberate.
  await expect(writeState(changed, { replace: true })).rejects.toThrow('published sha256');
  const removes = `acme/thing/aws 1.0.0: published with sha256 ${entry.sha256}, and this write removes it`;
  await expect(writeState({ ...state, versions: [] }, { replace: true })).rejects.toThrow(removes);
  // So is a write that drops the module's state altogether.
  await expect(
    withMirrorWrite(dist, { start: 'copy', check, failure, allow: { remove: true } }, (tx) => tx.stage((staging) => staging.remove(STATE))),
  ).rejects.toThrow(removes);
  const recorded = { ...changed, forced: [{ module: 'acme/thing/aws', version: '1.0.0', previous_sha256: entry.sha256, sha256: other, at: 'now' }] };
  // Recorded but not allowed: refused.
  await expect(writeState(recorded)).rejects.toThrow('published sha256');
  expect(readFileSync(join(dist, STATE), 'utf8')).toBe(text);
  expect(readFileSync(join(dist, MANIFEST_FILE), 'utf8')).toBe(root);
  expect(await mirrorLeftovers(dirname(dist))).toEqual([]);
});

describe('a change in place', () => {
  const key = 'acme/thing/aws';
  const inPlace = { start: 'in-place' as const, failure, check: (mirror: MirrorView) => verifyMirror(mirror, { modules: [key] }) };

  it('is checked through a view of the live files with its own in front, then moved in; an unchanged write is no change', async () => {
    const dist = await builtMirror();
    const generation = liveGenerationName(dist);
    const detail = 'v1/modules/acme/thing/aws/1.0.0/index.json';
    const same = readFileSync(join(dist, detail));
    const seen: string[] = [];
    const changed = await withMirrorWrite(
      dist,
      { ...inPlace, check: async (mirror) => (seen.push(readFileSync(mirror.at('notes.json'), 'utf8')), verifyMirror(mirror, { modules: [key] })) },
      (tx) =>
        tx.stage(async (staging) => {
          await staging.write('notes.json', '{"hello": 1}\n');
          await staging.write(detail, same);
          return staging.changed;
        }),
    );
    expect(seen).toEqual(['{"hello": 1}\n']);
    expect(changed).toEqual(['notes.json']);
    expect(readFileSync(join(dist, 'notes.json'), 'utf8')).toBe('{"hello": 1}\n');
    expect(liveGenerationName(dist)).toBe(generation);
    expect(await mirrorLeftovers(dirname(dist))).toEqual([]);
  });

  it('removes a folder but what it writes into it again, and leaves the live mirror as it was when its check fails', async () => {
    const dist = await builtMirror();
    writeFiles(dist, { 'extra/a.json': '{}\n', 'extra/b.json': '{}\n', 'extra/deep/c.json': '{}\n' });
    await withMirrorWrite(dist, inPlace, (tx) =>
      tx.stage(async (staging) => {
        await staging.remove('extra');
        await staging.write('extra/b.json', '{"again": true}\n');
      }),
    );
    expect(Object.keys(treeOf(join(dist, 'extra')))).toEqual(['b.json']);
    expect(existsSync(join(dist, 'extra/deep'))).toBe(false);
    expect(readFileSync(join(dist, 'extra/b.json'), 'utf8')).toBe('{"again": true}\n');

    const manifest = readFileSync(join(dist, MANIFEST_FILE), 'utf8');
    const broken = withMirrorWrite(dist, inPlace, (tx) =>
      tx.stage((staging) => staging.write('v1/modules/acme/thing/aws/1.0.0/thing-aws-1.0.0.tar.gz', 'not an archive')),
    );
    await expect(broken).rejects.toThrow(/verification failed:\n.*thing-aws-1.0.0.tar.gz/);
    expect(readFileSync(join(dist, MANIFEST_FILE), 'utf8')).toBe(manifest);
    expect((await runCli(['verify', '--mirror', 'dist'], dirname(dist))).code).toBe(0);
    expect(await mirrorLeftovers(dirname(dist))).toEqual([]);
  });
});
