// The module-install client (Terraform's own download libraries) against the
// other ways a mirror reaches users: a real nginx serving what `modmirror
// hosting nginx` prints (relative and absolute locations), a mirror carried
// by `bundle` and made again by `unbundle`, and a module copied by `sync`
// from one `serve` and served by another. Every install must give the
// module's files, byte for byte.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/serve/index.js';
import { startNginx } from '../hosting/nginx-server.js';
import { freePort, runCli, serveMirror, tempDir } from '../helpers.js';
import { expectSameFiles, install, moduleInstallClient, writeModules } from './install.js';

const dir = tempDir('mm-client-hosts-');
const source = (v: string, sub = '') => join(dir, 'mods/acme/hello/null', v, sub);
let nginx: { stop: () => void } | undefined;
const ports = { relative: 0, absolute: 0, unbundled: 0 };
const url = (port: number) => `http://127.0.0.1:${port}/`;

async function cli(args: string[]): Promise<void> {
  const r = await runCli(args, dir);
  expect(r.stderr, args.join(' ')).not.toMatch(/error/i);
  expect(r.code, `${args.join(' ')}\n${r.stderr}`).toBe(0);
}

beforeAll(async () => {
  await moduleInstallClient();
  writeModules(dir);
  for (const k of Object.keys(ports) as (keyof typeof ports)[]) ports[k] = await freePort();
  await cli(['build', '--modules', 'mods', '--mirror', 'dist', '--json']);
  await cli(['build', '--modules', 'mods', '--mirror', 'dist-abs', '--base-url', `${url(ports.absolute)}registry/`, '--json']);
  // Carried in: a bundle of the whole mirror, merged into an empty folder.
  await cli(['bundle', '--mirror', 'dist', '--out', 'carry.tar.gz']);
  await cli(['unbundle', 'carry.tar.gz', '--mirror', 'unbundled']);

  const blocks: string[] = [];
  for (const [out, port] of [
    ['dist', ports.relative],
    ['dist-abs', ports.absolute],
    ['unbundled', ports.unbundled],
  ] as const) {
    const printed = await runCli(['hosting', 'nginx', '--mirror', out, '--listen', `127.0.0.1:${port}`], dir);
    expect(printed.code).toBe(0);
    blocks.push(printed.stdout);
  }
  nginx = await startNginx(join(dir, 'nginx'), blocks, Object.values(ports));
});
afterAll(() => nginx?.stop());

/** Installs acme/hello/null from a registry whose modules.v1 is `modules` (a CLI host block: nginx here speaks HTTP). */
const installFrom = (modules: string, version: string, dest: string, sub = '') =>
  install({ source: `${new URL(modules).host}/acme/hello/null${sub ? `//${sub}` : ''}`, version, dest: join(dir, dest), modulesUrl: modules });

describe('module-install against nginx with the generated config', () => {
  it('installs with relative locations: a range, a submodule, a pinned pre-release', async () => {
    const modules = `${url(ports.relative)}v1/modules/`;
    const got = await installFrom(modules, '~> 1.2', 'n-range');
    expect(got.version).toBe('1.2.3');
    expect(got.downloadStatus).toBe(200);
    expect(got.location).toBe('./hello-null-1.2.3.tar.gz');
    expectSameFiles(got, source('1.2.3'));
    expectSameFiles(await installFrom(modules, '~> 1.0.0', 'n-sub', 'modules/x'), source('1.0.0', 'modules/x'));
    expectSameFiles(await installFrom(modules, '1.3.0-rc.1', 'n-pre'), source('1.3.0-rc.1'));
  });

  it('installs with absolute locations under a base URL with a path', async () => {
    const got = await installFrom(`${url(ports.absolute)}registry/v1/modules/`, '~> 1.2', 'n-abs');
    expect(got.location).toBe(`${url(ports.absolute)}registry/v1/modules/acme/hello/null/1.2.3/hello-null-1.2.3.tar.gz`);
    expectSameFiles(got, source('1.2.3'));
  });
});

describe('module-install against a mirror made by bundle + unbundle', () => {
  it('installs every kind of pick from the unbundled copy, served by nginx', async () => {
    const modules = `${url(ports.unbundled)}v1/modules/`;
    expectSameFiles(await installFrom(modules, '~> 1.2', 'u-range'), source('1.2.3'));
    expectSameFiles(await installFrom(modules, '>= 2.0', 'u-sub', 'modules/x'), source('2.0.0', 'modules/x'));
  });
});

describe('module-install against a module copied by sync', () => {
  let upstream: RunningServer | undefined;
  let mirror: RunningServer | undefined;
  afterAll(async () => {
    await upstream?.close();
    await mirror?.close();
  });

  it('installs from a serve of the synced folder what the upstream serve held', async () => {
    upstream = await serveMirror(dir, { dataDir: join(dir, 'data-up') });
    await cli(['sync', '--from', upstream.url, '--module', 'acme/hello/null@~> 1.2', '--into', 'synced']);
    await cli(['build', '--modules', 'synced', '--mirror', 'dist-synced', '--json']);
    mirror = await serveMirror(dir, { dir: join(dir, 'dist-synced'), dataDir: join(dir, 'data-synced') });
    const modules = `${mirror.url}v1/modules/`;
    const got = await installFrom(modules, '~> 1.2', 's-range');
    expect(got.version).toBe('1.2.3');
    expectSameFiles(got, source('1.2.3'));
    expectSameFiles(await installFrom(modules, '1.2.0', 's-sub', 'modules/x'), source('1.2.0', 'modules/x'));
    // The range left 1.0.0 upstream.
    await expect(installFrom(modules, '~> 1.0.0', 's-missing')).rejects.toThrow(/no version among/);
  });
});
