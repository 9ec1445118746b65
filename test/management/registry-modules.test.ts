// The registry-modules endpoints as go-tfe v1.110 (registry_module.go) calls
// them, byte for byte: Create, CreateVersion (its older path), Upload (no
// token, octet-stream), ReadVersion, Read, List, DeleteVersion, DeleteProvider,
// DeleteByName; the older paths it still calls (Read by id, Delete and the
// delete actions); then who may call them. Debian's go-tfe 0.11 predates them.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, writeFiles, writeFromAnotherProcess } from '../helpers.js';
import { startHarness, type Harness } from './helpers.js';
import { createBody, createVersionBody, goTfe, manifestOf, moduleFiles, publishThroughApi, removalOf, slug, upload } from './registry-helpers.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.server.close());

const MODULE = '/api/v2/organizations/acme/registry-modules/private/acme/vpc/aws';

describe('a version published through the API, as go-tfe v1.110 does it', () => {
  let link = '';

  it('RegistryModules.Create (go-tfe v1.110) makes a private module whose namespace is the organization', async () => {
    expect((await h.call('none', 'GET', '/api/v2/ping')).status).toBe(204);
    const res = await goTfe(h, 'user', 'POST', '/api/v2/organizations/acme/registry-modules', createBody('vpc', 'aws'));
    expect(res.status).toBe(201);
    expect(res.headers['content-type']).toBe('application/vnd.api+json');
    expect(res.json.data).toMatchObject({
      type: 'registry-modules',
      attributes: { name: 'vpc', provider: 'aws', namespace: 'acme', 'registry-name': 'private', status: 'pending', 'version-statuses': [] },
      relationships: { organization: { data: { id: 'acme', type: 'organizations' } } },
    });
    expect(res.json.data.id).toMatch(/^mod-/);
    const again = await goTfe(h, 'user', 'POST', '/api/v2/organizations/acme/registry-modules', createBody('vpc', 'aws'));
    expect(again.status).toBe(422);
  });

  it('RegistryModules.CreateVersion (go-tfe v1.110) posts registry-modules/ORG/NAME/PROVIDER/versions and gets pending with links.upload', async () => {
    const res = await goTfe(h, 'user', 'POST', '/api/v2/registry-modules/acme/vpc/aws/versions', createVersionBody('1.0.0'));
    expect(res.status).toBe(201);
    expect(res.json.data).toMatchObject({ type: 'registry-module-versions', attributes: { status: 'pending', version: '1.0.0', source: 'tfe-api' } });
    link = res.json.data.links.upload;
    expect(link).toMatch(new RegExp(`^${h.server.url}api/v2/registry-module-versions/modver-\\w+/upload\\?expires=\\d+&token=upload&signature=`));
    const read = await goTfe(h, 'user', 'GET', `${MODULE}/version?module_version=1.0.0`);
    expect(read.json.data.attributes.status).toBe('pending');
    expect(read.json.data.links.upload).toBeUndefined();
  });

  it('RegistryModules.Upload (go-tfe v1.110) PUTs the go-slug tar.gz with no token; ReadVersion then says ok', async () => {
    const before = manifestOf(h);
    const put = await upload(link, await slug(moduleFiles('1.0.0')));
    expect(put.status).toBe(200);
    const read = await goTfe(h, 'user', 'GET', `${MODULE}/version?module_version=1.0.0`);
    expect(read.status).toBe(200);
    expect(read.json.data.attributes.status).toBe('ok');
    expect(manifestOf(h).modules['acme/vpc/aws']!.versions.map((v) => v.version)).toEqual(['1.0.0']);
    expect(before.modules['acme/vpc/aws']).toBeUndefined();
    // The registry serves it at once, as `modmirror publish` would have left it.
    const versions = await h.call('none', 'GET', '/v1/modules/acme/vpc/aws/versions');
    expect(versions.json.modules[0].versions.map((v: { version: string }) => v.version)).toEqual(['1.0.0']);
    const detail = await h.call('none', 'GET', '/v1/modules/acme/vpc/aws/1.0.0');
    expect(detail.json.root.inputs[0]).toMatchObject({ name: 'name', default: '"1.0.0"' });
  });

  it('the upload link is single-use, and an altered one is refused', async () => {
    expect((await upload(link, await slug(moduleFiles('1.0.0')))).status).toBe(409);
    expect(
      (
        await upload(
          link.replace(/signature=(.)/, (_, c: string) => `signature=${c === 'A' ? 'B' : 'A'}`),
          Buffer.from('x'),
        )
      ).status,
    ).toBe(403);
    expect((await upload(link.split('?')[0]!, Buffer.from('x'))).status).toBe(401);
  });

  it('RegistryModules.Read (go-tfe v1.110) shows the version statuses; List pages with meta.pagination', async () => {
    const read = await goTfe(h, 'user', 'GET', MODULE);
    expect(read.status).toBe(200);
    expect(read.json.data.attributes).toMatchObject({
      status: 'setup_complete',
      'version-statuses': [{ version: '1.0.0', status: 'ok' }],
      permissions: { 'can-delete': true },
    });
    await goTfe(h, 'user', 'POST', '/api/v2/organizations/acme/registry-modules', createBody('dns', 'aws'));
    const page = await goTfe(h, 'user', 'GET', '/api/v2/organizations/acme/registry-modules?page%5Bnumber%5D=2&page%5Bsize%5D=1');
    expect(page.status).toBe(200);
    expect(page.json.data.map((m: { attributes: { name: string } }) => m.attributes.name)).toEqual(['vpc']);
    expect(page.json.meta.pagination).toEqual({ 'current-page': 2, 'page-size': 1, 'prev-page': 1, 'next-page': null, 'total-pages': 2, 'total-count': 2 });
    const filtered = await goTfe(h, 'user', 'GET', '/api/v2/organizations/acme/registry-modules?filter%5Bprovider%5D=aws&q=dn');
    expect(filtered.json.data.map((m: { attributes: { name: string } }) => m.attributes.name)).toEqual(['dns']);
  });

  it('CreateVersion on the documented path works too; a published version cannot be made again', async () => {
    const res = await goTfe(h, 'organization', 'POST', `${MODULE}/versions`, createVersionBody('1.1.0', 'abc123'));
    expect(res.status).toBe(201);
    expect(res.json.data.attributes['commit-sha']).toBe('abc123');
    expect((await upload(res.json.data.links.upload, await slug(moduleFiles('1.1.0')))).status).toBe(200);
    const again = await goTfe(h, 'user', 'POST', `${MODULE}/versions`, createVersionBody('1.1.0'));
    expect(again.status).toBe(422);
    expect(again.json.errors[0].detail).toContain('immutable');
    expect((await goTfe(h, 'user', 'POST', `${MODULE}/versions`, createVersionBody('one'))).status).toBe(422);
    expect((await goTfe(h, 'user', 'POST', `${MODULE}/versions`, '{"data":')).status).toBe(400);
  });

  it('RegistryModules.DeleteVersion (go-tfe v1.110) removes it from the mirror, on record with who and when', async () => {
    const sha = manifestOf(h).modules['acme/vpc/aws']!.versions.find((v) => v.version === '1.1.0')!.sha256;
    const res = await goTfe(h, 'user', 'DELETE', `${MODULE}/1.1.0`);
    expect(res.status).toBe(204);
    const manifest = manifestOf(h);
    expect(manifest.modules['acme/vpc/aws']!.versions.map((v) => v.version)).toEqual(['1.0.0']);
    expect(manifest.removed).toEqual([{ module: 'acme/vpc/aws', version: '1.1.0', sha256: sha, at: expect.stringMatching(/^\d{4}-/), by: 'user:alice' }]);
    expect((await h.call('none', 'GET', '/v1/modules/acme/vpc/aws/1.1.0')).status).toBe(404);
    expect((await goTfe(h, 'user', 'GET', `${MODULE}/version?module_version=1.1.0`)).status).toBe(404);
    expect((await goTfe(h, 'user', 'DELETE', `${MODULE}/1.1.0`)).status).toBe(404);
    const verify = await runCli(['verify', '--mirror', 'dist'], h.dir);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  });

  it('RegistryModules.DeleteProvider and DeleteByName (go-tfe v1.110) remove whole modules, each version on record', async () => {
    await publishThroughApi(h, 'user', 'net', '2.0.0');
    const provider = await goTfe(h, 'admin', 'DELETE', '/api/v2/organizations/acme/registry-modules/private/acme/net/aws');
    expect(provider.status).toBe(204);
    expect((await h.call('none', 'GET', '/v1/modules/acme/net/aws/versions')).status).toBe(404);
    const byName = await goTfe(h, 'organization', 'DELETE', '/api/v2/organizations/acme/registry-modules/private/acme/vpc');
    expect(byName.status).toBe(204);
    const manifest = manifestOf(h);
    // The modules removed keep their states, with no versions; the removals are on record in them.
    expect(Object.keys(manifest.modules).filter((key) => manifest.modules[key]!.versions.length > 0)).toEqual(['a/b/c']);
    expect(manifest.removed!.map((r) => `${r.module}@${r.version} ${r.by}`).sort()).toEqual([
      'acme/net/aws@2.0.0 user:admin',
      'acme/vpc/aws@1.0.0 organization:acme',
      'acme/vpc/aws@1.1.0 user:alice',
    ]);
    expect((await goTfe(h, 'user', 'GET', MODULE)).status).toBe(404);
    expect((await h.call('none', 'GET', '/v1/modules/acme')).json.modules).toEqual([]);
    const verify = await runCli(['verify', '--mirror', 'dist'], h.dir);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  });
});

describe('the paths go-tfe calls besides the documented ones', () => {
  it('RegistryModules.Read with only an ID (go-tfe v1.110) reads registry-modules/ID; a stranger gets the same 404 as for an unknown id', async () => {
    await goTfe(h, 'user', 'POST', '/api/v2/organizations/acme/registry-modules', createBody('byid', 'aws'));
    const id = (await goTfe(h, 'user', 'GET', '/api/v2/organizations/acme/registry-modules/private/acme/byid/aws')).json.data.id as string;
    const read = await goTfe(h, 'user', 'GET', `/api/v2/registry-modules/${id}`);
    expect(read.status).toBe(200);
    expect(read.json.data).toMatchObject({ id, type: 'registry-modules', attributes: { name: 'byid', provider: 'aws', namespace: 'acme' } });
    // A module only the mirror holds (published by the CLI) has a stable id that reads the same way.
    writeFiles(h.dir, { 'cli-src/main.tf': 'variable "y" {}\n' });
    const cli = await runCli(
      ['publish', '--source', 'cli-src', '--namespace', 'acme', '--name', 'fromcli', '--provider', 'aws', '--version', '1.0.0', '--mirror', 'dist'],
      h.dir,
    );
    expect(cli.code, cli.stderr).toBe(0);
    const mirrored = await goTfe(h, 'user', 'GET', '/api/v2/organizations/acme/registry-modules/private/acme/fromcli/aws');
    expect(mirrored.json.data.id).toMatch(/^mod-/);
    const again = await goTfe(h, 'user', 'GET', `/api/v2/registry-modules/${mirrored.json.data.id}`);
    expect(again.json.data.attributes).toMatchObject({ name: 'fromcli', 'version-statuses': [{ version: '1.0.0', status: 'ok' }] });
    // alice is no member of beta: its module's id is the same 404 as an unknown one.
    expect((await goTfe(h, 'admin', 'POST', '/api/v2/organizations/beta/registry-modules', createBody('hidden', 'aws'))).status).toBe(201);
    const hidden = (await goTfe(h, 'admin', 'GET', '/api/v2/organizations/beta/registry-modules/private/beta/hidden/aws')).json.data.id as string;
    expect((await goTfe(h, 'admin', 'GET', `/api/v2/registry-modules/${hidden}`)).status).toBe(200);
    const stranger = await goTfe(h, 'user', 'GET', `/api/v2/registry-modules/${hidden}`);
    const unknown = await goTfe(h, 'user', 'GET', '/api/v2/registry-modules/mod-doesnotexist');
    expect([stranger.status, unknown.status]).toEqual([404, 404]);
    expect(stranger.text).toBe(unknown.text);
  });

  it('go-tfe 0.x Read: registry-modules/show/ORG/NAME/PROVIDER', async () => {
    const read = await goTfe(h, 'user', 'GET', '/api/v2/registry-modules/show/acme/byid/aws');
    expect(read.status).toBe(200);
    expect(read.json.data.attributes.name).toBe('byid');
    expect((await goTfe(h, 'user', 'GET', '/api/v2/registry-modules/show/beta/hidden/aws')).status).toBe(404);
  });

  it('RegistryModules.Delete (go-tfe v1.110, deprecated) and the delete actions DeleteProvider and DeleteVersion fall back to: each on record', async () => {
    await publishThroughApi(h, 'user', 'act', '1.0.0');
    await publishThroughApi(h, 'user', 'act', '1.1.0');
    const sha = manifestOf(h).modules['acme/act/aws']!.versions.find((v) => v.version === '1.1.0')!.sha256;
    expect((await goTfe(h, 'team', 'POST', '/api/v2/registry-modules/actions/delete/acme/act/aws/1.1.0')).status).toBe(404);
    expect((await goTfe(h, 'user', 'POST', '/api/v2/registry-modules/actions/delete/beta/hidden')).status).toBe(404);
    expect((await goTfe(h, 'user', 'POST', '/api/v2/registry-modules/actions/delete/acme/act/aws/1.1.0')).status).toBe(204);
    expect(manifestOf(h).modules['acme/act/aws']!.versions.map((v) => v.version)).toEqual(['1.0.0']);
    expect(removalOf(h, 'acme/act/aws', '1.1.0')).toMatchObject({ sha256: sha, by: 'user:alice' });
    expect((await goTfe(h, 'user', 'POST', '/api/v2/registry-modules/actions/delete/acme/act/aws')).status).toBe(204);
    // Every version removed: the module keeps its state, with no versions and the removals on record.
    expect(manifestOf(h).modules['acme/act/aws']).toEqual({ versions: [] });
    await goTfe(h, 'user', 'POST', '/api/v2/organizations/acme/registry-modules', createBody('act', 'google'));
    expect((await goTfe(h, 'user', 'POST', '/api/v2/registry-modules/actions/delete/acme/act')).status).toBe(204);
    expect((await goTfe(h, 'user', 'GET', '/api/v2/organizations/acme/registry-modules/private/acme/act/google')).status).toBe(404);
    expect((await goTfe(h, 'user', 'POST', '/api/v2/registry-modules/actions/delete/acme/act')).status).toBe(404);
    const verify = await runCli(['verify', '--mirror', 'dist'], h.dir);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  });
});

describe('who may publish and delete', () => {
  it('a stranger to the organization gets the 404 HCP gives, for reads and writes alike', async () => {
    // alice owns acme and delta, not beta; bob is in acme's team only.
    expect((await goTfe(h, 'user', 'POST', '/api/v2/organizations/beta/registry-modules', createBody('x', 'aws'))).status).toBe(404);
    expect((await goTfe(h, 'user', 'GET', '/api/v2/organizations/beta/registry-modules')).status).toBe(404);
    expect((await goTfe(h, 'organization', 'POST', '/api/v2/organizations/delta/registry-modules', createBody('x', 'aws'))).status).toBe(404);
    expect((await goTfe(h, 'unknown', 'GET', '/api/v2/organizations/acme/registry-modules')).status).toBe(401);
    expect((await goTfe(h, 'user', 'POST', '/api/v2/organizations/nope/registry-modules', createBody('x', 'aws'))).status).toBe(404);
  });

  it('a team token reads; it publishes only when the team may manage modules', async () => {
    await goTfe(h, 'user', 'POST', '/api/v2/organizations/acme/registry-modules', createBody('team', 'aws'));
    expect((await goTfe(h, 'team', 'GET', '/api/v2/organizations/acme/registry-modules/private/acme/team/aws')).status).toBe(200);
    expect((await goTfe(h, 'team', 'POST', '/api/v2/registry-modules/acme/team/aws/versions', createVersionBody('1.0.0'))).status).toBe(404);
    const teams = join(h.data, 'teams.json');
    writeFromAnotherProcess(teams, JSON.stringify(JSON.parse(readFileSync(teams, 'utf8')).map((t: object) => ({ ...t, manageModules: true }))));
    // A request sent after another process replaced the file is answered from what it wrote.
    const res = await goTfe(h, 'team', 'POST', '/api/v2/registry-modules/acme/team/aws/versions', createVersionBody('1.0.0'));
    expect(res.status).toBe(201);
    expect((await upload(res.json.data.links.upload, await slug(moduleFiles('1.0.0')))).status).toBe(200);
    expect((await goTfe(h, 'team', 'DELETE', '/api/v2/organizations/acme/registry-modules/private/acme/team/aws/1.0.0')).status).toBe(204);
    expect(removalOf(h, 'acme/team/aws', '1.0.0')?.by).toBe('team:acme/platform');
  });

  it('a public-registry module or a namespace other than the organization is refused', async () => {
    const body = '{"data":{"type":"registry-modules","attributes":{"name":"p","namespace":"hashicorp","provider":"aws","registry-name":"public"}}}\n';
    expect((await goTfe(h, 'user', 'POST', '/api/v2/organizations/acme/registry-modules', body)).status).toBe(422);
    expect((await goTfe(h, 'user', 'GET', '/api/v2/organizations/acme/registry-modules/public/acme/team/aws')).status).toBe(404);
    expect(
      (await goTfe(h, 'user', 'POST', '/api/v2/organizations/acme/registry-modules/private/delta/team/aws/versions', createVersionBody('1.0.0'))).status,
    ).toBe(404);
  });
});
