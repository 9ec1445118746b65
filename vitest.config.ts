import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Made once per run, before the test files: the TLS certificates they serve and trust.
    globalSetup: ['test/certificates.ts'],
    // Each test file in a process of its own: test/in-process-cli.ts changes the folder
    // (process.chdir, which worker threads cannot) and runs the CLI's modules there.
    pool: 'forks',
    server: {
      deps: {
        // The compiled CLI the tests run in-process is loaded by Node as the binary loads it, not transformed.
        external: [/\/lib\/cli-bundle\//],
      },
    },
  },
});
