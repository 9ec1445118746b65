// A version published through the management API (go-tfe v1.110's
// CreateVersion and Upload) installs as any other: by the module-install
// client (the libraries `terraform init` installs modules with) and, where
// it is on PATH, by terraform itself, byte for byte.

import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasTerraform, treeOf, writeFiles } from '../helpers.js';
import { startHarness, type Harness } from '../management/helpers.js';
import { createBody, createVersionBody, goTfe, tarOf, upload } from '../management/registry-helpers.js';
import { expectSameFiles, install, moduleFiles, moduleInstallClient } from './install.js';
import { readdirSync } from 'node:fs';

let h: Harness;
const source = () => join(h.dir, 'incoming');

beforeAll(async () => {
  await moduleInstallClient();
  h = await startHarness();
  writeFiles(source(), moduleFiles('1.5.0'));
  expect((await goTfe(h, 'user', 'POST', '/api/v2/organizations/acme/registry-modules', createBody('hello', 'null'))).status).toBe(201);
  const version = await goTfe(h, 'user', 'POST', '/api/v2/registry-modules/acme/hello/null/versions', createVersionBody('1.5.0'));
  expect((await upload(version.json.data.links.upload, await tarOf(source(), readdirSync(source()).sort()))).status).toBe(200);
});
afterAll(() => h?.server.close());

const host = () => new URL(h.server.url).host;

describe('a version published through the API', () => {
  it('is installed by the module-install client (RegistryModules.Upload, go-tfe v1.110)', async () => {
    const got = await install({
      source: `${host()}/acme/hello/null`,
      version: '~> 1.5',
      dest: join(h.dir, 'i-api'),
      modulesUrl: new URL('v1/modules/', h.server.url).href,
    });
    expect(got.version).toBe('1.5.0');
    expectSameFiles(got, source());
  });

  it.skipIf(!hasTerraform)('is installed by terraform init', async () => {
    const root = join(h.dir, 'tf');
    writeFiles(root, {
      'main.tf': `module "hello" {\n  source  = "${host()}/acme/hello/null"\n  version = "1.5.0"\n  name    = "x"\n}\n`,
      'cli.tfrc': `host "${host()}" {\n  services = {\n    "modules.v1" = "${h.server.url}v1/modules/"\n  }\n}\n`,
    });
    const env = { ...process.env, TF_CLI_CONFIG_FILE: join(root, 'cli.tfrc'), CHECKPOINT_DISABLE: '1', TF_IN_AUTOMATION: '1' };
    await promisify(execFile)('terraform', ['get'], { cwd: root, env, timeout: 60_000 });
    expect(treeOf(join(root, '.terraform/modules/hello'))).toEqual(treeOf(source()));
  });
});
