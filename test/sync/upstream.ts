// A modmirror as the upstream a sync test reads: the test's module folders
// (and its mirror.config.yaml) built and served over plain HTTP on 127.0.0.1,
// so what sync sees is what our own build and serve give.

import { expect } from 'vitest';
import type { RunningServer } from '../../src/serve/index.js';
import { runCli, serveMirror, writeFiles } from '../helpers.js';

/** `files` written into `dir`, `modmirror build` there, and `serve` of its dist/; `log` gets each request line. */
export async function startUpstream(dir: string, files: Record<string, string>, log: (line: string) => void = () => {}): Promise<RunningServer> {
  writeFiles(dir, files);
  const built = await runCli(['build'], dir);
  expect(built.code, built.stderr).toBe(0);
  return serveMirror(dir, { log });
}
