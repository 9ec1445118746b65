// terraform login's protocol over HTTP: discovery, the sign-in page and its
// form, the code and its PKCE trade, and each refusal a careless or hostile
// client meets.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers.js';
import { authzQuery, exchange, openSignIn, PASSWORD, pkce, signIn, startLoginSite, submitSignIn, tokenForm, type LoginSite } from './flow.js';

let site: LoginSite;
beforeAll(async () => {
  site = await startLoginSite();
});
afterAll(() => site?.server.close());

const registry = async (token: string) =>
  (await request(new URL('v1/modules/acme/hello/null/versions', site.server.url), { headers: { authorization: `Bearer ${token}` } })).statusCode;

describe('terraform login protocol', () => {
  it('announces login.v1 in discovery, to callers without a token too', async () => {
    const res = await request(new URL('.well-known/terraform.json', site.server.url));
    expect(res.statusCode).toBe(200);
    expect(((await res.body.json()) as any)['login.v1']).toEqual({
      client: 'terraform-cli',
      grant_types: ['authz_code'],
      authz: '/oauth/authorization',
      token: '/oauth/token',
      ports: [10000, 10010],
    });
  });

  it('signs in with a password and trades the code and its verifier for a user token that expires', async () => {
    const { verifier, challenge } = pkce();
    const page = await openSignIn(site, authzQuery(challenge));
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(page.headers['cache-control']).toBe('no-store');
    const cookie = String(page.headers['set-cookie']);
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Strict/);
    // Plain HTTP here: a Secure cookie would never come back.
    expect(cookie).not.toMatch(/Secure/);

    const done = await submitSignIn(site, { request: page.request, csrf: page.csrf, username: 'alice', password: PASSWORD }, page.cookie);
    expect(done.status).toBe(302);
    const location = new URL(String(done.headers['location']));
    expect(`${location.origin}${location.pathname}`).toBe('http://localhost:10005/login');
    expect(location.searchParams.get('state')).toBe('terraform-state-1');

    const traded = await exchange(site, tokenForm(location.searchParams.get('code')!, verifier));
    expect(traded.status).toBe(200);
    expect(traded.headers['cache-control']).toBe('no-store');
    expect(traded.json).toMatchObject({ token_type: 'bearer', expires_in: 30 * 86_400 });
    expect(await registry(traded.json.access_token)).toBe(200);
    const stored = JSON.parse(readFileSync(join(site.dir, 'data/tokens.json'), 'utf8')).at(-1);
    expect(stored).toMatchObject({ kind: 'user', description: 'terraform login' });
    expect(Date.parse(stored.expiresAt) - Date.now()).toBeGreaterThan(29 * 86_400_000);

    // Neither the password nor the token is in a log line or a URL.
    const logs = site.logs.join('\n');
    expect(logs).not.toContain(PASSWORD);
    expect(logs).not.toContain(traded.json.access_token);
    expect(logs).toMatch(/POST \/oauth\/token/);
  });

  it('accepts only loopback redirects on login.v1 ports, S256 challenges and its own client id', async () => {
    const { challenge } = pkce();
    for (const change of [
      { redirect_uri: 'http://localhost:10011/login' },
      { redirect_uri: 'http://localhost:9999/login' },
      { redirect_uri: 'http://evil.example:10005/login' },
      { redirect_uri: 'https://localhost:10005/login' },
      { redirect_uri: 'http://user@localhost:10005/login' },
      { redirect_uri: undefined },
      { code_challenge_method: 'plain' },
      { code_challenge: 'short' },
      { client_id: 'someone-else' },
      { response_type: 'token' },
      { state: undefined },
    ]) {
      const page = await openSignIn(site, authzQuery(challenge, change));
      expect(page.status, JSON.stringify(change)).toBe(400);
      expect(page.headers['location']).toBeUndefined();
      expect(page.text).toContain('Cannot sign in');
    }
    for (const port of [10000, 10010])
      expect((await openSignIn(site, authzQuery(challenge, { redirect_uri: `http://127.0.0.1:${port}/login` }))).status).toBe(200);
  });

  it('refuses a form without the page’s CSRF token or cookie', async () => {
    const page = await openSignIn(site, authzQuery(pkce().challenge));
    const form = { request: page.request, csrf: page.csrf, username: 'bob', password: PASSWORD };
    expect((await submitSignIn(site, { ...form, csrf: 'forged' }, page.cookie)).status).toBe(403);
    // As many characters as the token, more bytes: still a 403, not a failed comparison.
    expect((await submitSignIn(site, { ...form, csrf: 'é'.repeat(page.csrf.length) }, page.cookie)).status).toBe(403);
    expect((await submitSignIn(site, form, '')).status).toBe(403);
    expect((await submitSignIn(site, form, 'mm_login_csrf=forged')).status).toBe(403);
    expect((await submitSignIn(site, { ...form, request: 'unknown' }, page.cookie)).status).toBe(400);
    expect((await submitSignIn(site, form, page.cookie)).status).toBe(302);
    // The page is single-use.
    expect((await submitSignIn(site, form, page.cookie)).status).toBe(400);
  });

  it('refuses a wrong verifier, a replayed code (withdrawing the token it gave) and a changed redirect', async () => {
    const first = pkce();
    const bad = await signIn(site, 'bob', first.challenge);
    const wrong = await exchange(site, tokenForm(bad.code, pkce().verifier));
    expect(wrong).toMatchObject({ status: 400, json: { error: 'invalid_grant' } });
    expect(wrong.json.error_description).toMatch(/code_verifier/);
    // A code meets one trade only: the right verifier after a wrong one is too late.
    expect((await exchange(site, tokenForm(bad.code, first.verifier))).json.error).toBe('invalid_grant');

    const second = pkce();
    const good = await signIn(site, 'bob', second.challenge);
    const token = (await exchange(site, tokenForm(good.code, second.verifier))).json.access_token as string;
    expect(await registry(token)).toBe(404);
    const replay = await exchange(site, tokenForm(good.code, second.verifier));
    expect(replay).toMatchObject({ status: 400, json: { error: 'invalid_grant', error_description: 'The code was already used.' } });
    expect(site.logs).toContain('refused POST /oauth/token 400 who=anonymous why="token request refused: invalid_grant: The code was already used."');
    expect(await registry(token)).toBe(401);

    const third = pkce();
    const moved = await signIn(site, 'bob', third.challenge);
    expect((await exchange(site, tokenForm(moved.code, third.verifier, { redirect_uri: 'http://localhost:10006/login' }))).json.error).toBe('invalid_grant');
    const other = await signIn(site, 'bob', third.challenge);
    expect((await exchange(site, tokenForm(other.code, third.verifier, { client_id: 'x' }))).status).toBe(401);
    expect((await exchange(site, tokenForm(other.code, third.verifier, { grant_type: 'password' }))).json.error).toBe('unsupported_grant_type');
  });

  it('refuses a wrong password, then slows the account down after five failures, even for the right password', async () => {
    const page = await openSignIn(site, authzQuery(pkce().challenge));
    const form = { request: page.request, csrf: page.csrf, username: 'carol' };
    for (let i = 1; i <= 5; i++) {
      const res = await submitSignIn(site, { ...form, password: `wrong password ${i}` }, page.cookie);
      expect(res.status, `attempt ${i}`).toBe(401);
      expect(res.text).toContain('Wrong user name or password.');
    }
    const locked = await submitSignIn(site, { ...form, password: PASSWORD }, page.cookie);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers['retry-after'])).toBeGreaterThanOrEqual(29);
    expect(locked.text).toMatch(/try again in \d+ seconds/);
    // Each refusal is an audit line naming the account as typed, and never the password.
    const audit = site.logs.filter((l) => l.startsWith('refused POST /oauth/authorization'));
    expect(audit).toContain('refused POST /oauth/authorization 401 who=anonymous why="sign-in as \\"carol\\" failed: wrong user name or password"');
    expect(audit.some((l) => / 429 who=anonymous why="sign-in as \\"carol\\" refused for \d+ s after failed ones"/.test(l))).toBe(true);
    expect(site.logs.join('\n')).not.toMatch(/wrong password \d/);
    // Another account from the same address still signs in: the address has more room.
    expect((await signIn(site, 'alice', pkce().challenge)).code).toBeTruthy();
  });

  it('behind a TLS proxy (an https base URL): absolute endpoints in discovery, and a Secure cookie', async () => {
    const proxied = await startLoginSite({ baseUrl: 'https://registry.example.com/', loginTokenSeconds: 3600 });
    try {
      const res = await request(new URL('.well-known/terraform.json', proxied.server.url));
      expect(((await res.body.json()) as any)['login.v1']).toMatchObject({
        authz: 'https://registry.example.com/oauth/authorization',
        token: 'https://registry.example.com/oauth/token',
      });
      const page = await openSignIn(proxied, authzQuery(pkce().challenge));
      expect(String(page.headers['set-cookie'])).toMatch(/; Secure/);
      // serve --login-token-expiry 1h
      const { verifier, challenge } = pkce();
      const { code } = await signIn(proxied, 'alice', challenge);
      expect((await exchange(proxied, tokenForm(code, verifier))).json.expires_in).toBe(3600);
    } finally {
      await proxied.server.close();
    }
  });

  it('refuses a --login-token-expiry that is not a duration', async () => {
    const result = await runCli(['serve', '--access', 'private', '--login-token-expiry', '30'], site.dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/Invalid --login-token-expiry "30": give a number and m, h, d or w/);
  });

  it('refuses --sso-* flags that do not make a provider, naming the flag', async () => {
    for (const [args, message] of [
      [['--sso-client-id', 'x'], /--sso-client-id needs --sso-issuer/],
      [['--sso-issuer', 'https://idp.example', '--sso-client-id', 'x'], /needs the client secret/],
      [['--sso-issuer', 'https://idp.example', '--sso-client-id', 'x', '--sso-client-secret-env', 'MM_NO_SUCH_VARIABLE'], /MM_NO_SUCH_VARIABLE .* is not set/],
      [['--sso-issuer', 'https://idp.example', '--sso-client-id', 'x', '--sso-client-secret-env', 'HOME', '--sso-team', 'ops'], /Invalid --sso-team "ops"/],
    ] as const) {
      const result = await runCli(['serve', '--access', 'private', ...args], site.dir);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(message);
    }
    const publicMode = await runCli(['serve', '--sso-issuer', 'https://idp.example', '--sso-client-id', 'x', '--sso-client-secret-env', 'HOME'], site.dir);
    expect(publicMode.stderr).toMatch(/works with --access private/);
  });
});
