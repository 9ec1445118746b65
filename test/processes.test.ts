import { spawnSync } from 'node:child_process';
import { expect, it } from 'vitest';
import { isProcessAlive } from '../src/processes.js';

it('tells a running process from a finished one and from no process at all', () => {
  expect(isProcessAlive(process.pid)).toBe(true);
  const finished = spawnSync(process.execPath, ['-e', '0']).pid;
  expect(isProcessAlive(finished)).toBe(false);
  for (const pid of [0, -1, Number.NaN, 1.5]) expect(isProcessAlive(pid), String(pid)).toBe(false);
});
