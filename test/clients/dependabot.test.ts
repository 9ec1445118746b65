// Dependabot against a modmirror registry. Dependabot cannot run here, so each
// test sends exactly the requests dependabot-core 0.392.0 sends
// (dependabot/dependabot-core 54c10285aa, terraform/lib/dependabot/terraform/
// registry_client.rb) and reads the answers as it does:
//
// - discovery: GET https://HOST/.well-known/terraform.json (HTTPS only). A
//   service URL is kept when it is https, refused when it is http ("Unsupported
//   scheme provided"), and a path is put on https://HOST (url_for).
// - all_module_versions: GET URI.join(modules.v1, "NS/NAME/PROVIDER/versions"),
//   status 200, modules.first.versions[].version.
// - all_provider_versions: GET URI.join(providers.v1, "NS/TYPE/versions"),
//   status 200, versions[].version.
// - source (the metadata finder, for release notes): for a module GET
//   URI.join(modules.v1, "NS/NAME/PROVIDER/VERSION/download") and reads
//   X-Terraform-Get only when the status is 204, resolving a location that
//   starts with /, ./ or ../ against the download URL; for a provider GET
//   URI.join(providers.v1, "NS/TYPE/VERSION") and reads `source` only on 200.
//
// Every request goes through Dependabot::RegistryClient.get (Excon 1.6 with
// SharedHelpers.excon_defaults): `User-Agent: dependabot-core/VERSION
// excon/VERSION ruby/VERSION (PLATFORM) (+https://github.com/dependabot/dependabot-core)`,
// and Excon's Decompress middleware's `Accept-Encoding: deflate, gzip`; no
// Accept. A `terraform_registry` credential adds `Authorization: Bearer TOKEN`.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientRequest } from '../http-client.js';
import { VERSIONS } from './install.js';
import { BOT_HOSTS, PROVIDER_RELEASES, startBotMirror, type BotMirror } from './update-bots.js';

const HEADERS = {
  'User-Agent': 'dependabot-core/0.392.0 excon/1.6.0 ruby/4.0.5 (x86_64-linux) (+https://github.com/dependabot/dependabot-core)',
  'Accept-Encoding': 'deflate, gzip',
};

let mirror: BotMirror;
beforeAll(async () => {
  mirror = await startBotMirror('mm-dependabot-');
}, 300_000);
afterAll(async () => {
  await mirror?.stop();
});

async function get(url: string) {
  const res = await clientRequest(url, { headers: HEADERS, dispatcher: mirror.dispatcher });
  // Excon's Decompress undoes deflate and gzip only.
  expect([undefined, 'gzip'], url).toContain(res.wireEncoding);
  return res;
}

/** url_for: an https URL as it is, an http one refused, a path put on https://HOSTNAME. */
function urlFor(hostname: string, path: string): string {
  if (/^https:/i.test(path)) return path;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(path)) throw new Error('Unsupported scheme provided');
  return new URL(path, `https://${hostname}`).href;
}

/** Ruby's URI.join(base, relative): RFC 3986 resolution. */
const uriJoin = (base: string, relative: string) => new URL(relative, base).href;

async function serviceUrlFor(hostname: string, key: string): Promise<string> {
  const res = await get(urlFor(hostname, '/.well-known/terraform.json'));
  expect(res.status).toBe(200);
  const services = res.json() as Record<string, string>;
  expect(services[key], `${key} in discovery`).toBeDefined();
  return urlFor(hostname, services[key]!);
}

/** http_get!: 200 or an error (401 authentication, 404 DependencyNotFound, else "Response from registry was STATUS"). */
async function getOk(url: string) {
  const res = await get(url);
  expect(res.status, url).toBe(200);
  return res.json();
}

describe.each(BOT_HOSTS.map((name, index) => [name, index] as const))('dependabot-core 0.392.0 against %s', (_name, index) => {
  const hostname = () => new URL(mirror.hosts[index]!.url).host;

  it('all_module_versions: discovery, then the versions document; every version', async () => {
    const base = await serviceUrlFor(hostname(), 'modules.v1');
    const url = uriJoin(base, 'acme/hello/null/versions');
    expect(url).toBe(`${mirror.hosts[index]!.url}v1/modules/acme/hello/null/versions`);
    const body = await getOk(url);
    const versions = (body.modules[0].versions as { version: string }[]).map((r) => r.version);
    expect([...versions].sort()).toEqual([...VERSIONS].sort());
  });

  it('all_provider_versions: discovery, then the in-house provider versions', async () => {
    const base = await serviceUrlFor(hostname(), 'providers.v1');
    const body = await getOk(uriJoin(base, 'acme/widgets/versions'));
    expect((body.versions as { version: string }[]).map((r) => r.version).sort()).toEqual(Object.keys(PROVIDER_RELEASES).sort());
  });

  it('source of a module: the download answer is 200, not the 204 Dependabot reads, so it links no source (the location is the mirror archive either way)', async () => {
    const base = await serviceUrlFor(hostname(), 'modules.v1');
    const downloadUrl = uriJoin(base, 'acme/hello/null/1.2.3/download');
    const res = await get(downloadUrl);
    // Terraform takes 200 or 204 and OpenTofu reads the 200's body; Dependabot's metadata finder gives up on anything but 204.
    expect(res.status).toBe(200);
    // Had it read the header: a location starting with ./ or / resolves against the download URL, to the archive,
    // which Source.from_url (GitHub, GitLab, Bitbucket, Azure, CodeCommit) takes for no repository.
    const location = res.headers['x-terraform-get'] as string;
    const resolved = /^(\/|\.\/|\.\.\/)/.test(location) ? uriJoin(downloadUrl, location) : location;
    expect(resolved).toBe(`${mirror.hosts[index]!.url}v1/modules/acme/hello/null/1.2.3/hello-null-1.2.3.tar.gz`);
    const archive = await get(resolved);
    expect(archive.status).toBe(200);
    expect(archive.wireEncoding).toBeUndefined();
    expect(archive.body.subarray(0, 2).toString('hex')).toBe('1f8b');
  });

  it('source of a provider: NS/TYPE/VERSION is not a registry document, so no source and no error', async () => {
    const base = await serviceUrlFor(hostname(), 'providers.v1');
    const res = await get(uriJoin(base, 'acme/widgets/1.1.0'));
    expect(res.status).not.toBe(200);
  });
});
