// A private registry to test against: five organizations' modules
// (`<org>/hello/null`), users, a team and tokens made with the management
// commands' own functions, and sharing set through the admin API of the
// running server, as a site administrator would.
//
//   acme   alice (team "platform"), owner olivia; tokens: alice, team, organization
//   beta   shares its modules with acme (module consumers)
//   gamma  shares with everyone (global module sharing)
//   delta  disabled; dave owns it and is in its team; its organization token
//   omega  an organization of its own; its organization token ("other")
//   gamma  also its organization token ("consumer": acme shares its providers with gamma)
//
// With `providers`, each of acme, beta and delta publishes an in-house
// provider (`<org>/<type>` over providers.v1 at registry.example.com, signed),
// and a provider mirrored from a public registry (hashicorp/random) sits in
// the network mirror. Provider sharing differs from module sharing: acme
// shares providers with gamma (provider consumers), beta with everyone
// (global provider sharing).

import { join } from 'node:path';
import { request } from 'undici';
import { createOrganization, createTeam, createToken, createUser } from '../../src/management/bootstrap.js';
import { Store } from '../../src/management/store.js';
import type { RunningServer, ServeOptions } from '../../src/serve/index.js';
import { moduleFiles } from '../clients/install.js';
import { testKey, signRelease } from '../providers/keys.js';
import { writeReleaseFolder } from '../providers/zips.js';
import { runCli, serveMirror, tempDir, writeFiles } from '../helpers.js';

export const ORGANIZATIONS = ['acme', 'beta', 'gamma', 'delta', 'omega'] as const;
export const SITE_VERSIONS = ['1.0.0', '1.2.0'];

export type CallerKind = 'anonymous' | 'unknown' | 'user' | 'team' | 'organization' | 'admin' | 'other' | 'consumer' | 'disabled' | 'disabledMember';

/** What each caller may read, by Terraform Enterprise's rules; undefined: every registry request is a 401. */
export const VISIBLE: Record<CallerKind, string[] | undefined> = {
  anonymous: undefined,
  unknown: undefined,
  user: ['acme', 'beta', 'gamma'],
  team: ['acme', 'beta', 'gamma'],
  organization: ['acme', 'beta', 'gamma'],
  admin: ['acme', 'beta', 'gamma', 'omega'],
  other: ['gamma', 'omega'],
  consumer: ['gamma'],
  // An organization token of a disabled organization is no token at all.
  disabled: undefined,
  // A member (and owner) of only a disabled organization reads what is shared with everyone.
  disabledMember: ['gamma'],
};

/** The in-house providers (`<org>/<type>`), and the namespace of the mirrored public one. */
export const IN_HOUSE_PROVIDERS: Record<string, string> = { acme: 'widgets', beta: 'gizmos', delta: 'dials' };
export const PUBLIC_PROVIDER = { hostname: 'registry.terraform.io', namespace: 'hashicorp', type: 'random' };
export const PROVIDER_HOST = 'registry.example.com';

/** Whose providers each caller reads, by the same rules with provider sharing; a namespace that is no organization's, every token holder. */
export const VISIBLE_PROVIDERS: Record<CallerKind, string[] | undefined> = {
  anonymous: undefined,
  unknown: undefined,
  user: ['acme', 'beta', 'hashicorp'],
  team: ['acme', 'beta', 'hashicorp'],
  organization: ['acme', 'beta', 'hashicorp'],
  // Not delta's: a disabled organization's are read by nobody.
  admin: ['acme', 'beta', 'hashicorp'],
  other: ['beta', 'hashicorp'],
  consumer: ['acme', 'beta', 'hashicorp'],
  disabled: undefined,
  disabledMember: ['beta', 'hashicorp'],
};

export interface PrivateSite {
  dir: string;
  dist: string;
  data: string;
  server: RunningServer;
  tokens: Record<CallerKind, string | undefined> & { owner: string };
  audit: string[];
  /** A management API call as the site administrator (or `token`). */
  api(method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; json: any }>;
  close(): Promise<void>;
}

export async function startPrivateSite(options: { archiveUrlTtlSeconds?: number; providers?: boolean } = {}): Promise<PrivateSite> {
  const dir = tempDir('mm-private-');
  const files: Record<string, string> = {};
  for (const org of ORGANIZATIONS)
    for (const v of SITE_VERSIONS) for (const [path, text] of Object.entries(moduleFiles(`${v}`))) files[`mods/${org}/hello/null/${v}/${path}`] = text;
  writeFiles(dir, files);
  if (options.providers) await writeProviderReleases(dir);
  const built = await runCli(options.providers ? ['build', '--json'] : ['build', '--modules', 'mods', '--mirror', 'dist', '--json'], dir);
  if (built.code !== 0) throw new Error(built.stderr);

  const data = join(dir, 'data');
  const store = new Store(data);
  for (const [username, siteAdmin] of [
    ['admin', true],
    ['alice', false],
    ['olivia', false],
    ['dave', false],
    ['omar', false],
  ] as const) {
    await createUser(store, { username, email: `${username}@example.com`, siteAdmin });
  }
  const owners: Record<string, string> = { acme: 'olivia', omega: 'omar', delta: 'dave' };
  for (const org of ORGANIZATIONS) await createOrganization(store, { name: org, email: `${org}@example.com`, owner: owners[org] });
  await createTeam(store, { organization: 'acme', name: 'platform', members: ['alice'] });
  await createTeam(store, { organization: 'delta', name: 'ops', members: ['dave'] });
  const tokens = {
    anonymous: undefined,
    unknown: 'mm.not-a-token-this-registry-knows',
    user: await createToken(store, { user: 'alice' }),
    team: await createToken(store, { team: 'platform', organization: 'acme' }),
    organization: await createToken(store, { organization: 'acme' }),
    admin: await createToken(store, { user: 'admin' }),
    other: await createToken(store, { organization: 'omega' }),
    consumer: await createToken(store, { organization: 'gamma' }),
    disabled: await createToken(store, { organization: 'delta' }),
    disabledMember: await createToken(store, { user: 'dave' }),
    owner: await createToken(store, { user: 'olivia' }),
  };

  const audit: string[] = [];
  const server = await startPrivateServer(dir, audit, { archiveUrlTtlSeconds: options.archiveUrlTtlSeconds });
  const api = (method: string, path: string, body?: unknown, token = tokens.admin) => managementApi(server, token, method, path, body);
  const must = async (call: Promise<{ status: number; json: any }>) => {
    const { status, json } = await call;
    if (status >= 300) throw new Error(`setup: ${status} ${JSON.stringify(json)}`);
  };
  await must(api('PATCH', 'admin/organizations/beta/relationships/module-consumers', { data: [{ type: 'organizations', id: 'acme' }] }));
  await must(api('PATCH', 'admin/organizations/gamma', { data: { type: 'organizations', attributes: { 'global-module-sharing': true } } }));
  await must(api('PATCH', 'admin/organizations/acme/relationships/provider-consumers', { data: [{ type: 'organizations', id: 'gamma' }] }));
  await must(api('PATCH', 'admin/organizations/beta', { data: { type: 'organizations', attributes: { 'global-provider-sharing': true } } }));
  await must(api('PATCH', 'admin/organizations/delta', { data: { type: 'organizations', attributes: { 'is-disabled': true } } }));
  return { dir, dist: join(dir, 'dist'), data, server, tokens, audit, api, close: () => server.close() };
}

/** A user of no organization in the data folder `dir`/data and a token of theirs: a caller whom a private registry knows. */
export async function userToken(dir: string, username = 'alice'): Promise<string> {
  const store = new Store(join(dir, 'data'));
  await createUser(store, { username, email: `${username}@example.com`, siteAdmin: false });
  return createToken(store, { user: username });
}

/** `serve --access private` of `dir`/dist with the data folder `dir`/data, keeping each audit line in `audit`. */
export function startPrivateServer(dir: string, audit: string[], options: Partial<ServeOptions> = {}): Promise<RunningServer> {
  return serveMirror(dir, { access: 'private', ...options, audit: (line) => audit.push(line) });
}

/** A management API call (`/api/v2/PATH`) with `token`: its status and JSON body. */
export async function managementApi(
  server: RunningServer,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: any }> {
  const res = await request(new URL(`api/v2/${path}`, server.url), {
    method: method as 'GET',
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/vnd.api+json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, json: text ? JSON.parse(text) : undefined };
}

/** Each organization's in-house release, signed, and a mirrored public provider; the config that publishes them with the modules. */
async function writeProviderReleases(dir: string): Promise<void> {
  const key = await testKey(dir, 'Site Release');
  const entries = [];
  for (const [namespace, type] of Object.entries(IN_HOUSE_PROVIDERS)) {
    await writeReleaseFolder(join(dir, 'releases', namespace), type, '1.0.0', ['linux_amd64']);
    await signRelease(join(dir, 'releases', namespace), type, '1.0.0', key);
    entries.push(
      `  - folder: releases/${namespace}\n    namespace: ${namespace}\n    registry: true\n    hostname: ${PROVIDER_HOST}\n    keys: [${key.publicFile}]\n`,
    );
  }
  await writeReleaseFolder(join(dir, 'releases/public'), PUBLIC_PROVIDER.type, '3.6.0', ['linux_amd64']);
  entries.push(`  - folder: releases/public\n    namespace: ${PUBLIC_PROVIDER.namespace}\n`);
  writeFiles(dir, { 'mirror.config.yaml': `sources:\n  - folder: mods\nproviders:\n${entries.join('')}platforms: [linux_amd64]\n` });
}

/** A registry request with a caller's token, as Terraform sends it. */
export async function get(
  site: PrivateSite,
  caller: CallerKind,
  path: string,
): Promise<{ status: number; headers: Record<string, unknown>; text: string; json: () => any }> {
  const token = site.tokens[caller];
  const res = await request(new URL(path, site.server.url), { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text, json: () => JSON.parse(text) };
}
