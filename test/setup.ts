// Run before every test file (vitest.config.ts, vitest.unit.config.ts setupFiles).

import { afterAll } from 'vitest';
import { removeTempDirs, stopServers } from './helpers.js';

// Last, after the file's own afterAll hooks: the servers it left running, then the temp folders it made.
afterAll(async () => {
  await stopServers();
  await removeTempDirs();
});
