// A private registry as Terraform meets it: the module-install client (built
// on terraform-svchost, go-getter and go-version, the libraries `terraform
// init` installs modules with) sends its token as a CLI `credentials` block
// does, on versions and download but never on the archive, which it fetches
// through the signed URL in X-Terraform-Get. Then what OpenTofu does
// instead, step by step.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { get, startPrivateSite, type PrivateSite } from '../serve/private-site.js';
import { expectSameFiles, install, moduleInstallClient, recordingProxy, type RecordingProxy } from './install.js';

let site: PrivateSite;
let proxy: RecordingProxy;
beforeAll(async () => {
  await moduleInstallClient();
  // A short expiry, so a copied URL can be seen to run out within the test.
  site = await startPrivateSite({ archiveUrlTtlSeconds: 2 });
  proxy = await recordingProxy(site.server.url);
});
afterAll(async () => {
  await proxy?.close();
  await site?.close();
});

const hostOf = (url: string) => new URL(url).host;
const installAs = (token: string | undefined, ns: string, dest: string, version = '~> 1.0') =>
  install({ source: `${hostOf(proxy.url)}/${ns}/hello/null`, version, dest: join(site.dir, dest), modulesUrl: new URL('v1/modules/', proxy.url).href, token });
const source = (ns: string, v: string) => join(site.dir, 'mods', ns, 'hello/null', v);

describe('module-install (Terraform) against serve --access private', () => {
  it('a member installs its organization’s module; the token goes to the registry, the archive is fetched by its signed URL alone', async () => {
    proxy.seen.length = 0;
    const got = await installAs(site.tokens.user, 'acme', 'i-member');
    expect(got.version).toBe('1.2.0');
    expect(got.location).toMatch(/^\.\/hello-null-1\.2\.0\.tar\.gz\?expires=\d+&token=at-\w+&signature=[\w-]+$/);
    expectSameFiles(got, source('acme', '1.2.0'));
    const archive = proxy.seen.find((s) => s.path.includes('.tar.gz'))!;
    expect(archive.authorization).toBeUndefined();
    for (const s of proxy.seen.filter((s) => !s.path.includes('.tar.gz'))) expect(s.authorization, s.path).toBe(`Bearer ${site.tokens.user}`);
  });

  it('a consumer organization’s team installs a module shared with it', async () => {
    const got = await installAs(site.tokens.team, 'beta', 'i-consumer');
    expectSameFiles(got, source('beta', '1.2.0'));
  });

  it('a non-member gets 404 on versions and download, and a copied archive URL stops working when it expires', async () => {
    await expect(installAs(site.tokens.other, 'acme', 'i-other')).rejects.toThrow(/versions: 404 Not Found/);
    expect((await get(site, 'other', 'v1/modules/acme/hello/null/versions')).status).toBe(404);
    expect((await get(site, 'other', 'v1/modules/acme/hello/null/1.2.0/download')).status).toBe(404);
    // alice's URL, copied: it works for anyone until it expires (like any bearer URL), then never again.
    const { location } = (await get(site, 'user', 'v1/modules/acme/hello/null/1.2.0/download')).json();
    const copied = new URL(location, new URL('v1/modules/acme/hello/null/1.2.0/download', site.server.url));
    const fetchCopied = async () => {
      const res = await request(copied, { headers: { authorization: `Bearer ${site.tokens.other}` } });
      return { status: res.statusCode, text: await res.body.text() };
    };
    expect((await fetchCopied()).status).toBe(200);
    const expires = Number(copied.searchParams.get('expires')) * 1000;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expires - Date.now()) + 1100));
    const late = await fetchCopied();
    // With a token that may not read acme, the expired URL is no way in: 404, as for the module itself.
    expect(late.status).toBe(404);
    const anonymous = await request(copied);
    expect(anonymous.statusCode).toBe(403);
    expect(JSON.parse(await anonymous.body.text()).errors[0]).toMatch(/expired/);
  });

  it('a disabled organization’s modules vanish, for the site administrator too', async () => {
    expectSameFiles(await installAs(site.tokens.admin, 'omega', 'i-admin'), source('omega', '1.2.0'));
    const disable = (on: boolean) => site.api('PATCH', 'admin/organizations/omega', { data: { type: 'organizations', attributes: { 'is-disabled': on } } });
    expect((await disable(true)).status).toBe(200);
    try {
      await expect(installAs(site.tokens.admin, 'omega', 'i-admin-2')).rejects.toThrow(/versions: 404 Not Found/);
      await expect(installAs(site.tokens.other, 'omega', 'i-omega')).rejects.toThrow(/versions: 401 Unauthorized/);
    } finally {
      expect((await disable(false)).status).toBe(200);
    }
  });

  it('an organization token revoked through the API stops working on the next request', async () => {
    expectSameFiles(await installAs(site.tokens.organization, 'acme', 'i-org'), source('acme', '1.2.0'));
    // Only an owner (or a site administrator) may revoke it; anyone else is told the organization is not there.
    expect((await site.api('DELETE', 'organizations/acme/authentication-token', undefined, site.tokens.user)).status).toBe(404);
    expect((await site.api('DELETE', 'organizations/acme/authentication-token', undefined, site.tokens.owner)).status).toBe(204);
    await expect(installAs(site.tokens.organization, 'acme', 'i-org-2')).rejects.toThrow(/versions: 401 Unauthorized/);
  });
});

describe('OpenTofu 1.12+ (use_registry_credentials)', () => {
  // The requests of OpenTofu's internal/registry/client.go (ModulePackageLocation, then
  // InstallModulePackage for a "direct" location), as on its main branch in 2026: the download
  // endpoint with the registry's credentials; a 200 whose JSON body sets use_registry_credentials is
  // fetched by OpenTofu itself, relative locations resolved against the download URL, with the
  // same credentials and these headers, and a Content-Length it checks.
  it('fetches the archive with the registry token, with or without the signature', async () => {
    const token = site.tokens.team!;
    const downloadUrl = new URL('v1/modules/beta/hello/null/1.0.0/download', site.server.url);
    const answer = await request(downloadUrl, { headers: { authorization: `Bearer ${token}`, 'x-terraform-version': '1.12.0' } });
    expect(answer.statusCode).toBe(200);
    const body = JSON.parse(await answer.body.text()) as { location: string; use_registry_credentials?: boolean };
    expect(body.use_registry_credentials).toBe(true);
    const signed = new URL(body.location, downloadUrl);
    const unsigned = new URL(signed);
    unsigned.search = '';
    const want = readFileSync(join(site.dist, 'v1/modules/beta/hello/null/1.0.0/hello-null-1.0.0.tar.gz'));
    for (const url of [signed, unsigned]) {
      const res = await request(url, {
        headers: {
          authorization: `Bearer ${token}`,
          'x-terraform-version': '1.12.0',
          accept: 'application/zip, application/x-tar; *;q=0.1',
          'accept-encoding': 'identity, gzip, *;q=0.1',
        },
      });
      const bytes = Buffer.from(await res.body.arrayBuffer());
      expect(res.statusCode, url.href).toBe(200);
      expect(res.headers['content-encoding']).toBeUndefined();
      expect(Number(res.headers['content-length'])).toBe(bytes.length);
      expect(bytes.equals(want)).toBe(true);
    }
    // A token that may not read the module gets nothing from the unsigned URL.
    const other = await request(unsigned, { headers: { authorization: `Bearer ${site.tokens.other}` } });
    expect(other.statusCode).toBe(404);
    await other.body.dump();
  });
});
