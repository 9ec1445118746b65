// The CLI's main in the test's process (helpers.ts's runCli, which most
// tests use) answers as the installed binary does (spawnCli): the same
// output on each stream and the same exit code, in the folder and with the
// environment given, which it then puts back.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { runCli, spawnCli, tempDir, writeFiles, type CliResult } from './helpers.js';

it('gives what the binary gives: output, errors and exit codes, in the folder and environment given', async () => {
  const dir = tempDir();
  writeFiles(dir, { 'mods/acme/thing/aws/1.0.0/main.tf': 'variable "size" {\n  default = 1\n}\n', 'mods/acme/thing/aws/1.0.0/README.md': '# Thing\n' });
  const cwd = process.cwd();
  const home = process.env['HOME'];
  const commands: [string[], Record<string, string>][] = [
    [['--version'], {}],
    [['build', '--frob'], {}],
    [['biuld'], {}],
    [['verify', '--mirror', 'nowhere'], {}],
    [['hosting', 'nginx', '--mirror', 'dist', '--listen', '127.0.0.1:8080'], {}],
    // A passphrase variable that is not set (usage error), then a password variable that is set for the call.
    [['key', 'create', '--name', 'Someone', '--out', 'keys', '--passphrase-env', 'MM_TEST_PASSPHRASE'], {}],
    [
      ['user', 'create', '--username', 'alice', '--email', 'alice@example.com', '--password-env', 'MM_TEST_PASSWORD', '--data', 'data-%s'],
      { MM_TEST_PASSWORD: 'correct horse battery staple' },
    ],
  ];
  for (const [args, env] of commands) {
    const inProcess = await runCli(
      args.map((a) => a.replace('%s', 'in')),
      dir,
      env,
    );
    const spawned = await spawnCli(
      args.map((a) => a.replace('%s', 'out')),
      dir,
      env,
    );
    // A new user's id is random.
    const same = (r: CliResult) => ({ ...r, stdout: r.stdout.replace(/"user-\w+"/, '"user-ID"') });
    expect(same(inProcess), args.join(' ')).toEqual(same(spawned));
    expect(process.cwd()).toBe(cwd);
    expect(process.env['HOME']).toBe(home);
    expect(process.env['MM_TEST_PASSWORD']).toBeUndefined();
  }
  // One run of each wrote its own data folder.
  expect(readFileSync(join(dir, 'data-in/users.json'), 'utf8')).toContain('alice');
  expect(readFileSync(join(dir, 'data-out/users.json'), 'utf8')).toContain('alice');

  const built = await runCli(['build', '--modules', 'mods', '--json'], dir);
  const again = await spawnCli(['build', '--modules', 'mods', '--mirror', 'dist2', '--json'], dir);
  expect(built.code).toBe(0);
  expect(again.code).toBe(0);
  expect(built.stderr).toBe(again.stderr);
  expect(Object.keys(JSON.parse(built.stdout)).sort()).toEqual(Object.keys(JSON.parse(again.stdout)).sort());
});

it('describes each flag of team, token and edition set in --help, and the editions edition set takes', async () => {
  const flags = { team: ['--org', '--name', '--members', '--data'], token: ['--user', '--team', '--org', '--data'], edition: ['--data'] };
  for (const [command, named] of Object.entries(flags)) {
    const help = await runCli([command, '--help']);
    expect(help.code).toBe(0);
    // A line of its own: the flag, its value, then what it is.
    for (const flag of named) expect(help.stdout, `${command} ${flag}`).toMatch(new RegExp(`^  ${flag} [A-Z,]+ +[a-z]`, 'm'));
  }
  expect((await runCli(['edition', '--help'])).stdout).toMatch(/^ {2}NAME +one of self-hosted, free, standard, plus \(default: self-hosted\)/m);
  expect((await runCli(['--help'])).stdout).toMatch(/^ {2}edition +Management data: declare the edition \(self-hosted, free, standard, plus\)$/m);
});
