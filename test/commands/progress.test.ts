// Progress on a terminal: bundle and key create (build's is in
// test/build/index.test.ts), run in a real
// pseudo-terminal (util-linux `script`), show one line rewritten in place
// and clear it before their summary; with stderr not a terminal (a CI log)
// or with --json they print none.

import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runCli, tempDir, writeFiles } from '../helpers.js';

const dir = tempDir('mm-progress-');
const env = { MODMIRROR_SIGNING_PASSPHRASE: 'correct horse' };
const CLEAR = '\r\x1b[K';

/** The command's output as a terminal receives it (stdout and stderr together, as `script` records them). */
function onTerminal(args: string[]): string {
  const command = [process.execPath, join(ROOT, 'bin/modmirror.js'), ...args].map((a) => `'${a}'`).join(' ');
  return execFileSync('script', ['-qec', command, '/dev/null'], { cwd: dir, env: { ...process.env, ...env }, encoding: 'utf8' });
}

beforeAll(() => {
  writeFiles(dir, { 'mods/acme/net/aws/1.0.0/main.tf': 'variable "cidr" {}\n', 'mods/acme/net/aws/1.1.0/main.tf': 'variable "cidr" {}\n' });
});

describe('progress on a terminal', () => {
  it('bundle shows what it is doing, then clears it before the summary', async () => {
    expect((await runCli(['build', '--modules', 'mods'], dir)).code).toBe(0);
    const bundled = onTerminal(['bundle', '--out', 'b.tar.gz']);
    expect(bundled.startsWith(`${CLEAR}Checking the mirror`)).toBe(true);
    expect(bundled).toContain(`${CLEAR}Wrote b.tar.gz: `);
  });

  it('key create shows the time it has taken while it makes the key', () => {
    const made = onTerminal(['key', 'create', '--name', 'Progress', '--algorithm', 'curve25519', '--out', 'keys']);
    expect(made).toMatch(/^\r\x1b\[KMaking the curve25519 key: \d+ s\r\x1b\[KKey ID [0-9A-F]{16}/);
  });

  it('prints none where stderr is not a terminal, nor with --json on one', async () => {
    const plain = await runCli(['bundle', '--out', 'plain.tar.gz'], dir);
    expect(plain.code).toBe(0);
    expect(plain.stderr).toBe('');
    const json = onTerminal(['bundle', '--out', 'json.tar.gz', '--json']);
    expect(json).not.toContain('\x1b[K');
    expect(JSON.parse(json).files).toBeGreaterThan(0);
  });
});
