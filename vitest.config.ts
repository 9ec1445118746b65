import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Made once per run, before the test files: the TLS certificates they serve and trust.
    globalSetup: ['test/certificates.ts'],
    // Child processes, not threads: test/in-process-cli.ts changes the folder (process.chdir,
    // which worker threads cannot) and runs the CLI's modules there.
    pool: 'forks',
    // vitest's default is one file at a time on 2 cores (cores - 1). Most files spend much of
    // their time waiting for a child process or a server (git, Go clients, terraform, nginx,
    // Chromium, Ceph), so 1.5 files a core keep the cores busy (on 2 cores, 3 at once).
    maxWorkers: '150%',
    server: {
      deps: {
        // The compiled CLI the tests run in-process is loaded by Node as the binary loads it, not transformed.
        external: [/\/lib\/cli-bundle\//],
      },
    },
  },
});
