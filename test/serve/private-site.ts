// A private registry to test against: five organizations' modules
// (`<org>/hello/null`), users, a team and tokens made with the management
// commands' own functions, and sharing set through the admin API of the
// running server, as a site administrator would.
//
//   acme   alice (team "platform"), owner olivia; tokens: alice, team, organization
//   beta   shares its modules with acme (module consumers)
//   gamma  shares with everyone (global module sharing)
//   delta  disabled; dave is in its team; its organization token
//   omega  an organization of its own; its organization token ("other")

import { join } from 'node:path';
import { request } from 'undici';
import { createOrganization, createTeam, createToken, createUser } from '../../src/management/bootstrap.js';
import { Store } from '../../src/management/store.js';
import { startServer, type RunningServer } from '../../src/serve/index.js';
import { moduleFiles } from '../clients/install.js';
import { runCli, tempDir, writeFiles } from '../helpers.js';

export const ORGANIZATIONS = ['acme', 'beta', 'gamma', 'delta', 'omega'] as const;
export const SITE_VERSIONS = ['1.0.0', '1.2.0'];

export type CallerKind = 'anonymous' | 'unknown' | 'user' | 'team' | 'organization' | 'admin' | 'other' | 'disabled' | 'disabledMember';

/** What each caller may read, by Terraform Enterprise's rules; undefined: every registry request is a 401. */
export const VISIBLE: Record<CallerKind, string[] | undefined> = {
  anonymous: undefined,
  unknown: undefined,
  user: ['acme', 'beta', 'gamma'],
  team: ['acme', 'beta', 'gamma'],
  organization: ['acme', 'beta', 'gamma'],
  admin: ['acme', 'beta', 'gamma', 'omega'],
  other: ['gamma', 'omega'],
  // An organization token of a disabled organization is no token at all.
  disabled: undefined,
  // A member of only a disabled organization reads what is shared with everyone.
  disabledMember: ['gamma'],
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

export async function startPrivateSite(options: { archiveUrlTtlSeconds?: number } = {}): Promise<PrivateSite> {
  const dir = tempDir('mm-private-');
  const files: Record<string, string> = {};
  for (const org of ORGANIZATIONS) for (const v of SITE_VERSIONS) for (const [path, text] of Object.entries(moduleFiles(`${v}`))) files[`mods/${org}/hello/null/${v}/${path}`] = text;
  writeFiles(dir, files);
  const built = await runCli(['build', '--modules', 'mods', '--out', 'dist', '--json'], dir);
  if (built.code !== 0) throw new Error(built.stderr);

  const data = join(dir, 'data');
  const store = new Store(data);
  for (const [username, siteAdmin] of [['admin', true], ['alice', false], ['olivia', false], ['dave', false], ['omar', false]] as const) {
    await createUser(store, { username, email: `${username}@example.com`, siteAdmin });
  }
  for (const org of ORGANIZATIONS) await createOrganization(store, { name: org, email: `${org}@example.com`, owner: org === 'acme' ? 'olivia' : org === 'omega' ? 'omar' : undefined });
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
    disabled: await createToken(store, { organization: 'delta' }),
    disabledMember: await createToken(store, { user: 'dave' }),
    owner: await createToken(store, { user: 'olivia' }),
  };

  const audit: string[] = [];
  const server = await startServer({
    dir: join(dir, 'dist'),
    host: '127.0.0.1',
    port: 0,
    dataDir: data,
    access: 'private',
    archiveUrlTtlSeconds: options.archiveUrlTtlSeconds,
    audit: (line) => audit.push(line),
  });
  const api = async (method: string, path: string, body?: unknown, token = tokens.admin) => {
    const res = await request(new URL(`api/v2/${path}`, server.url), {
      method: method as 'GET',
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/vnd.api+json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    return { status: res.statusCode, json: text ? JSON.parse(text) : undefined };
  };
  const must = async (call: Promise<{ status: number; json: any }>) => {
    const { status, json } = await call;
    if (status >= 300) throw new Error(`setup: ${status} ${JSON.stringify(json)}`);
  };
  await must(api('PATCH', 'admin/organizations/beta/relationships/module-consumers', { data: [{ type: 'organizations', id: 'acme' }] }));
  await must(api('PATCH', 'admin/organizations/gamma', { data: { type: 'organizations', attributes: { 'global-module-sharing': true } } }));
  await must(api('PATCH', 'admin/organizations/delta', { data: { type: 'organizations', attributes: { 'is-disabled': true } } }));
  return { dir, dist: join(dir, 'dist'), data, server, tokens, audit, api, close: () => server.close() };
}

/** A registry request with a caller's token, as Terraform sends it. */
export async function get(site: PrivateSite, caller: CallerKind, path: string): Promise<{ status: number; headers: Record<string, unknown>; text: string; json: () => any }> {
  const token = site.tokens[caller];
  const res = await request(new URL(path, site.server.url), { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text, json: () => JSON.parse(text) };
}
