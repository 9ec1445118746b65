// One version's pipeline (src/build/version.ts) through the CLI, on inputs
// that once failed silently or crashed the whole build: file names that are
// not UTF-8, sources whose archive would be empty, a folder with no .tf file,
// and files nested deeper than the HCL readers go (issue 26).

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { git, runCli, tempDir, writeFiles, type CliResult } from '../helpers.js';

const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8'));

/** A name made of text and raw bytes: `name('bad', 0xff, '.txt')`. */
const name = (...parts: (string | number)[]) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.of(p))));
const LONG = 'd'.repeat(120);
/** Needs the ustar name field only. */
const BAD = name('bad', 0xff, '.txt');
/** Longer than ustar holds: a pax path. */
const BAD_LONG = name(`${LONG}/f`, 0xfe, 0xff, `-${LONG}.txt`);
/** Split between ustar's prefix and name fields. */
const BAD_DIR = name('p', 0xe9, '/q', 0xe9, '.tf');

function writeRaw(dir: string, path: Buffer, content: string): void {
  const at = Buffer.concat([Buffer.from(`${dir}/`), path]);
  mkdirSync(at.subarray(0, at.lastIndexOf('/')), { recursive: true });
  writeFileSync(at, content);
}

/**
 * Each entry's name as bytes and its content, read straight from the tar as
 * Go's archive/tar (go-getter) reads it: a pax `path` wins over the ustar
 * prefix and name fields. tar's own reader decodes names as UTF-8.
 */
function archiveEntries(file: string): { name: string; text: string }[] {
  const tar = gunzipSync(readFileSync(file));
  const field = (at: number, size: number) => {
    const bytes = tar.subarray(at, at + size);
    const nul = bytes.indexOf(0);
    return nul === -1 ? bytes : bytes.subarray(0, nul);
  };
  const entries: { name: string; text: string }[] = [];
  let paxPath: Buffer | undefined;
  for (let at = 0; at + 512 <= tar.length && tar[at] !== 0;) {
    const size = parseInt(field(at + 124, 12).toString('latin1'), 8);
    const type = String.fromCharCode(tar[at + 156]!);
    const body = tar.subarray(at + 512, at + 512 + size);
    if (type === 'x') {
      const record = /(?:^|\n)\d+ path=/.exec(body.toString('latin1'));
      if (record) {
        const start = record.index + record[0].length;
        paxPath = body.subarray(start, body.indexOf(10, start));
      }
    } else {
      const prefix = field(at + 345, 155);
      const ustar = prefix.length > 0 ? Buffer.concat([prefix, Buffer.from('/'), field(at, 100)]) : field(at, 100);
      // Shown with each byte that is not ASCII as \xNN, so a comparison shows which bytes differ.
      entries.push({ name: shown(paxPath ?? ustar), text: body.toString('utf8') });
      paxPath = undefined;
    }
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return entries;
}

const shown = (bytes: Buffer) => [...bytes].map((b) => (b < 0x80 ? String.fromCharCode(b) : `\\x${b.toString(16)}`)).join('');

const ARCHIVE = (dist: string, module: string, version: string) => {
  const [, n, p] = module.split('/');
  return join(dist, 'v1/modules', module, version, `${n}-${p}-${version}.tar.gz`);
};

const EXPECTED_ENTRIES = [
  { name: 'bad\\xff.txt', text: 'bad\n' },
  { name: shown(BAD_LONG), text: 'long\n' },
  { name: 'main.tf', text: 'variable "a" {}\n' },
  { name: 'p\\xe9/q\\xe9.tf', text: 'variable "q" {}\n' },
];

function writeBadNames(dir: string): void {
  writeFiles(dir, { 'main.tf': 'variable "a" {}\n' });
  writeRaw(dir, BAD, 'bad\n');
  writeRaw(dir, BAD_LONG, 'long\n');
  writeRaw(dir, BAD_DIR, 'variable "q" {}\n');
}

describe('file names that are not UTF-8', () => {
  const dir = tempDir();
  const dist = join(dir, 'dist');
  let build: CliResult;

  beforeAll(async () => {
    writeBadNames(join(dir, 'mods/n/x/aws/1.0.0'));
    writeFiles(dir, { 'mods/n/other/aws/1.0.0/main.tf': 'variable "o" {}\n' });
    build = await runCli(['build', '--modules', 'mods', '--json'], dir);
  });

  it("are in a folder build's archive under their own bytes, beside every other file", () => {
    expect(build.code).toBe(0);
    expect(JSON.parse(build.stdout).warnings).toEqual([]);
    expect(archiveEntries(ARCHIVE(dist, 'n/x/aws', '1.0.0'))).toEqual(EXPECTED_ENTRIES);
    expect(readJson(join(dist, 'v1/modules/n/x/aws/1.0.0/index.json')).root.empty).toBe(false);
  });

  it("are in the archive `publish --source` makes, the same bytes as the build's", async () => {
    writeBadNames(join(dir, 'drop/n/y/aws/1.0.0'));
    const published = await runCli(['publish', '--source', 'drop/n/y/aws/1.0.0', '--json'], dir);
    expect(published.stderr).toBe('');
    expect(published.code).toBe(0);
    expect(archiveEntries(ARCHIVE(dist, 'n/y/aws', '1.0.0'))).toEqual(EXPECTED_ENTRIES);
    // The same files give the same archive whatever the address.
    expect(readFileSync(ARCHIVE(dist, 'n/y/aws', '1.0.0'))).toEqual(readFileSync(ARCHIVE(dist, 'n/x/aws', '1.0.0')));
  });

  it('are kept by a git source, under their own bytes', async () => {
    const repo = join(dir, 'repo');
    mkdirSync(repo);
    git(repo, ['init', '-q']);
    writeBadNames(repo);
    git(repo, ['add', '-A']);
    git(repo, ['commit', '-qm', 'names']);
    git(repo, ['tag', 'v1.0.0']);
    writeFiles(dir, { 'git.config.yaml': 'sources:\n  - git: repo\n    namespace: n\n    name: g\n    provider: aws\n' });
    const result = await runCli(['build', '--config', 'git.config.yaml', '--mirror', 'dist-git', '--json'], dir);
    expect(result.code).toBe(0);
    expect(archiveEntries(ARCHIVE(join(dir, 'dist-git'), 'n/g/aws', '1.0.0'))).toEqual(EXPECTED_ENTRIES);
  });

  it('unpack under their own bytes with GNU tar', () => {
    const into = join(dir, 'unpacked');
    mkdirSync(into);
    execFileSync('tar', ['-xzf', ARCHIVE(dist, 'n/x/aws', '1.0.0'), '-C', into]);
    expect(readdirSync(into, { encoding: 'buffer' }).map(shown).sort()).toEqual(['bad\\xff.txt', LONG, 'main.tf', 'p\\xe9']);
    expect(readFileSync(Buffer.concat([Buffer.from(`${into}/`), BAD_LONG]), 'utf8')).toBe('long\n');
  });
});

describe('a version that would be mirrored empty', () => {
  const dir = tempDir();
  const dist = join(dir, 'dist');

  it('fails when the source has files and none would be in the archive; the others are built', async () => {
    writeFiles(dir, {
      'mods/n/ignored/aws/1.0.0/main.tf': 'variable "a" {}\n',
      'mods/n/ignored/aws/1.0.0/.terraformignore': '*\n',
      'mods/n/ok/aws/1.0.0/main.tf': 'variable "a" {}\n',
    });
    const result = await runCli(['build', '--modules', 'mods', '--json'], dir);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout).errors).toEqual([
      { code: 'VERSION_READ_FAILED', message: expect.stringMatching(/^n\/ignored\/aws 1\.0\.0 .*has 2 file\(s\) but none would be in its archive/) },
    ]);
    expect(existsSync(join(dist, 'v1/modules/n/ignored'))).toBe(false);
    expect(existsSync(ARCHIVE(dist, 'n/ok/aws', '1.0.0'))).toBe(true);
  });

  it('fails when its folder holds no file at all, in a build and in a publish alike', async () => {
    writeFiles(dir, { 'bare/n/ok/aws/1.0.0/main.tf': 'variable "a" {}\n' });
    mkdirSync(join(dir, 'bare/n/bare/aws/1.0.0/modules'), { recursive: true });
    const built = await runCli(['build', '--modules', 'bare', '--mirror', 'dist-bare', '--json'], dir);
    expect(built.code).toBe(1);
    expect(JSON.parse(built.stdout).errors).toEqual([
      { code: 'VERSION_READ_FAILED', message: expect.stringMatching(/^n\/bare\/aws 1\.0\.0 .*holds no files: its archive would be empty\./) },
    ]);

    const published = await runCli(['publish', '--source', 'bare/n/bare/aws/1.0.0', '--mirror', 'dist-bare'], dir);
    expect(published.code).toBe(1);
    expect(published.stderr).toBe(
      `error: ${join(dir, 'bare/n/bare/aws/1.0.0')} holds no files: its archive would be empty.\n` +
        "hint: Give the module's files (its .tf files at the root); an empty archive is never published.\n",
    );
    expect(existsSync(join(dir, 'dist-bare/v1/modules/n/bare'))).toBe(false);
  });

  it('is mirrored with a warning when its folder has files but no .tf file at its root', async () => {
    writeFiles(dir, { 'readme-only/n/docs/aws/1.0.0/README.md': '# Docs\n', 'readme-only/n/docs/aws/1.0.0/modules/a/main.tf': 'variable "a" {}\n' });
    const result = await runCli(['build', '--modules', 'readme-only', '--mirror', 'dist-readme'], dir);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^warning: \S+\/readme-only\/n\/docs\/aws\/1\.0\.0: holds no \.tf or \.tf\.json file at its root: mirrored all the same/m);
    expect(archiveEntries(ARCHIVE(join(dir, 'dist-readme'), 'n/docs/aws', '1.0.0')).map((e) => e.name)).toEqual(['README.md', 'modules/a/main.tf']);
    // From the cache too.
    const again = await runCli(['build', '--modules', 'readme-only', '--mirror', 'dist-readme2', '--json'], dir);
    expect(JSON.parse(again.stdout)).toMatchObject({ cached: 1, warnings: [expect.stringMatching(/holds no \.tf or \.tf\.json file at its root/)] });
  });
});

describe('files nested deeper than the readers go', () => {
  const dir = tempDir();
  const DEEP = {
    'n/tuple/aws/1.0.0/main.tf': `variable "d" {\n  default = ${'['.repeat(1000)}${']'.repeat(1000)}\n}\n`,
    'n/paren/aws/1.0.0/main.tf': `locals {\n  x = ${'('.repeat(1000)}1${')'.repeat(1000)}\n}\n`,
    // JSON.parse reads any depth; writing the default back out did not.
    'n/json/aws/1.0.0/main.tf.json': `{"variable": {"d": {"default": ${'['.repeat(100_000)}${']'.repeat(100_000)}}}}`,
    // HCL2 fails on the first line, so the folder is read again as HCL1, whose lists nest here.
    'n/legacy/aws/1.0.0/main.tf': `a.b = 1\nvariable "d" {\n  default = ${'['.repeat(100_000)}${']'.repeat(100_000)}\n}\n`,
  };
  const PROBLEMS = {
    'n/tuple/aws': /^main\.tf:2:\d+: Nested more than 128 levels deep/,
    'n/paren/aws': /^main\.tf:2:\d+: Nested more than 128 levels deep/,
    'n/json/aws': /^main\.tf\.json:1:\d+: Nested more than 128 levels deep/,
    'n/legacy/aws': /^main\.tf:1:\d+: /,
  };

  beforeAll(() => {
    writeFiles(join(dir, 'mods'), { ...DEEP, 'n/ok/aws/1.0.0/main.tf': 'variable "a" {}\n' });
  });

  it('are a file:line:column problem of their version alone: mirrored with what could be read', async () => {
    const result = await runCli(['build', '--modules', 'mods', '--json'], dir);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary.versions).toBe(5);
    expect(Object.fromEntries(summary.partial.map((p: { module: string; problems: string[] }) => [p.module, p.problems]))).toEqual(
      Object.fromEntries(Object.entries(PROBLEMS).map(([module, problem]) => [module, [expect.stringMatching(problem)]])),
    );
    expect(readJson(join(dir, 'dist/v1/modules/n/ok/aws/1.0.0/index.json')).root.inputs.map((i: { name: string }) => i.name)).toEqual(['a']);
  });

  it('are left out with --strict, naming file:line:column; the other modules are built', async () => {
    const result = await runCli(['build', '--modules', 'mods', '--strict', '--mirror', 'strict', '--json'], dir);
    expect(result.code).toBe(1);
    const summary = JSON.parse(result.stdout);
    expect(summary.errors.map((e: { message: string }) => e.message.split(' ')[0]).sort()).toEqual(Object.keys(PROBLEMS).sort());
    for (const error of summary.errors) expect(error.message).toMatch(/\): main\.tf(\.json)?:\d+:\d+: /);
    expect(existsSync(ARCHIVE(join(dir, 'strict'), 'n/ok/aws', '1.0.0'))).toBe(true);
    for (const module of Object.keys(PROBLEMS)) expect(existsSync(join(dir, 'strict/v1/modules', module))).toBe(false);
  });
});
