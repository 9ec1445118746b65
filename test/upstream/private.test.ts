// serve --upstream with --access private: only a caller with a token makes
// the cache fetch; a namespace that is an organization's is never asked of
// the upstream (its name would leave the site), whoever asks; what the cache
// fetched (a namespace no organization has) is read by every token holder,
// of any organization, while the organizations' own modules stay theirs.

import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createOrganization, createToken } from '../../src/management/bootstrap.js';
import { Store } from '../../src/management/store.js';
import { resolveMirrorConfig } from '../../src/config/index.js';
import type { RunningServer } from '../../src/serve/index.js';
import { takeInProviders } from '../../src/upstream/providers.js';
import { mirrorManifest, runCli, serveMirror, tempDir, writeFiles } from '../helpers.js';
import { CACHE_HEADER } from '../../src/serve/upstream.js';
import { startProviderUpstream, type ProviderUpstream } from '../sync/provider-upstream.js';
import { countingProxy, emptyMirror, startUpstream, type CountingProxy } from './site.js';

const dir = tempDir('mm-upstream-private-');
const log: string[] = [];
let proxy: CountingProxy;
let cache: RunningServer;
const tokens: Record<'acme' | 'beta', string> = { acme: '', beta: '' };

beforeAll(async () => {
  const upstream = await startUpstream(join(dir, 'upstream'), {
    // It calls a public module, filled ahead, and one in a namespace that is an organization's here, never asked for.
    'mods/terraform-aws-modules/vpc/aws/5.0.0/main.tf':
      'variable "cidr" {}\nmodule "sg" {\n  source  = "terraform-aws-modules/sg/aws"\n  version = "~> 1.0"\n}\nmodule "leak" {\n  source  = "acme/leak/aws"\n  version = "1.0.0"\n}\n',
    'mods/terraform-aws-modules/sg/aws/1.0.0/main.tf': 'variable "ports" {}\n',
    // A public module whose namespace happens to be an organization's here.
    'mods/acme/leak/aws/1.0.0/main.tf': 'variable "x" {}\n',
  });
  proxy = await countingProxy(upstream.url);
  // The site's mirror: acme's own module, private to acme.
  writeFiles(dir, { 'own/acme/net/aws/1.0.0/main.tf': 'variable "own" {}\n' });
  const built = await runCli(['build', '--modules', 'own', '--mirror', 'cache'], dir);
  expect(built.code, built.stderr).toBe(0);
  const store = new Store(join(dir, 'data'));
  for (const org of ['acme', 'beta'] as const) {
    await createOrganization(store, { name: org, email: `${org}@example.com` });
    tokens[org] = await createToken(store, { organization: org });
  }
  cache = await serveMirror(dir, {
    dir: join(dir, 'cache'),
    access: 'private',
    audit: () => {},
    upstream: { url: new URL(proxy.url), ttlSeconds: 60, log: (line) => log.push(line) },
  });
});

afterAll(() => proxy?.close());

async function get(path: string, token?: string): Promise<{ status: number; body: any }> {
  const res = await request(new URL(path, cache.url), { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const text = await res.body.text();
  return { status: res.statusCode, body: text === '' ? undefined : JSON.parse(text) };
}

describe('serve --upstream --access private', () => {
  it('fetches nothing for a caller without a token', async () => {
    expect((await get('v1/modules/terraform-aws-modules/vpc/aws/versions')).status).toBe(401);
    expect((await get('v1/modules/terraform-aws-modules/vpc/aws/5.0.0/download')).status).toBe(401);
    expect(proxy.paths).toEqual([]);
  });

  it("never asks the upstream about an organization's namespace, for its own members or anyone else", async () => {
    for (const token of [tokens.acme, tokens.beta]) {
      expect((await get('v1/modules/acme/leak/aws/versions', token)).status).toBe(404);
      expect((await get('v1/modules/acme/leak/aws/1.0.0/download', token)).status).toBe(404);
      expect((await get('v1/modules/acme/leak/aws', token)).status).toBe(404);
    }
    // acme's own module is answered from the mirror, to acme only.
    const own = await get('v1/modules/acme/net/aws/versions', tokens.acme);
    expect(own.body.modules[0].versions.map((v: { version: string }) => v.version)).toEqual(['1.0.0']);
    expect((await get('v1/modules/acme/net/aws/versions', tokens.beta)).status).toBe(404);
    expect(proxy.paths.filter((p) => p.includes('/acme/'))).toEqual([]);
  });

  it('fills a public module for a token holder, and every organization reads it', async () => {
    const versions = await get('v1/modules/terraform-aws-modules/vpc/aws/versions', tokens.beta);
    expect(versions.status).toBe(200);
    expect(versions.body.modules[0].versions.map((v: { version: string }) => v.version)).toEqual(['5.0.0']);
    expect((await get('v1/modules/terraform-aws-modules/vpc/aws/5.0.0/download', tokens.beta)).status).toBe(200);
    expect(proxy.count('/terraform-aws-modules/vpc/aws/5.0.0/download')).toBe(1);
    // acme reads what beta's request filled, from the mirror.
    const detail = await get('v1/modules/terraform-aws-modules/vpc/aws/5.0.0', tokens.acme);
    expect(detail.status).toBe(200);
    expect(detail.body.root.inputs.map((i: { name: string }) => i.name)).toEqual(['cidr']);
    expect(proxy.count('/terraform-aws-modules/vpc/aws/5.0.0/download')).toBe(1);
    // The public module it calls is filled ahead; the organization's namespace it calls is not asked for.
    await vi.waitFor(() => expect(mirrorManifest(join(dir, 'cache')).modules['terraform-aws-modules/sg/aws']).toBeDefined(), {
      timeout: 10_000,
      interval: 50,
    });
    const sg = await request(new URL('v1/modules/terraform-aws-modules/sg/aws/1.0.0', cache.url), { headers: { authorization: `Bearer ${tokens.acme}` } });
    expect(sg.statusCode).toBe(200);
    expect(sg.headers[CACHE_HEADER.toLowerCase()]).toBe('hit');
    await sg.body.dump();
    expect(proxy.count('/terraform-aws-modules/sg/aws/1.0.0/download')).toBe(1);
    expect(proxy.paths.filter((p) => p.includes('/acme/'))).toEqual([]);
    expect((await runCli(['verify', '--mirror', 'cache'], dir)).code).toBe(0);
  });
});

describe('serve --upstream --access private, providers', () => {
  const here = tempDir('mm-upstream-private-providers-');
  let providers: ProviderUpstream;
  let site: RunningServer;
  const keys: Record<'acme' | 'beta', string> = { acme: '', beta: '' };
  const at = (path: string) => new URL(`providers/registry.terraform.io/${path}`, site.url).href;
  const fetchAs = async (url: string, token?: string) => {
    const res = await request(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
    return { status: res.statusCode, body: Buffer.from(await res.body.arrayBuffer()) };
  };

  beforeAll(async () => {
    providers = await startProviderUpstream(join(here, 'upstream'), [
      { namespace: 'hashicorp', type: 'random', versions: { '3.0.0': ['linux_amd64'] } },
      { namespace: 'hashicorp', type: 'null', versions: { '3.2.0': ['linux_amd64'] } },
      { namespace: 'acme', type: 'widgets', versions: { '1.0.0': ['linux_amd64'] } },
    ]);
    await emptyMirror(here);
    const store = new Store(join(here, 'data'));
    for (const org of ['acme', 'beta'] as const) {
      await createOrganization(store, { name: org, email: `${org}@example.com` });
      keys[org] = await createToken(store, { organization: org });
    }
    const config = resolveMirrorConfig({ out: join(here, 'cache') }, here);
    const into = join(here, 'data/upstream-providers');
    site = await serveMirror(here, {
      dir: join(here, 'cache'),
      access: 'private',
      audit: () => {},
      upstream: {
        url: new URL(providers.url),
        ttlSeconds: 60,
        log: () => {},
        providers: { into, platforms: config.platforms, path: config.providersPath, commit: takeInProviders(config, into) },
      },
    });
  });
  afterAll(() => providers?.close());

  it('fetches for a token holder only, and every organization installs the package by its signed URL', async () => {
    expect((await fetchAs(at('hashicorp/random/3.0.0.json'))).status).toBe(401);
    expect(providers.requests).toEqual([]);
    const filled = await fetchAs(at('hashicorp/random/3.0.0.json'), keys.beta);
    expect(filled.status).toBe(200);
    for (const token of [keys.beta, keys.acme]) {
      const document = await fetchAs(at('hashicorp/random/3.0.0.json'), token);
      const { url } = (JSON.parse(document.body.toString('utf8')) as { archives: Record<string, { url: string }> }).archives['linux_amd64']!;
      // As Terraform fetches it: the URL the document gives, with no token.
      const zip = await fetchAs(new URL(url, at('hashicorp/random/3.0.0.json')).href);
      expect(zip.status).toBe(200);
      expect(zip.body.equals(providers.zips.get('terraform-provider-random_3.0.0_linux_amd64.zip')!)).toBe(true);
    }
    expect(providers.requests.filter((p) => p.endsWith('_linux_amd64.zip'))).toHaveLength(1);
  });

  it('over providers.v1 too: fills for a token holder only, and every file the download document names is fetched by its signed URL', async () => {
    const download = at('hashicorp/null/3.2.0/download/linux/amd64');
    expect((await fetchAs(at('hashicorp/null/versions'))).status).toBe(401);
    expect((await fetchAs(download)).status).toBe(401);
    expect(providers.requests.filter((p) => p.includes('/null/'))).toEqual([]);
    for (const token of [keys.beta, keys.acme]) {
      const answer = await fetchAs(download, token);
      expect(answer.status).toBe(200);
      const document = JSON.parse(answer.body.toString('utf8')) as Record<string, string>;
      for (const field of ['download_url', 'shasums_url', 'shasums_signature_url']) {
        const url = new URL(document[field]!, download);
        expect(url.search).toMatch(/[?&]/);
        // As Terraform fetches them: with no token.
        expect((await fetchAs(url.href)).status).toBe(200);
        url.search = '';
        expect((await fetchAs(url.href)).status).toBe(401);
      }
    }
    expect(providers.requests.filter((p) => p.endsWith('null_3.2.0_linux_amd64.zip'))).toHaveLength(1);
  });

  it("never asks the upstream about a provider in an organization's namespace", async () => {
    for (const token of [keys.acme, keys.beta]) {
      expect((await fetchAs(at('acme/widgets/1.0.0.json'), token)).status).toBe(404);
      expect((await fetchAs(at('acme/widgets/index.json'), token)).status).toBe(404);
      expect((await fetchAs(at('acme/widgets/versions'), token)).status).toBe(404);
      expect((await fetchAs(at('acme/widgets/1.0.0/download/linux/amd64'), token)).status).toBe(404);
    }
    expect(providers.requests.filter((p) => p.includes('/acme/'))).toEqual([]);
  });
});
