// A module whose example folder is made of git symlinks, installed from
// `modmirror serve` by the module-install client (Terraform's disco,
// go-version and go-getter): the example arrives with every file, as regular
// files holding the linked files' bytes, and the detail shows what they declare.

import { lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RunningServer } from '../../src/serve/index.js';
import { APP, V1, V1_LINKS } from '../fixtures/history.js';
import { makeRepo, runCli, serveMirror, tempDir, writeFiles } from '../helpers.js';
import { install, moduleInstallClient } from './install.js';

const dir = tempDir('mm-links-');
let server: RunningServer;

beforeAll(async () => {
  await moduleInstallClient();
  makeRepo(join(dir, 'repo'), [{ date: '2024-01-01T00:00:00Z', files: V1, links: V1_LINKS, tags: ['v1.0.0'] }]);
  writeFiles(dir, { 'mirror.config.yaml': 'sources:\n  - git: repo\n    namespace: acme\n    name: eks\n    provider: aws\n' });
  expect((await runCli(['build', '--json'], dir)).code).toBe(0);
  server = await serveMirror(dir);
});
afterAll(async () => {
  await server?.close();
});

it('installs //examples/app_v2, made of links, with every file', async () => {
  const host = new URL(server.url).host;
  const dest = join(dir, 'installed');
  const got = await install({ source: `${host}/acme/eks/aws//examples/app_v2`, version: '1.0.0', dest, modulesUrl: new URL('v1/modules/', server.url).href });
  expect(got.dir).toBe(join(dest, 'examples/app_v2'));
  expect(got.files).toEqual(['README.md', 'main.tf', 'outputs.tf', 'variables.tf']);
  for (const name of ['main.tf', 'variables.tf', 'outputs.tf']) {
    expect(lstatSync(join(got.dir, name)).isFile()).toBe(true);
    expect(readFileSync(join(got.dir, name), 'utf8')).toBe(APP[`examples/app/${name}` as keyof typeof APP]);
  }
  // The module it calls (source = "../../") came in the same package.
  expect(readFileSync(join(dest, 'main.tf'), 'utf8')).toBe(V1['main.tf']);
});
