// serve --upstream for providers: the network mirror's index.json lists the
// upstream's versions (providers.v1) beside the held ones; a VERSION.json the
// mirror lacks is filled first (each package checked against the upstream's
// signed SHA256SUMS, as sync does, then published into the mirror),
// once for all clients asking at the same moment. Terraform installs the
// provider through it over HTTPS, and again once the upstream is gone.

import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveMirrorConfig } from '../../src/config/index.js';
import type { RunningServer } from '../../src/serve/index.js';
import { takeInProviders } from '../../src/upstream/providers.js';
import { hasTerraform, makeCertificates, mirrorManifest, runCli, tempDir, terraformInit } from '../helpers.js';
import { startProviderUpstream, type ProviderUpstream } from '../sync/provider-upstream.js';
import { emptyMirror, startCache } from './site.js';

const dir = tempDir('mm-upstream-providers-');
const log: string[] = [];
let upstream: ProviderUpstream;
let cache: RunningServer;
let ca: string;

beforeAll(async () => {
  upstream = await startProviderUpstream(join(dir, 'upstream'), [
    { namespace: 'acme', type: 'widgets', versions: { '1.0.0': ['linux_amd64'], '1.1.0': ['linux_amd64', 'darwin_arm64'] } },
    { namespace: 'acme', type: 'gadgets', versions: { '1.0.0': ['linux_amd64'] } },
    { namespace: 'acme', type: 'sprockets', versions: { '1.0.0': ['linux_amd64'], '2.0.0': ['linux_amd64'] } },
  ]);
  await emptyMirror(dir);
  const certs = makeCertificates(dir);
  ca = certs.ca;
  const config = resolveMirrorConfig({ out: join(dir, 'cache') }, dir);
  const into = join(dir, 'data/upstream-providers');
  cache = await startCache(
    dir,
    {
      url: new URL(upstream.url),
      ttlSeconds: 1,
      providers: { into, platforms: config.platforms, path: config.providersPath, commit: takeInProviders(config, into) },
    },
    log,
    { cert: certs.cert, key: certs.key },
  );
});
afterAll(async () => {
  await cache?.close();
  upstream?.close();
});

const PROVIDER = 'providers/registry.terraform.io/acme/widgets';

describe('serve --upstream, providers', () => {
  it('lists the upstream versions, and fills a version once for 10 clients asking at once', async () => {
    const index = await httpsJson(`${PROVIDER}/index.json`);
    expect(index.status).toBe(200);
    expect(index.headers['x-modmirror-cache']).toBe('miss');
    expect(index.body).toEqual({ versions: { '1.1.0': {}, '1.0.0': {} } });

    const answers = await Promise.all(Array.from({ length: 10 }, () => httpsJson(`${PROVIDER}/1.1.0.json`)));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    const archives = (answers[0]!.body as { archives: Record<string, { url: string; hashes: string[] }> }).archives;
    // The config's platforms only (linux_amd64 by default), whatever else the upstream has.
    expect(Object.keys(archives)).toEqual(['linux_amd64']);
    expect(upstream.requests.filter((p) => p.endsWith('/1.1.0/download/linux/amd64'))).toHaveLength(1);
    expect(upstream.requests.filter((p) => p.endsWith('_linux_amd64.zip'))).toHaveLength(1);
    expect(log.some((l) => /SHA256SUMS signed by/.test(l))).toBe(true);

    const zip = await httpsBytes(`${PROVIDER}/${archives['linux_amd64']!.url}`);
    expect(zip.status).toBe(200);
    expect(archives['linux_amd64']!.hashes).toContain(`zh:${createHash('sha256').update(zip.body).digest('hex')}`);
    const verified = await runCli(['verify', '--mirror', 'cache'], dir);
    expect(verified.code, verified.stderr).toBe(0);
    // Recorded as a module version is: the upstream's sha256 (its signed SHA256SUMS) beside the mirror's.
    const listed = await runCli(['cache', 'list', '--mirror', 'cache', '--json'], dir);
    expect(listed.code, listed.stderr).toBe(0);
    const zipSha256 = createHash('sha256').update(zip.body).digest('hex');
    expect((JSON.parse(listed.stdout) as { providers: unknown[] }).providers).toEqual([
      expect.objectContaining({
        provider: 'registry.terraform.io/acme/widgets',
        version: '1.1.0',
        platform: 'linux_amd64',
        sha256: zipSha256,
        upstream_sha256: zipSha256,
        fetched: expect.stringMatching(/^\d{4}-/) as unknown,
      }),
    ]);
  });

  it('refuses a package whose SHA256SUMS signature does not check out (502, nothing kept), and never fetches a held version again', async () => {
    upstream.faults.badSignature.add('widgets/1.0.0');
    const refused = await httpsJson(`${PROVIDER}/1.0.0.json`);
    expect(refused.status).toBe(502);
    expect((refused.body as { errors: string[] }).errors[0]).toMatch(/could not give registry\.terraform\.io\/acme\/widgets 1\.0\.0: .*signature/i);
    expect((await httpsJson(`${PROVIDER}/index.json`)).body).toEqual({ versions: { '1.1.0': {}, '1.0.0': {} } });
    const verified = await runCli(['verify', '--mirror', 'cache'], dir);
    expect(verified.code, verified.stderr).toBe(0);

    // A zip other than the one its signed SHA256SUMS names: refused the same way.
    upstream.faults.wrongZip.add('gadgets/1.0.0/linux_amd64');
    const wrong = await httpsJson('providers/registry.terraform.io/acme/gadgets/1.0.0.json');
    expect(wrong.status).toBe(502);
    expect((wrong.body as { errors: string[] }).errors[0]).toMatch(
      /could not give registry\.terraform\.io\/acme\/gadgets 1\.0\.0: .*incorrect SHA-256 checksum/,
    );
    expect(log.some((l) => /^upstream: .*acme\/gadgets 1\.0\.0.*incorrect SHA-256 checksum/.test(l))).toBe(true);
    expect(Object.keys(mirrorManifest(join(dir, 'cache')).providers as object)).toEqual(['registry.terraform.io/acme/widgets']);
    expect((await runCli(['verify', '--mirror', 'cache'], dir)).code).toBe(0);

    // The upstream re-zips 1.1.0: the cache answers with what it holds and does not ask.
    const before = await httpsJson(`${PROVIDER}/1.1.0.json`);
    const name = [...upstream.zips.keys()].find((k) => k.includes('1.1.0_linux_amd64'))!;
    upstream.zips.set(name, Buffer.concat([upstream.zips.get(name)!, Buffer.from('other bytes')]));
    const downloads = upstream.requests.length;
    const after = await httpsJson(`${PROVIDER}/1.1.0.json`);
    expect(after.body).toEqual(before.body);
    expect(upstream.requests.length).toBe(downloads);
  });

  it("serves the upstream's providers.v1 for its host: its versions, and a download document with the upstream's signed SHA256SUMS and keys", async () => {
    const REGISTRY = 'providers/registry.terraform.io/acme/sprockets';
    const versions = await httpsJson(`${REGISTRY}/versions`);
    expect(versions.status).toBe(200);
    expect(versions.body).toEqual({
      versions: [
        { version: '2.0.0', protocols: ['5.0'], platforms: [{ os: 'linux', arch: 'amd64' }] },
        { version: '1.0.0', protocols: ['5.0'], platforms: [{ os: 'linux', arch: 'amd64' }] },
      ],
    });

    const answers = await Promise.all(Array.from({ length: 5 }, () => httpsJson(`${REGISTRY}/2.0.0/download/linux/amd64`)));
    expect(
      answers.map((a) => a.status),
      JSON.stringify(answers[0]!.body),
    ).toEqual(Array(5).fill(200));
    expect(upstream.requests.filter((p) => p.endsWith('sprockets_2.0.0_linux_amd64.zip'))).toHaveLength(1);
    const document = answers[0]!.body as Record<string, unknown>;
    const theirs = (await (await fetch(new URL('v1/providers/acme/sprockets/2.0.0/download/linux/amd64', upstream.url))).json()) as Record<string, unknown>;
    expect(document).toMatchObject({ protocols: ['5.0'], os: 'linux', arch: 'amd64', filename: theirs['filename'], shasum: theirs['shasum'] });
    // The keys as the upstream lists them, trust signature and source included.
    expect(document['signing_keys']).toEqual(theirs['signing_keys']);
    const at = (field: string) => new URL(document[field] as string, new URL(`${REGISTRY}/2.0.0/download/linux/amd64`, cache.url)).pathname.slice(1);
    const sums = await httpsBytes(at('shasums_url'));
    const upstreamSums = Buffer.from(await (await fetch(new URL(theirs['shasums_url'] as string, upstream.url))).arrayBuffer());
    expect(sums.body).toEqual(upstreamSums);
    expect((await httpsBytes(at('shasums_signature_url'))).status).toBe(200);
    const zip = await httpsBytes(at('download_url'));
    expect(createHash('sha256').update(zip.body).digest('hex')).toBe(document['shasum']);
    // Held now: listed as the mirror serves it, from what it holds; the mirror verifies with it.
    expect((await httpsJson(`${REGISTRY}/versions`)).body).toEqual(versions.body);
    expect((await runCli(['verify', '--mirror', 'cache'], dir)).code).toBe(0);

    // Another platform than the config's is not filled: 404, nothing asked.
    const asked = upstream.requests.length;
    expect((await httpsJson(`${REGISTRY}/2.0.0/download/darwin/arm64`)).status).toBe(404);
    expect(upstream.requests.length).toBe(asked);

    // A SHA256SUMS whose signature does not verify: 502 with the registry's JSON body, and nothing kept.
    upstream.faults.badSignature.add('sprockets/1.0.0');
    const refused = await httpsJson(`${REGISTRY}/1.0.0/download/linux/amd64`);
    expect(refused.status).toBe(502);
    expect((refused.body as { errors: string[] }).errors[0]).toMatch(/could not give registry\.terraform\.io\/acme\/sprockets 1\.0\.0: .*signature/i);
    const held = (mirrorManifest(join(dir, 'cache')).providers as Record<string, { versions: { version: string }[] }>)['registry.terraform.io/acme/sprockets'];
    expect(held?.versions.map((v) => v.version)).toEqual(['2.0.0']);
    expect(existsSync(join(dir, 'data/upstream-providers/registry.terraform.io/acme/sprockets/terraform-provider-sprockets_1.0.0_SHA256SUMS'))).toBe(false);
    expect((await runCli(['verify', '--mirror', 'cache'], dir)).code).toBe(0);
  });

  it.skipIf(!hasTerraform)(
    'installs the provider with terraform init through the cache, and again with the upstream gone',
    async () => {
      const init = (folder: string) =>
        terraformInit(
          join(dir, folder),
          {
            'cli.tfrc': `provider_installation {\n  network_mirror {\n    url = "${cache.url}providers/"\n  }\n}\n`,
            'infra/main.tf': 'terraform {\n  required_providers {\n    widgets = { source = "acme/widgets", version = "~> 1.0" }\n  }\n}\n',
          },
          { SSL_CERT_FILE: ca },
        );
      const first = await init('first');
      expect(first.output).toContain('Installed acme/widgets v1.1.0');
      expect(first.code).toBe(0);
      upstream.close();
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const second = await init('second');
      expect(second.output).toContain('Installed acme/widgets v1.1.0');
      expect(second.code).toBe(0);
      expect(log.some((l) => /could not give the versions of registry\.terraform\.io\/acme\/widgets/.test(l))).toBe(true);
    },
    120_000,
  );
});

async function httpsBytes(path: string): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> {
  const { request } = await import('node:https');
  const { readFileSync } = await import('node:fs');
  return new Promise((resolve, reject) => {
    request(new URL(path, cache.url), { ca: readFileSync(ca) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers as Record<string, string>, body: Buffer.concat(chunks) }));
    })
      .on('error', reject)
      .end();
  });
}

async function httpsJson(path: string): Promise<{ status: number; headers: Record<string, string>; body: unknown }> {
  const r = await httpsBytes(path);
  return { ...r, body: JSON.parse(r.body.toString('utf8')) as unknown };
}
