// docs/release-pipelines.md promises that nothing is left writing beside
// `dist/` once a command returns, so a job may delete the folder right
// after. A build that replaces a generation removes the old one with
// `rm -rf`; here that `rm` is made slow (a shim first on PATH), so a command
// that exited before its removal finished would leave `.dist.trash-…` behind.

import { chmodSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { liveGenerationName, spawnCli, tempDir, writeFiles } from '../helpers.js';

it('exits only once the generation a build replaced is removed', async () => {
  const dir = tempDir();
  writeFiles(dir, { 'mods/acme/hello/null/1.0.0/main.tf': 'variable "name" {}\n' });
  const bin = join(dir, 'bin');
  writeFiles(bin, { rm: '#!/bin/sh\nsleep 1\nexec /bin/rm "$@"\n' });
  chmodSync(join(bin, 'rm'), 0o755);
  const env = { PATH: `${bin}:${process.env['PATH'] ?? ''}` };
  expect((await spawnCli(['build', '--modules', 'mods'], dir, env)).code).toBe(0);
  writeFiles(dir, { 'mods/acme/hello/null/1.1.0/main.tf': 'variable "name" {}\n' });

  const rebuilt = await spawnCli(['build', '--modules', 'mods'], dir, env);
  expect(rebuilt.code, rebuilt.stderr).toBe(0);
  // Read the instant the process has exited: no polling.
  const live = liveGenerationName(join(dir, 'dist'));
  expect(readdirSync(dir).filter((name) => name.startsWith('.dist.') && name !== live)).toEqual([]);
});
