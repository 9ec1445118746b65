import { configDefaults, defineConfig } from 'vitest/config';
import { ISOLATED } from './vitest.config.js';

// The unit tier (`npm run test:unit`): pure code, imported from src/ as it is
// (no build step), with no git, Go, nginx, Chromium or child process, so it
// runs in seconds while editing. `npm test` runs these and everything else.
const UNIT = [
  'test/architecture.test.ts',
  'test/atomic.test.ts',
  'test/concurrency.test.ts',
  'test/config/limits.test.ts',
  'test/config/upstream.test.ts',
  'test/version-order.test.ts',
  'test/protocol/**/*.test.ts',
  'test/extract/**/*.test.ts',
  'test/http/**/*.test.ts',
  'test/browse/readme-renderer.test.ts',
  'test/bundle/derive.test.ts',
  'test/bundle/format.test.ts',
  'test/emit/manifest.test.ts',
  'test/management/auth.test.ts',
  'test/management/jsonapi.test.ts',
  'test/mirror/versions-index.test.ts',
  'test/mirror/write-order.test.ts',
  'test/pack/index.test.ts',
  'test/scan/folder.test.ts',
  'test/scan/links.test.ts',
  'test/scan/names.test.ts',
  'test/serve/routes/index.test.ts',
  'test/serve/target.test.ts',
  'test/sync/calls.test.ts',
  'test/sync/provider-rules.test.ts',
  'test/sync/rules.test.ts',
  'test/upstream/flight.test.ts',
];

export default defineConfig({
  test: {
    // Removes the temp folders each file made (test/helpers.ts's tempDir).
    setupFiles: ['test/setup.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: UNIT,
          exclude: [...configDefaults.exclude, ...ISOLATED],
          // One worker runs the files one after another, loading the code and libraries once: a file's
          // own tests take milliseconds, so a fresh worker per file was nearly all of the time.
          // Pure code keeps no module-level state between files.
          isolate: false,
          maxWorkers: 1,
        },
      },
      { extends: true, test: { name: 'isolated', include: ISOLATED } },
    ],
  },
});
