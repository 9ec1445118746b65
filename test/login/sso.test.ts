// Single sign-on for terraform login through a real OpenID Connect provider
// (oidc-provider, with its own sign-in and consent pages), reached through a
// proxy that can alter the ID token the provider's token endpoint returns:
// another issuer or audience, an expired one, one signed with another key.
// Each must be refused with a page that says why.

import { createPrivateKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
// @ts-expect-error oidc-provider ships no type declarations
import Provider from 'oidc-provider';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authzQuery, exchange, openSignIn, pkce, startLoginSite, tokenForm, type LoginSite } from './flow.js';
import { createTeam } from '../../src/management/bootstrap.js';
import { Store } from '../../src/management/store.js';

const SECRET = 'client-secret-for-the-tests';
const ACCOUNTS: Record<string, Record<string, unknown>> = {
  alice: { email: 'Alice@example.com', email_verified: true, preferred_username: 'alice-idp', groups: ['platform-team'] },
  dora: { email: 'dora@example.com', email_verified: true, preferred_username: 'dora', groups: [] },
  erin: { email: 'erin@example.com', email_verified: true, preferred_username: 'erin', groups: [] },
  // Claims bob's address without the provider having checked it.
  mallory: { email: 'bob@example.com', email_verified: false, preferred_username: 'mallory', groups: [] },
  // Claims bob's address from a provider that says nothing of having checked it.
  trudy: { email: 'bob@example.com', preferred_username: 'trudy', groups: [] },
};

type Tamper = 'none' | 'issuer' | 'audience' | 'expired' | 'signature';
let tamper: Tamper = 'none';
let site: LoginSite;
/** The same provider, with no users made on first sign-in. */
let strict: LoginSite;
let provider: Server;
let proxy: Server;
const signing = generateKeyPairSync('rsa', { modulusLength: 2048 });
const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;

const listen = (server: Server) => new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));

beforeAll(async () => {
  let providerPort = 0;
  proxy = createServer((req, res) =>
    forward(req, providerPort, (status, headers, body) => {
      const altered = req.url?.startsWith('/token') && status === 200 ? alterIdToken(body) : body;
      res.writeHead(status, { ...headers, 'content-length': String(altered.length) });
      res.end(altered);
    }),
  );
  const issuer = `http://127.0.0.1:${await listen(proxy)}`;
  site = await startLoginSite({
    sso: {
      issuer,
      clientId: 'modmirror',
      clientSecret: SECRET,
      createUsers: true,
      teams: { 'platform-team': { organization: 'acme', team: 'platform' }, 'old-team': { organization: 'acme', team: 'legacy' } },
    },
  });
  strict = await startLoginSite({ sso: { issuer, clientId: 'modmirror', clientSecret: SECRET } });
  const store = new Store(join(site.dir, 'data'));
  await createTeam(store, { organization: 'acme', name: 'platform', members: [] });
  await createTeam(store, { organization: 'acme', name: 'legacy', members: ['alice'] });
  const oidc = new Provider(issuer, {
    clients: [
      {
        client_id: 'modmirror',
        client_secret: SECRET,
        redirect_uris: [site, strict].map((s) => new URL('oauth/sso/callback', s.server.url).href),
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    jwks: { keys: [{ ...signing.privateKey.export({ format: 'jwk' }), kid: 'k1', use: 'sig', alg: 'RS256' }] },
    findAccount: (_ctx: unknown, id: string) => (ACCOUNTS[id] ? { accountId: id, claims: () => ({ sub: id, ...ACCOUNTS[id] }) } : undefined),
    claims: { openid: ['sub', 'groups'], email: ['email', 'email_verified'], profile: ['preferred_username'] },
    conformIdTokenClaims: false,
    cookies: { keys: ['cookie-key-for-the-tests'] },
  });
  provider = createServer(oidc.callback());
  providerPort = await listen(provider);
}, 60_000);
afterAll(async () => {
  await site?.server.close();
  await strict?.server.close();
  provider?.close();
  proxy?.close();
});

/** Passes a request on to the provider as it came (Host included, so the provider names the proxy in its URLs). */
function forward(req: IncomingMessage, port: number, answer: (status: number, headers: Record<string, string | string[] | undefined>, body: Buffer) => void) {
  // Uncompressed, so the proxy can read and change the token endpoint's answer.
  const { 'accept-encoding': _, ...headers } = req.headers;
  const out = httpRequest({ host: '127.0.0.1', port, method: req.method, path: req.url, headers }, (res) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => {
      const { 'content-length': _, 'transfer-encoding': __, ...headers } = res.headers;
      answer(res.statusCode ?? 502, headers, Buffer.concat(chunks));
    });
  });
  req.pipe(out);
}

const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** The token endpoint's answer with its ID token changed as `tamper` says, signed as the provider signs (or not). */
function alterIdToken(body: Buffer): Buffer {
  if (tamper === 'none') return body;
  const answer = JSON.parse(body.toString('utf8'));
  const [header, payload] = (answer.id_token as string)
    .split('.')
    .slice(0, 2)
    .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')));
  if (tamper === 'issuer') payload.iss = 'http://issuer.example';
  if (tamper === 'audience') payload.aud = 'another-client';
  if (tamper === 'expired') payload.exp = Math.floor(Date.now() / 1000) - 3600;
  const key: KeyObject = tamper === 'signature' ? stranger : createPrivateKey(signing.privateKey.export({ format: 'pem', type: 'pkcs8' }));
  const input = `${b64(header)}.${b64(payload)}`;
  answer.id_token = `${input}.${sign('sha256', Buffer.from(input), key).toString('base64url')}`;
  return Buffer.from(JSON.stringify(answer));
}

/**
 * A browser with cookies: follows redirects, signs in at the provider as
 * `account` and consents, until it is sent back to Terraform (a redirect to
 * its port, 302), or `stop` says to stay at a URL (status 0), or a page ends it.
 */
async function browse(start: URL, account: string, stop = (_url: URL) => false): Promise<{ status: number; text: string; url: URL }> {
  const jar = new Map<string, Map<string, string>>();
  let url = start;
  let form: Record<string, string> | undefined;
  for (let step = 0; step < 20; step++) {
    if (url.port === '10005') return { status: 302, text: '', url };
    if (stop(url)) return { status: 0, text: '', url };
    const cookies = jar.get(url.host) ?? new Map<string, string>();
    const res = await request(url, {
      method: form ? 'POST' : 'GET',
      headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; '), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      body: form ? new URLSearchParams(form).toString() : undefined,
    });
    for (const line of [res.headers['set-cookie'] ?? []].flat()) {
      const [pair] = line.split(';', 1);
      const [name, ...value] = pair!.split('=');
      cookies.set(name!.trim(), value.join('='));
    }
    jar.set(url.host, cookies);
    const text = await res.body.text();
    form = undefined;
    if (res.statusCode >= 300 && res.statusCode < 400) {
      url = new URL(String(res.headers['location']), url);
      continue;
    }
    const action = /<form[^>]*action="([^"]+)"/.exec(text)?.[1];
    if (res.statusCode === 200 && action && text.includes('name="prompt" value="login"')) form = { prompt: 'login', login: account, password: 'any' };
    else if (res.statusCode === 200 && action && text.includes('name="prompt" value="consent"')) form = { prompt: 'consent' };
    else return { status: res.statusCode, text, url };
    url = new URL(action.replaceAll('&amp;', '&'), url);
  }
  throw new Error('too many steps');
}

/** terraform login's first steps, then the SSO link on the sign-in page. */
async function ssoSignIn(account: string, at = site) {
  const { verifier, challenge } = pkce();
  const page = await openSignIn(at, authzQuery(challenge));
  const link = /href="(\/oauth\/sso\?request=[^"]+)"/.exec(page.text)?.[1];
  expect(link).toBeDefined();
  return { verifier, ...(await browse(new URL(link!.replaceAll('&amp;', '&'), at.server.url), account)) };
}

const users = () => JSON.parse(readFileSync(join(site.dir, 'data/users.json'), 'utf8')) as { id: string; username: string; ssoSubject?: string }[];
const teams = () => JSON.parse(readFileSync(join(site.dir, 'data/teams.json'), 'utf8')) as { name: string; members: string[] }[];

describe('single sign-on through OpenID Connect', () => {
  it('signs a user in by their verified e-mail address, sets their teams from the groups claim, and gives Terraform a code', async () => {
    tamper = 'none';
    const done = await ssoSignIn('alice');
    expect(done.status).toBe(302);
    expect(done.url.searchParams.get('state')).toBe('terraform-state-1');
    const traded = await exchange(site, tokenForm(done.url.searchParams.get('code')!, done.verifier));
    expect(traded.status).toBe(200);
    expect(
      (await request(new URL('v1/modules/acme/hello/null/versions', site.server.url), { headers: { authorization: `Bearer ${traded.json.access_token}` } }))
        .statusCode,
    ).toBe(200);
    const alice = users().find((u) => u.username === 'alice')!;
    expect(alice.ssoSubject).toMatch(/#alice$/);
    expect(teams().find((t) => t.name === 'platform')!.members).toEqual([alice.id]);
    expect(teams().find((t) => t.name === 'legacy')!.members).toEqual([]);
  });

  it('makes a user on first sign-in when serve says so', async () => {
    tamper = 'none';
    const done = await ssoSignIn('dora');
    expect(done.status).toBe(302);
    expect(users().map((u) => u.username)).toContain('dora');
  });

  it('refuses a person no user matches unless serve makes users, and never links by an unverified address', async () => {
    const unknown = await ssoSignIn('erin', strict);
    expect(unknown.status).toBe(403);
    expect(unknown.text).toMatch(/No user here matches erin@example\.com/);
    const unverified = await ssoSignIn('mallory', strict);
    expect(unverified.status).toBe(403);
    const unsaid = await ssoSignIn('trudy', strict);
    expect(unsaid.status).toBe(403);
    const bob = JSON.parse(readFileSync(join(strict.dir, 'data/users.json'), 'utf8')).find((u: { username: string }) => u.username === 'bob');
    expect(bob.ssoSubject).toBeUndefined();
  });

  for (const [mode, why] of [
    ['issuer', /comes from another issuer than the one configured \(iss\)/],
    ['audience', /is meant for another client \(aud\)/],
    ['expired', /has expired \(exp\)/],
    ['signature', /signature does not verify/],
  ] as const) {
    it(`refuses an ID token with ${mode === 'issuer' || mode === 'audience' ? `another ${mode}` : mode === 'expired' ? 'its time past' : 'a bad signature'}, with a page that says why`, async () => {
      tamper = mode;
      try {
        const done = await ssoSignIn('alice');
        expect(done.status).toBe(401);
        expect(done.text).toMatch(why);
        expect(done.url.pathname).toBe('/oauth/sso/callback');
        expect(site.logs.at(-1)).toMatch(/^refused GET \/oauth\/sso\/callback 401 who=anonymous why="single sign-on refused: /);
      } finally {
        tamper = 'none';
      }
    });
  }

  it('refuses a replayed answer from the provider', async () => {
    tamper = 'none';
    const { challenge } = pkce();
    const page = await openSignIn(site, authzQuery(challenge));
    const link = /href="(\/oauth\/sso\?request=[^"]+)"/.exec(page.text)![1]!.replaceAll('&amp;', '&');
    // Stop at the callback: the browser's URL there is the provider's answer.
    const start = await request(new URL(link, site.server.url));
    expect(start.statusCode).toBe(302);
    await start.body.dump();
    const callback = new URL('oauth/sso/callback', site.server.url);
    const { url: done } = await browse(
      new URL(String(start.headers['location'])),
      'alice',
      (url) => url.host === callback.host && url.pathname === callback.pathname,
    );
    const first = await request(done);
    expect(first.statusCode).toBe(302);
    await first.body.dump();
    const again = await request(done);
    expect(again.statusCode).toBe(400);
    expect(await again.body.text()).toMatch(/not one this server is waiting for/);
  });
});
