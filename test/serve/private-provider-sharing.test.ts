// `serve --access private` with in-house providers: every provider path
// (providers.v1 versions and download, the network mirror's index.json,
// VERSION.json, zips, SHA256SUMS and .sig, the signed URLs handed out for
// them, providers-index.json, which the browse page lists) x every kind of
// caller. An organization's provider is read as its provider sharing says
// (its members, its provider consumers, everyone under global provider
// sharing, site administrators), independently of its module sharing; a
// provider whose namespace is no organization's is every token holder's.
// Anything else is the 404 of a provider that does not exist. Then the real
// Terraform CLI, when this machine has it: a consumer installs acme's
// provider, another organization is refused.

import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganization } from '../../src/management/bootstrap.js';
import { Store } from '../../src/management/store.js';
import { hasTerraform, runCli, terraformInit, type TerraformResult } from '../helpers.js';
import {
  get,
  IN_HOUSE_PROVIDERS,
  PROVIDER_HOST,
  PUBLIC_PROVIDER,
  startPrivateSite,
  VISIBLE_PROVIDERS,
  type CallerKind,
  type PrivateSite,
} from './private-site.js';

let site: PrivateSite;
beforeAll(async () => {
  site = await startPrivateSite({ providers: true });
}, 180_000);
afterAll(async () => site?.close());

const CALLERS = Object.keys(VISIBLE_PROVIDERS) as CallerKind[];
const PROVIDERS = [
  ...Object.entries(IN_HOUSE_PROVIDERS).map(([namespace, type]) => ({ hostname: PROVIDER_HOST, namespace, type, version: '1.0.0', inHouse: true })),
  { ...PUBLIC_PROVIDER, version: '3.6.0', inHouse: false },
];
type Provider = (typeof PROVIDERS)[number];

const folder = (p: { hostname: string; namespace: string; type: string }) => `providers/${p.hostname}/${p.namespace}/${p.type}`;
/** Every path of a provider that answers 200 to a caller who may read it, with the caller's token. */
function paths(p: Provider): [string, string][] {
  const dir = folder(p);
  const mirror: [string, string][] = [
    ['mirror index', `${dir}/index.json`],
    ['mirror version', `${dir}/${p.version}.json`],
    ['zip with a token', `${dir}/terraform-provider-${p.type}_${p.version}_linux_amd64.zip`],
  ];
  if (!p.inHouse) return mirror;
  return [
    ...mirror,
    ['SHA256SUMS with a token', `${dir}/terraform-provider-${p.type}_${p.version}_SHA256SUMS`],
    ['signature with a token', `${dir}/terraform-provider-${p.type}_${p.version}_SHA256SUMS.sig`],
    ['registry versions', `v1/providers/${p.namespace}/${p.type}/versions`],
    ['registry download', `v1/providers/${p.namespace}/${p.type}/${p.version}/download/linux/amd64`],
  ];
}

/** A URL the registry signed, fetched with no token, as Terraform's package fetch does. */
async function bare(url: URL): Promise<number> {
  const res = await request(url);
  await res.body.dump();
  return res.statusCode;
}

/** The signed URLs a caller is handed for a provider: the network mirror's zip, and providers.v1's zip, SHA256SUMS and signature. */
async function signedUrls(caller: CallerKind, p: Provider): Promise<URL[]> {
  const versionDoc = `${folder(p)}/${p.version}.json`;
  const urls = [new URL((await get(site, caller, versionDoc)).json().archives.linux_amd64.url, new URL(versionDoc, site.server.url))];
  if (!p.inHouse) return urls;
  const downloadDoc = `v1/providers/${p.namespace}/${p.type}/${p.version}/download/linux/amd64`;
  const doc = (await get(site, caller, downloadDoc)).json();
  for (const field of ['download_url', 'shasums_url', 'shasums_signature_url']) urls.push(new URL(doc[field], new URL(downloadDoc, site.server.url)));
  return urls;
}

describe('every provider path x every caller', () => {
  for (const caller of CALLERS) {
    const visible = VISIBLE_PROVIDERS[caller];
    it(`${caller}: providers of ${visible ? visible.join(', ') : 'nobody (401)'}`, async () => {
      for (const p of PROVIDERS) {
        for (const [what, path] of paths(p)) {
          const res = await get(site, caller, path);
          const want = visible === undefined ? 401 : visible.includes(p.namespace) ? 200 : 404;
          expect(res.status, `${caller} ${what} ${p.namespace}`).toBe(want);
          if (want === 404) {
            // A provider that is there but hidden answers as one that is not there at all.
            const missing = await get(site, caller, path.replace(`/${p.namespace}/`, '/nobody/'));
            expect(res.text, `${caller} ${what} ${p.namespace}`).toBe(missing.text);
          }
        }
        if (visible?.includes(p.namespace))
          for (const url of await signedUrls(caller, p)) expect(await bare(url), `${caller} signed ${url.pathname}`).toBe(200);
      }
      const index = await get(site, caller, 'providers-index.json');
      expect(index.status).toBe(visible ? 200 : 401);
      if (visible)
        expect(
          index
            .json()
            .providers.map((p: { namespace: string }) => p.namespace)
            .sort(),
        ).toEqual(visible);
    });
  }

  it('a refusal of a hidden provider leaves an audit line naming it, never a token', async () => {
    site.audit.length = 0;
    await get(site, 'other', `${folder({ hostname: PROVIDER_HOST, namespace: 'acme', type: 'widgets' })}/index.json`);
    await get(site, 'other', 'v1/providers/acme/widgets/versions');
    expect(site.audit).toEqual([
      expect.stringMatching(
        /^refused GET \/providers\/registry\.example\.com\/acme\/widgets\/index\.json 404 who=organization:omega why="provider registry\.example\.com\/acme\/widgets is not readable by this caller"$/,
      ),
      expect.stringMatching(
        /^refused GET \/v1\/providers\/acme\/widgets\/versions 404 who=organization:omega why="provider acme\/widgets is not readable by this caller"$/,
      ),
    ]);
  });
});

describe('provider sharing through the admin API (spec 3.3), on the next request', () => {
  const acmeIndex = `${folder({ hostname: PROVIDER_HOST, namespace: 'acme', type: 'widgets' })}/index.json`;
  const acme = () => site.api('GET', 'admin/organizations/acme');
  const consumers = async () => (await site.api('GET', 'admin/organizations/acme/relationships/provider-consumers')).json.data.map((o: { id: string }) => o.id);

  it('global sharing opens acme’s provider to every organization and clears its consumers; setting consumers turns it off again', async () => {
    expect((await get(site, 'other', acmeIndex)).status).toBe(404);
    expect(
      (await site.api('PATCH', 'admin/organizations/acme', { data: { type: 'organizations', attributes: { 'global-provider-sharing': true } } })).status,
    ).toBe(200);
    expect((await get(site, 'other', acmeIndex)).status).toBe(200);
    expect((await get(site, 'consumer', acmeIndex)).status).toBe(200);
    expect(await consumers()).toEqual([]);
    // Module sharing is another matter: omega still reads none of acme's modules.
    expect((await get(site, 'other', 'v1/modules/acme/hello/null/versions')).status).toBe(404);

    const set = await site.api('PATCH', 'admin/organizations/acme/relationships/provider-consumers', { data: [{ type: 'organizations', id: 'gamma' }] });
    expect(set.status).toBe(204);
    expect((await acme()).json.data.attributes['global-provider-sharing']).toBe(false);
    expect(await consumers()).toEqual(['gamma']);
    expect((await get(site, 'other', acmeIndex)).status).toBe(404);
    expect((await get(site, 'consumer', acmeIndex)).status).toBe(200);
  });

  it('the consumers PATCH takes the module twin’s body and refuses what it refuses (422, or 404 for anyone but a site administrator)', async () => {
    const path = 'admin/organizations/acme/relationships/provider-consumers';
    const unknown = await site.api('PATCH', path, { data: [{ type: 'organizations', id: 'nope' }] });
    expect(unknown.status).toBe(422);
    expect(unknown.json.errors[0].source.pointer).toBe('/data/0/id');
    expect((await site.api('PATCH', path, { data: [{ type: 'organizations', id: 'acme' }] })).status).toBe(422);
    expect((await site.api('PATCH', path, { data: 'gamma' })).status).toBe(422);
    expect((await site.api('PATCH', path, { data: [] }, site.tokens.owner)).status).toBe(404);
    expect(await consumers()).toEqual(['gamma']);
  });

  it('an organization whose name differs from a provider namespace only in case owns its providers (Terraform folds provider addresses)', async () => {
    const random = `${folder(PUBLIC_PROVIDER)}/index.json`;
    expect((await get(site, 'other', random)).status).toBe(200);
    // Made with the CLI's own function, as `modmirror org create HashiCorp` would: it counts on the next request.
    await createOrganization(new Store(site.data), { name: 'HashiCorp', email: 'hashicorp@example.com' });
    try {
      const hidden = await get(site, 'other', random);
      expect(hidden.status).toBe(404);
      expect(hidden.text).toBe((await get(site, 'other', random.replace('/hashicorp/', '/nobody/'))).text);
      expect((await get(site, 'other', 'providers-index.json')).json().providers.map((p: { namespace: string }) => p.namespace)).not.toContain('hashicorp');
      expect((await get(site, 'admin', random)).status).toBe(200);
    } finally {
      expect((await site.api('DELETE', 'admin/organizations/HashiCorp')).status).toBe(204);
    }
    expect((await get(site, 'other', random)).status).toBe(200);
  });

  it('a signed URL stops working once its token may no longer read the provider, and when the organization is disabled', async () => {
    const p = PROVIDERS[0]!;
    const [mirrorZip, registryZip] = await signedUrls('consumer', p);
    expect(await bare(mirrorZip!)).toBe(200);
    await site.api('PATCH', 'admin/organizations/acme/relationships/provider-consumers', { data: [] });
    expect(await bare(mirrorZip!)).toBe(404);
    expect(await bare(registryZip!)).toBe(404);
    await site.api('PATCH', 'admin/organizations/acme/relationships/provider-consumers', { data: [{ type: 'organizations', id: 'gamma' }] });
    expect(await bare(mirrorZip!)).toBe(200);

    const [members] = await signedUrls('user', p);
    expect(await bare(members!)).toBe(200);
    await site.api('PATCH', 'admin/organizations/acme', { data: { type: 'organizations', attributes: { 'is-disabled': true } } });
    try {
      expect(await bare(members!)).toBe(404);
      expect(await bare(mirrorZip!)).toBe(404);
      expect((await get(site, 'admin', acmeIndex)).status).toBe(404);
    } finally {
      await site.api('PATCH', 'admin/organizations/acme', { data: { type: 'organizations', attributes: { 'is-disabled': false } } });
    }
    expect(await bare(members!)).toBe(200);
  });
});

describe.skipIf(!hasTerraform)('terraform init of an in-house provider in a private registry (real client)', () => {
  /** `terraform init` of a configuration requiring acme/widgets, with `caller`'s token for the mirror's host. */
  function init(caller: CallerKind): Promise<TerraformResult> {
    return terraformInit(join(site.dir, `tf-${caller}`), {
      // The host block stands in for discovery (HTTPS only) and points providers.v1 at the test server.
      'cli.tfrc': `host "${PROVIDER_HOST}" {\n  services = { "providers.v1" = "${site.server.url}v1/providers/" }\n}\ncredentials "${PROVIDER_HOST}" {\n  token = "${site.tokens[caller]}"\n}\n`,
      'infra/main.tf': `terraform {\n  required_providers {\n    widgets = { source = "${PROVIDER_HOST}/acme/widgets", version = "1.0.0" }\n  }\n}\n`,
    });
  }

  it('installs it for a provider consumer and refuses it to another organization as a provider that does not exist', async () => {
    const consumer = await init('consumer');
    expect(consumer.output).toContain(`Installed ${PROVIDER_HOST}/acme/widgets v1.0.0`);
    expect(consumer.code).toBe(0);
    const other = await init('other');
    expect(other.code).toBe(1);
    expect(other.output).toMatch(
      /provider\s+registry\s+registry\.example\.com\s+does\s+not\s+have\s+a\s+provider\s+named\s+registry\.example\.com\/acme\/widgets/,
    );
  }, 180_000);
});

describe('a mirror built with a baseUrl', () => {
  it('signs the absolute URLs of its download documents, which Terraform fetches with no token', async () => {
    const rebuilt = await runCli(['build', '--base-url', site.server.url, '--json'], site.dir);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    const downloadDoc = 'v1/providers/acme/widgets/1.0.0/download/linux/amd64';
    const doc = (await get(site, 'consumer', downloadDoc)).json();
    for (const field of ['download_url', 'shasums_url', 'shasums_signature_url']) {
      expect(doc[field], field).toMatch(new RegExp(`^${site.server.url}providers/${PROVIDER_HOST.replace(/\./g, '\\.')}/acme/widgets/[^?]+\\?.*signature=`));
      expect(await bare(new URL(doc[field])), field).toBe(200);
      // The signature covers that file only: unsigned, or signed for another file, it is refused.
      expect(await bare(new URL(doc[field].split('?')[0]))).toBe(401);
    }
    expect((await get(site, 'other', downloadDoc)).status).toBe(404);
  });
});
