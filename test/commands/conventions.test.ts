// What every command has in common, through the CLI as a user meets it:
// the mirror is named with --mirror (the spellings before it still work,
// with a one-line note); --json prints one JSON object on one line; and a
// path that is not there is a usage error, exit 2, whichever command meets it.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir, writeFiles } from '../helpers.js';

let dir: string;

beforeAll(async () => {
  dir = tempDir();
  writeFiles(dir, {
    'mods/acme/hello/null/1.0.0/main.tf': 'variable "name" {}\n',
    // Not the same bytes as 1.0.0: two versions sharing one cached archive (one inode) make bundle hang, a bug of its own.
    'mods/acme/hello/null/1.1.0/main.tf': 'variable "name" {\n  type = string\n}\n',
    'next/main.tf': 'variable "name" {}\n',
  });
  const built = await runCli(['build', '--modules', 'mods', '--mirror', 'dist'], dir);
  expect(built.code, built.stderr).toBe(0);
  expect(built.stderr).toBe('');
});

/** The one JSON object a --json command prints: alone on its one line of stdout, nothing on stderr. */
function onlyJson(result: { code: number; stdout: string; stderr: string }): Record<string, unknown> {
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  expect(result.stdout.endsWith('\n')).toBe(true);
  expect(result.stdout.trimEnd().split('\n')).toHaveLength(1);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

describe('--mirror names the mirror on every command', () => {
  it('is taken by every command that reads or writes a mirror, with no note', async () => {
    const results = [
      await runCli(['build', '--modules', 'mods', '--mirror', 'second'], dir),
      await runCli(
        ['publish', '--source', 'next', '--namespace', 'acme', '--name', 'next', '--provider', 'null', '--version', '1.0.0', '--mirror', 'second'],
        dir,
      ),
      await runCli(['deprecate', 'acme/hello/null', '1.0.0', '--reason', 'use 1.1.0', '--mirror', 'second'], dir),
      await runCli(['verify', '--mirror', 'second'], dir),
      await runCli(['hosting', 'nginx', '--mirror', 'second'], dir),
      await runCli(['bundle', '--mirror', 'second', '--out', 'second.tar.gz'], dir),
      await runCli(['unbundle', 'second.tar.gz', '--mirror', 'third'], dir),
      await runCli(['usage', '--deprecated', '--mirror', 'third'], dir),
    ];
    for (const r of results) expect([r.code, r.stderr]).toEqual([0, '']);
    expect(results[3]!.stdout).toBe('second/ is consistent.\n');
    expect(results[4]!.stdout).toContain(`root "${join(dir, 'second')}";`);
    expect(existsSync(join(dir, 'third/v1/modules/acme/next/null/1.0.0/download'))).toBe(true);
  });

  it('keeps the spellings before it working, each with a one-line note on stderr', async () => {
    const cases: [string[], string][] = [
      [['build', '--modules', 'mods', '--out', 'old'], 'note: modmirror build --out is now --mirror; --out still works.'],
      [
        ['publish', '--source', 'next', '--namespace', 'acme', '--name', 'next', '--provider', 'null', '--version', '1.0.0', '--out', 'old'],
        'note: modmirror publish --out is now --mirror; --out still works.',
      ],
      [['deprecate', 'acme/hello/null', '1.0.0', '--reason', 'old', '--out', 'old'], 'note: modmirror deprecate --out is now --mirror; --out still works.'],
      [['verify', 'old'], 'note: modmirror verify old is now modmirror verify --mirror old; the old form still works.'],
      [['hosting', 'caddy', '--dir', 'old'], 'note: modmirror hosting --dir is now --mirror; --dir still works.'],
      [['bundle', '--dir', 'old', '--out', 'old.tar.gz'], 'note: modmirror bundle --dir is now --mirror; --dir still works.'],
      [['unbundle', 'old.tar.gz', '--out', 'older'], 'note: modmirror unbundle --out is now --mirror; --out still works.'],
      [['usage', '--dir', 'older'], 'note: modmirror usage --dir is now --mirror; --dir still works.'],
    ];
    for (const [args, note] of cases) {
      const r = await runCli(args, dir);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      expect(r.stderr, args.join(' ')).toBe(`${note}\n`);
    }
    // serve and push take their old spellings too (here they then stop at a mirror that is not there).
    const serve = await runCli(['serve', '--dir', 'nowhere'], dir);
    expect(serve.stderr.split('\n')[0]).toBe('note: modmirror serve --dir is now --mirror; --dir still works.');
    const push = await runCli(['push', 'nowhere', 's3://bucket/prefix'], dir);
    expect(push.stderr.split('\n')[0]).toBe(
      'note: modmirror push nowhere s3://bucket/prefix is now modmirror push s3://bucket/prefix --mirror nowhere; the old form still works.',
    );
  });

  it('refuses two names for the mirror at once', async () => {
    for (const args of [
      ['build', '--modules', 'mods', '--mirror', 'a', '--out', 'b'],
      ['serve', '--mirror', 'dist', '--dir', 'dist'],
      ['verify', 'dist', '--mirror', 'dist'],
      ['push', 'dist', 's3://bucket/prefix', '--mirror', 'dist'],
    ]) {
      const r = await runCli(args, dir);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(/both name the mirror: give --mirror only/);
    }
  });

  it('lists --mirror in the help of every command that takes a mirror', async () => {
    for (const command of ['build', 'publish', 'deprecate', 'verify', 'serve', 'hosting', 'bundle', 'unbundle', 'usage', 'push']) {
      const help = await runCli([command, '--help']);
      expect(help.stdout, command).toMatch(/^ {2}--mirror (DIR|s3)/m);
      expect(help.stdout, command).not.toMatch(/^ {2}--dir /m);
      if (command !== 'bundle') expect(help.stdout, command).not.toMatch(/^ {2}--out /m);
    }
  });
});

describe('a mirror in a bucket', () => {
  it('is refused, as a usage error saying what to do, by what writes a mirror in a folder only', async () => {
    const env = { AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'x', AWS_CONFIG_FILE: '/dev/null', AWS_SHARED_CREDENTIALS_FILE: '/dev/null' };
    // No store is reached: the endpoint is a closed port, and the refusal comes first.
    const bucket = ['--mirror', 's3://mirror/reg', '--endpoint', 'http://127.0.0.1:9', '--path-style'];
    const unbundled = await runCli(['unbundle', join(dir, 'none.tar.gz'), ...bucket.slice(0, 2)], dir, env);
    expect([unbundled.code, unbundled.stderr]).toEqual([
      2,
      expect.stringContaining('unbundle into the folder, then modmirror push s3://mirror/reg/ --mirror DIR'),
    ]);
    writeFiles(dir, { 'release/terraform-provider-x_1.0.0_SHA256SUMS': '' });
    const provider = await runCli(['publish', '--provider-release', 'release', '--namespace', 'acme', '--type', 'x', ...bucket], dir, env);
    expect([provider.code, provider.stderr]).toEqual([2, expect.stringContaining('then modmirror push it to the bucket')]);
  });
});

describe('--json', () => {
  it('prints one JSON object on one line for bundle, unbundle, deprecate and hosting', async () => {
    const bundled = onlyJson(await runCli(['bundle', '--mirror', 'dist', '--out', 'json.tar.gz', '--json'], dir));
    expect(bundled).toMatchObject({ mirror: join(dir, 'dist'), out: join(dir, 'json.tar.gz'), versions: 2, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });

    const unbundled = onlyJson(await runCli(['unbundle', 'json.tar.gz', '--mirror', 'json-inside', '--json'], dir));
    expect(unbundled).toMatchObject({ mirror: join(dir, 'json-inside'), added: 2, versions: 2, modules: 1 });

    const deprecated = onlyJson(await runCli(['deprecate', 'acme/hello/null', '1.1.0', '--reason', 'try 1.0.0', '--mirror', 'json-inside', '--json'], dir));
    expect(deprecated).toEqual({
      mirror: join(dir, 'json-inside'),
      module: 'acme/hello/null',
      version: '1.1.0',
      deprecation: { reason: 'try 1.0.0', link: null },
      changed: true,
    });
    const again = onlyJson(await runCli(['deprecate', 'acme/hello/null', '1.1.0', '--undo', '--mirror', 'json-inside', '--json'], dir));
    expect(again).toMatchObject({ deprecation: null, changed: true });

    const nginx = onlyJson(await runCli(['hosting', 'nginx', '--mirror', 'json-inside', '--listen', '127.0.0.1:8080', '--json'], dir));
    expect(nginx).toMatchObject({ host: 'nginx', mirror: join(dir, 'json-inside'), listen: { host: '127.0.0.1', port: 8080 }, baseUrl: '', warnings: [] });
    expect(nginx['config']).toBe((await runCli(['hosting', 'nginx', '--mirror', 'json-inside', '--listen', '127.0.0.1:8080'], dir)).stdout);
  });

  it("puts hosting's warnings in the object rather than on stderr", async () => {
    const unbuilt = onlyJson(await runCli(['hosting', 'cloudfront', '--mirror', 'not-built-yet', '--json'], dir));
    expect(unbuilt['warnings']).toEqual([expect.stringMatching(/holds no built mirror yet/)]);
    expect(unbuilt).not.toHaveProperty('listen');
  });

  it('is taken by the management and key commands too', async () => {
    const data = join(dir, 'data');
    expect(onlyJson(await runCli(['user', 'create', '--username', 'ann', '--email', 'ann@example.com', '--data', data, '--json'], dir))).toHaveProperty('id');
    expect(
      onlyJson(await runCli(['org', 'create', '--name', 'acme', '--email', 'ops@example.com', '--owner', 'ann', '--data', data, '--json'], dir)),
    ).toHaveProperty('id');
    expect(onlyJson(await runCli(['token', 'create', '--user', 'ann', '--data', data, '--json'], dir))).toEqual({
      token: expect.any(String),
      id: expect.stringMatching(/^at-/),
      expires: null,
    });
    expect(onlyJson(await runCli(['edition', 'set', 'free', '--data', data, '--json'], dir))).toEqual({ edition: 'free' });
    expect(onlyJson(await runCli(['signing-key', 'rotate', '--data', data, '--json'], dir))).toEqual({ file: expect.stringContaining(data) });
  });
});

describe('a path that is not there', () => {
  it('is a usage error (exit 2) on every command, before any work', async () => {
    const cases: [string[], RegExp][] = [
      [['build', '--modules', 'nope'], /"\S*nope" \(--modules\) does not exist/],
      [['build', '--config', 'nope.yaml'], /The config file "\S*nope\.yaml" does not exist/],
      [['publish', '--source', 'nope', '--namespace', 'a', '--name', 'b', '--provider', 'c', '--version', '1.0.0'], /The folder "\S*nope" does not exist/],
      [
        ['publish', '--source', 'next', '--namespace', 'a', '--name', 'b', '--provider', 'c', '--version', '1.0.0', '--mirror', 'nope'],
        /There is no mirror at/,
      ],
      [['publish', '--provider-release', 'nope', '--namespace', 'a', '--type', 'b'], /The folder "\S*nope" does not exist/],
      [['deprecate', 'acme/hello/null', '1.0.0', '--reason', 'x', '--mirror', 'nope'], /There is no built mirror at nope/],
      [['verify', '--mirror', 'nope'], /There is no built mirror at nope/],
      [['serve', '--mirror', 'nope', '--port', '0'], /There is no built mirror at nope/],
      [['bundle', '--mirror', 'nope', '--out', 'x.tar.gz'], /There is no built mirror at nope/],
      [['bundle', '--out', 'x.tar.gz', '--since', 'nope.json'], /Cannot read the --since base \S*nope\.json: it does not exist/],
      [['bundle', '--out', 'nope/x.tar.gz'], /The folder of --out \S* does not exist/],
      [['unbundle', 'nope.tar.gz'], /The bundle \S*nope\.tar\.gz does not exist/],
      [['push', 's3://bucket/prefix', '--mirror', 'nope'], /There is no built mirror at nope/],
      [['usage', '--deprecated', '--mirror', 'nope'], /holds no built mirror/],
      [['usage', '--from-log', 'nope.log'], /The access log "nope\.log" \(--from-log\) does not exist/],
      [
        ['user', 'create', '--username', 'bo', '--email', 'bo@example.com', '--password-file', 'nope', '--data', join(dir, 'data')],
        /Cannot read --password-file "nope"/,
      ],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(args, dir);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(message);
      expect(r.stderr, args.join(' ')).toMatch(/^hint: /m);
    }
    expect(existsSync(join(dir, 'nope'))).toBe(false);
  });

  it('is told apart from a failure: a folder verify can read but holds no mirror is a problem it found (exit 1)', async () => {
    const r = await runCli(['verify', '--mirror', 'mods'], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/manifest\.json: missing: this is not a built mirror/);
  });
});
