// Deprecation round trips: `modmirror deprecate` and --undo, the management
// API's HCP Terraform call against a running server, and what keeps it: a
// rebuild (incremental and --clean), publish, and bundle/unbundle into
// another mirror. Read back from the documents a client gets.

import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { beforeAll, describe, expect, it } from 'vitest';
import { createOrganization, createToken, createUser } from '../../src/management/bootstrap.js';
import { Store } from '../../src/management/store.js';
import type { RunningServer } from '../../src/serve/index.js';
import { mirrorManifest, runCli, serveMirror, tempDir, writeFiles } from '../helpers.js';

const dir = tempDir('mm-deprecate-');
const mod = 'v1/modules/acme/thing/aws';
const read = (rel: string, root = 'dist') => JSON.parse(readFileSync(join(dir, root, rel), 'utf8'));
/** version -> deprecation, from the versions document as a client reads it. */
const deprecationsIn = (root = 'dist') =>
  Object.fromEntries(
    (read(`${mod}/versions`, root).modules[0].versions as { version: string; deprecation?: unknown }[]).map((v) => [v.version, v.deprecation ?? null]),
  );
/** version -> deprecation, as the module's state records it. */
const recordedIn = (root = 'dist') =>
  Object.fromEntries(
    (mirrorManifest(join(dir, root)).modules['acme/thing/aws'].versions as { version: string; deprecation?: unknown }[])
      .filter((v) => v.deprecation)
      .map((v) => [v.version, v.deprecation]),
  );
const STATE = 'state/acme/thing.aws.json';
const OLD = { reason: 'Use 1.1 or later: 1.0 leaks a route.', link: 'https://example.com/advisories/1' };

async function cli(args: string[], code = 0) {
  const result = await runCli(args, dir);
  expect(result.code, `${args.join(' ')}\n${result.stderr}`).toBe(code);
  return result;
}

beforeAll(async () => {
  writeFiles(dir, {
    'mirror.config.yaml': 'sources:\n  - folder: mods\n',
    'mods/acme/thing/aws/1.0.0/main.tf': 'variable "a" {}\n',
    'mods/acme/thing/aws/1.1.0/main.tf': 'variable "b" {}\n',
    'drop/acme/thing/aws/1.2.0/main.tf': 'variable "c" {}\n',
  });
  await cli(['build', '--json']);
});

describe('modmirror deprecate', () => {
  it("writes the deprecation into versions, the detail and the module's state; --undo takes it out", async () => {
    const done = await cli(['deprecate', 'acme/thing/aws', '1.0.0', '--reason', OLD.reason, '--link', OLD.link]);
    expect(done.stdout).toContain('acme/thing/aws 1.0.0 deprecated: Use 1.1');
    expect(deprecationsIn()).toEqual({ '1.1.0': null, '1.0.0': OLD });
    expect(read(`${mod}/1.0.0/index.json`).deprecation).toEqual(OLD);
    expect(read(`${mod}/1.1.0/index.json`).deprecation).toBeUndefined();
    expect(recordedIn()).toEqual({ '1.0.0': OLD });
    await cli(['verify']);
    // Again with the same: nothing to change.
    expect((await cli(['deprecate', 'acme/thing/aws', '1.0.0', '--reason', OLD.reason, '--link', OLD.link])).stdout).toContain('nothing changed');

    await cli(['deprecate', 'acme/thing/aws', '1.1.0', '--reason', 'temporary']);
    expect(deprecationsIn()['1.1.0']).toEqual({ reason: 'temporary', link: null });
    await cli(['deprecate', 'acme/thing/aws', '1.1.0', '--undo']);
    expect(deprecationsIn()).toEqual({ '1.1.0': null, '1.0.0': OLD });
    expect(recordedIn()).toEqual({ '1.0.0': OLD });
  });

  it("verify names a document whose deprecation differs from the module's state, and a state recording one no document shows", async () => {
    const copy = (name: string) => {
      cpSync(join(dir, 'dist'), join(dir, name), { recursive: true, dereference: true });
      return join(dir, name);
    };
    const dropped = copy('dist-dropped');
    const versions = read(`${mod}/versions`, 'dist-dropped');
    delete versions.modules[0].versions.find((v: { version: string }) => v.version === '1.0.0').deprecation;
    writeFileSync(join(dropped, `${mod}/versions`), JSON.stringify(versions));
    const detail = read(`${mod}/1.1.0/index.json`, 'dist-dropped');
    writeFileSync(join(dropped, `${mod}/1.1.0/index.json`), JSON.stringify({ ...detail, deprecation: { reason: 'made up', link: null } }));
    const a = await cli(['verify', '--mirror', dropped], 1);
    const said = a.stdout + a.stderr;
    expect(said).toContain(`${mod}/versions: version 1.0.0: deprecation null differs from the recorded {"reason":"Use 1.1`);
    expect(said).toContain(`${mod}/1.1.0/index.json: deprecation {"reason":"made up","link":null} differs from the recorded null`);

    const stray = copy('dist-stray');
    const state = read(STATE, 'dist-stray');
    state.versions.find((v: { version: string }) => v.version === '1.1.0').deprecation = { reason: 'x', link: null };
    writeFileSync(join(stray, STATE), JSON.stringify(state));
    const b = await cli(['verify', '--mirror', stray], 1);
    // The state records each deprecation; the documents that show one are derived from it.
    expect(b.stdout + b.stderr).toContain(`${mod}/versions: version 1.1.0: deprecation null differs from the recorded {"reason":"x","link":null}`);
    expect(b.stdout + b.stderr).toContain(`${mod}/1.1.0/index.json: deprecation null differs from the recorded {"reason":"x","link":null}`);
  });

  it('refuses what it cannot do, changing nothing', async () => {
    const before = readFileSync(join(dir, 'dist', STATE), 'utf8');
    expect((await cli(['deprecate', 'acme/thing/aws', '1.0.0'], 2)).stderr).toMatch(/--reason/);
    expect((await cli(['deprecate', 'acme/thing', '1.0.0', '--reason', 'x'], 2)).stderr).toMatch(/NAMESPACE\/NAME\/PROVIDER/);
    expect((await cli(['deprecate', 'acme/thing/aws', '1.0.0', '--reason', 'x', '--link', 'javascript:alert(1)'], 2)).stderr).toMatch(/--link must be an http/);
    expect((await cli(['deprecate', 'acme/thing/aws', '9.9.9', '--reason', 'x'], 1)).stderr).toMatch(/Version 9\.9\.9 of acme\/thing\/aws not found/);
    expect(readFileSync(join(dir, 'dist', STATE), 'utf8')).toBe(before);
  });

  it('is kept by a rebuild, a clean rebuild and a publish', async () => {
    writeFiles(dir, { 'mods/acme/thing/aws/1.0.1/main.tf': 'variable "d" {}\n' });
    await cli(['build', '--json']);
    expect(deprecationsIn()['1.0.0']).toEqual(OLD);
    await cli(['build', '--clean', '--json']);
    expect(deprecationsIn()['1.0.0']).toEqual(OLD);
    await cli(['publish', '--source', 'drop/acme/thing/aws/1.2.0', '--json']);
    expect(deprecationsIn()).toEqual({ '1.2.0': null, '1.1.0': null, '1.0.1': null, '1.0.0': OLD });
    expect(read(`${mod}/1.0.0/index.json`).deprecation).toEqual(OLD);
    await cli(['verify']);
  });

  it('crosses an air gap in a bundle, into a mirror that had none', async () => {
    await cli(['bundle', '--out', 'full.tar.gz']);
    await cli(['unbundle', 'full.tar.gz', '--mirror', 'inside']);
    expect(deprecationsIn('inside')['1.0.0']).toEqual(OLD);
    expect(recordedIn('inside')).toEqual(recordedIn());
    expect(read(`${mod}/1.0.0/index.json`, 'inside').deprecation).toEqual(OLD);
  });
});

describe("HCP Terraform's API call against modmirror serve", () => {
  let server: RunningServer;
  const tokens: Record<string, string> = {};
  beforeAll(async () => {
    const data = join(dir, 'data');
    const store = new Store(data);
    await createUser(store, { username: 'owner', email: 'o@example.com', siteAdmin: false });
    await createUser(store, { username: 'someone', email: 's@example.com', siteAdmin: false });
    await createUser(store, { username: 'root', email: 'r@example.com', siteAdmin: true });
    await createOrganization(store, { name: 'acme', email: 'acme@example.com', owner: 'owner' });
    for (const user of ['owner', 'someone', 'root']) tokens[user] = await createToken(store, { user });
    tokens['org'] = await createToken(store, { organization: 'acme' });
    server = await serveMirror(dir);
  });

  // The request HCP Terraform's "Manage module versions" API documents.
  const patch = async (who: string, version: string, deprecation: unknown, path = `organizations/acme/registry-modules/private/acme/thing/aws/${version}`) => {
    const res = await request(new URL(`api/v2/${path}`, server.url), {
      method: 'PATCH',
      headers: { authorization: `Bearer ${tokens[who]}`, 'content-type': 'application/vnd.api+json' },
      body: JSON.stringify({ data: { type: 'module-versions', attributes: { deprecation } } }),
    });
    const text = await res.body.text();
    return { status: res.statusCode, json: text ? JSON.parse(text) : undefined };
  };
  const served = async () => {
    const res = await request(new URL(`${mod}/versions`, server.url));
    return Object.fromEntries(((await res.body.json()) as any).modules[0].versions.map((v: any) => [v.version, v.deprecation ?? null]));
  };

  it('deprecates and undeprecates for the organization’s owner and a site administrator; the next request shows it', async () => {
    const done = await patch('owner', '1.1.0', { 'deprecated-status': 'Deprecated', reason: 'Superseded by 1.2.0', link: 'https://example.com/1.2' });
    expect(done.status).toBe(200);
    expect(done.json.data).toMatchObject({
      type: 'module-versions',
      attributes: { version: '1.1.0', deprecation: { 'deprecated-status': 'Deprecated', reason: 'Superseded by 1.2.0' } },
    });
    expect((await served())['1.1.0']).toEqual({ reason: 'Superseded by 1.2.0', link: 'https://example.com/1.2' });
    expect(recordedIn()['1.1.0']).toEqual({ reason: 'Superseded by 1.2.0', link: 'https://example.com/1.2' });
    expect((await patch('root', '1.1.0', { 'deprecated-status': 'Undeprecated' })).status).toBe(200);
    expect((await served())['1.1.0']).toBeNull();
    expect((await served())['1.0.0']).toEqual(OLD);
  });

  it('is a 404 for anyone else, for a module the mirror lacks and for another organization’s namespace; a 422 for a bad body', async () => {
    const body = { 'deprecated-status': 'Deprecated', reason: 'x' };
    expect((await patch('someone', '1.1.0', body)).status).toBe(404);
    expect((await patch('org', '1.1.0', body)).status).toBe(404);
    expect((await patch('owner', '7.0.0', body)).status).toBe(404);
    expect((await patch('owner', '1.1.0', body, 'organizations/acme/registry-modules/private/other/thing/aws/1.1.0')).status).toBe(404);
    const bad = await patch('owner', '1.1.0', { 'deprecated-status': 'Gone' });
    expect(bad.status).toBe(422);
    expect(bad.json.errors[0].source.pointer).toBe('/data/attributes/deprecation/deprecated-status');
    expect((await patch('owner', '1.1.0', { 'deprecated-status': 'Deprecated', reason: '' })).status).toBe(422);
    expect((await served())['1.1.0']).toBeNull();
  });
});
