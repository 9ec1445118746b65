// The config's size bounds through the CLI (src/config/limits.ts,
// src/scan/large.ts): a version over a bound fails alone with a message
// naming the file, its size and the bound; a version with large files under
// the bounds is streamed into the same archive packVersion makes.

import { readdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { packVersion } from '../../src/pack/index.js';
import { archiveFile } from '../../src/protocol/paths.js';
import { git, runCli, tempDir, writeFiles, type CliResult } from '../helpers.js';

const MiB = 1024 * 1024;
type Summary = { versions: number; archives: number; errors: { code: string; message: string }[] };

describe('build with limits', () => {
  let dir: string;
  let result: CliResult;
  let summary: Summary;
  const big = Buffer.alloc(10 * MiB, 'x');
  big.write('start', 0);
  big.write('end', big.length - 3);

  beforeAll(async () => {
    dir = tempDir();
    writeFiles(dir, {
      'modules/acme/app/aws/1.0.0/main.tf': 'variable "a" {}\n',
      'modules/acme/app/aws/1.1.0/main.tf': 'variable "a" {}\n',
      'modules/acme/app/aws/1.2.0/main.tf': 'variable "a" {}\n',
      'modules/acme/app/aws/1.2.0/.terraformignore': 'huge.img\n',
      'modules/acme/many/aws/1.0.0/main.tf': 'variable "b" {}\n',
      'mirror.config.yaml': ['sources:', '  - folder: modules', 'limits:', '  fileSize: 16MiB', '  versionSize: 24MiB', ''].join('\n'),
    });
    // 1.1.0: one file over the per-file bound (sparse: no disk, no memory). 1.2.0: the same file, ignored.
    for (const v of ['1.1.0', '1.2.0']) {
      writeFileSync(join(dir, `modules/acme/app/aws/${v}/huge.img`), '');
      truncateSync(join(dir, `modules/acme/app/aws/${v}/huge.img`), 17 * MiB);
    }
    // 1.0.0: a large file under the bounds, streamed. many 1.0.0: three such files, over the per-version bound.
    writeFileSync(join(dir, 'modules/acme/app/aws/1.0.0/lambda.zip'), big);
    for (const n of [1, 2, 3]) writeFileSync(join(dir, `modules/acme/many/aws/1.0.0/part${n}.bin`), big);
    result = await runCli(['build', '--json', '--mirror', join(dir, 'dist')], dir);
    if (!result.stdout) throw new Error(result.stderr);
    summary = JSON.parse(result.stdout);
  });

  it('fails only the versions over a bound, naming the file, its size and the bound, and exits 1', () => {
    expect(result.code).toBe(1);
    expect(summary).toMatchObject({ versions: 2, archives: 2 });
    const messages = summary.errors.map((e) => e.message).sort();
    expect(messages).toHaveLength(2);
    expect(messages[0]).toMatch(
      /^acme\/app\/aws 1\.1\.0 .*: huge\.img is 17 MiB \(17825792 bytes\), over the per-file bound of 16 MiB \(16777216 bytes\) \(limits\.fileSize\)\./,
    );
    expect(messages[0]).toMatch(/hint: Leave the file out with \.terraformignore, or raise the bound under `limits` in mirror\.config\.yaml\./);
    expect(messages[1]).toMatch(
      /^acme\/many\/aws 1\.0\.0 .*: its 4 file\(s\) are 30 MiB \(31457296 bytes\), over the per-version bound of 24 MiB \(25165824 bytes\) \(limits\.versionSize\); the largest: part1\.bin \(10 MiB/,
    );
  });

  it('streams a large file into the archive packVersion makes of the same files', () => {
    const archive = readFileSync(join(dir, 'dist', archiveFile({ namespace: 'acme', name: 'app', provider: 'aws' }, '1.0.0')));
    const expected = packVersion([
      { path: 'main.tf', mode: 0o644, data: Buffer.from('variable "a" {}\n') },
      { path: 'lambda.zip', mode: 0o644, data: big },
    ]);
    expect(archive.equals(expected.data)).toBe(true);
    // Packed into the cache's spool, then moved into the cache: nothing is left behind.
    expect(readdirSync(join(dir, '.modmirror-cache/versions/incoming'))).toEqual([]);
  });

  it('counts what the archive holds: an ignored file over the bound is no reason to fail', () => {
    expect(summary.errors.some((e) => e.message.includes('1.2.0'))).toBe(false);
  });

  it('does the same for a git version, whose large blob is never held', async () => {
    const repo = join(tempDir(), 'terraform-aws-blob');
    writeFiles(repo, { 'main.tf': 'variable "c" {}\n' });
    writeFileSync(join(repo, 'lambda.zip'), big);
    git(repo, ['init', '-q']);
    git(repo, ['add', '.']);
    git(repo, ['commit', '-q', '-m', 'one']);
    git(repo, ['tag', 'v1.0.0']);
    writeFileSync(join(repo, 'lambda.zip'), Buffer.concat([big, big]));
    git(repo, ['commit', '-q', '-am', 'two']);
    git(repo, ['tag', 'v2.0.0']);
    const config = ['sources:', `  - git: ${repo}`, '    namespace: acme', 'limits:', '  fileSize: 16MiB', ''].join('\n');
    writeFileSync(join(repo, '..', 'mirror.config.yaml'), config);
    const out = join(repo, '..', 'dist');
    const run = await runCli(['build', '--json', '--mirror', out], join(repo, '..'));
    const built: Summary = JSON.parse(run.stdout);
    expect(run.code).toBe(1);
    expect(built.errors.map((e) => e.message)).toEqual([
      expect.stringMatching(/^acme\/blob\/aws 2\.0\.0 .*: lambda\.zip is 20 MiB \(20971520 bytes\), over the per-file bound of 16 MiB/),
    ]);
    const archive = readFileSync(join(out, archiveFile({ namespace: 'acme', name: 'blob', provider: 'aws' }, '1.0.0')));
    const expected = packVersion([
      { path: 'main.tf', mode: 0o644, data: Buffer.from('variable "c" {}\n') },
      { path: 'lambda.zip', mode: 0o644, data: big },
    ]);
    expect(archive.equals(expected.data)).toBe(true);
  });
});

describe('publish with limits', () => {
  it('refuses a version over a bound the same way, and streams one under it, leaving no spooled archive', async () => {
    const dir = tempDir();
    const big = Buffer.alloc(9 * MiB, 'y');
    writeFiles(dir, {
      'mirror.config.yaml': ['sources:', '  - folder: modules', 'limits:', '  fileSize: 10MiB', ''].join('\n'),
      'modules/acme/pub/aws/1.0.0/main.tf': 'variable "a" {}\n',
      'modules/acme/pub/aws/2.0.0/main.tf': 'variable "a" {}\n',
    });
    writeFileSync(join(dir, 'modules/acme/pub/aws/1.0.0/lambda.zip'), big);
    writeFileSync(join(dir, 'modules/acme/pub/aws/2.0.0/lambda.zip'), Buffer.concat([big, big]));
    const out = join(dir, 'dist');
    const refused = await runCli(['publish', '--source', 'modules/acme/pub/aws/2.0.0', '--mirror', out, '--new-mirror'], dir);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/lambda\.zip is 18 MiB \(18874368 bytes\), over the per-file bound of 10 MiB \(10485760 bytes\) \(limits\.fileSize\)/);
    const dry = await runCli(['publish', '--source', 'modules/acme/pub/aws/1.0.0', '--mirror', out, '--new-mirror', '--dry-run'], dir);
    expect(dry.code, dry.stderr).toBe(0);
    expect(readdirSync(join(dir, '.modmirror-cache/versions/incoming'))).toEqual([]);
    const done = await runCli(['publish', '--source', 'modules/acme/pub/aws/1.0.0', '--mirror', out, '--new-mirror'], dir);
    expect(done.code, done.stderr).toBe(0);
    const archive = readFileSync(join(out, archiveFile({ namespace: 'acme', name: 'pub', provider: 'aws' }, '1.0.0')));
    const expected = packVersion([
      { path: 'main.tf', mode: 0o644, data: Buffer.from('variable "a" {}\n') },
      { path: 'lambda.zip', mode: 0o644, data: big },
    ]);
    expect(archive.equals(expected.data)).toBe(true);
    expect(readdirSync(join(dir, '.modmirror-cache/versions/incoming'))).toEqual([]);
  });
});
