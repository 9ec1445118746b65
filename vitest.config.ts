import { configDefaults, defineConfig } from 'vitest/config';

/** Files that mock a module (vi.mock): each runs in a fresh process, so the mock reaches every importer and leaves with it. */
export const ISOLATED = ['test/extract/nesting.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Removes the temp folders each file made (test/helpers.ts's tempDir).
    setupFiles: ['test/setup.ts'],
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
    projects: [
      {
        extends: true,
        test: {
          name: 'shared',
          // Made once per run, before the test files: the TLS certificates they serve and trust.
          globalSetup: ['test/certificates.ts'],
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...ISOLATED],
          // A worker runs its files one after another in one process, loading src/, the CLI bundle
          // and the libraries once, not once per file: that loading was a third of the suite's CPU.
          // The code under test keeps no module-level state; each file makes its own folders,
          // servers and clients, and the in-process CLI puts back the folder and environment.
          isolate: false,
        },
      },
      { extends: true, test: { name: 'isolated', include: ISOLATED } },
    ],
  },
});
