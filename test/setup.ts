// Run before every test file (vitest.config.ts, vitest.unit.config.ts setupFiles).

import { afterAll } from 'vitest';
import { removeTempDirs } from './helpers.js';

// Last, after the file's own afterAll hooks have stopped its servers: the temp folders it made.
afterAll(removeTempDirs);
