// A private registry with a password user, and the steps of terraform
// login's flow over HTTP as Terraform and a browser take them: the test's
// own client, so each step can be done wrong on purpose.

import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { request } from 'undici';
import { createOrganization, createUser } from '../../src/management/bootstrap.js';
import { Store } from '../../src/management/store.js';
import type { RunningServer, ServeOptions } from '../../src/serve/index.js';
import { runCli, serveMirror, tempDir, writeFiles } from '../helpers.js';

export const PASSWORD = 'correct horse battery staple';

export interface LoginSite {
  dir: string;
  server: RunningServer;
  /** Every request log line and audit line the server wrote. */
  logs: string[];
}

/** acme's private module acme/hello/null 1.0.0, served privately; users alice, bob and carol (acme's owner is alice), each with PASSWORD. */
export async function startLoginSite(options: Partial<ServeOptions> = {}): Promise<LoginSite> {
  const dir = tempDir('mm-login-');
  writeFiles(dir, {
    'mods/acme/hello/null/1.0.0/main.tf': 'variable "name" {\n  default = "world"\n}\noutput "greeting" {\n  value = "hello ${var.name}"\n}\n',
  });
  const built = await runCli(['build', '--modules', 'mods', '--mirror', 'dist'], dir);
  if (built.code !== 0) throw new Error(built.stderr);
  const store = new Store(join(dir, 'data'));
  for (const username of ['alice', 'bob', 'carol'])
    await createUser(store, { username, email: `${username}@example.com`, password: PASSWORD, siteAdmin: false });
  await createOrganization(store, { name: 'acme', email: 'ops@example.com', owner: 'alice' });
  const logs: string[] = [];
  const server = await serveMirror(dir, { access: 'private', log: (line) => logs.push(line), audit: (line) => logs.push(line), ...options });
  return { dir, server, logs };
}

export interface Step {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

async function send(url: URL, init: { method?: string; headers?: Record<string, string>; form?: Record<string, string> } = {}): Promise<Step> {
  const res = await request(url, {
    method: (init.method ?? (init.form ? 'POST' : 'GET')) as 'GET',
    headers: { ...(init.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), ...init.headers },
    body: init.form ? new URLSearchParams(init.form).toString() : undefined,
  });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

export const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

/** What Terraform sends to the authorization endpoint; `change` alters or removes (undefined) a parameter. */
export function authzQuery(challenge: string, change: Record<string, string | undefined> = {}): URLSearchParams {
  const query: Record<string, string | undefined> = {
    client_id: 'terraform-cli',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    redirect_uri: 'http://localhost:10005/login',
    response_type: 'code',
    state: 'terraform-state-1',
    ...change,
  };
  return new URLSearchParams(Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined));
}

/** The sign-in page for an authorization request: its form's hidden fields and the CSRF cookie. */
export async function openSignIn(site: LoginSite, query: URLSearchParams): Promise<Step & { request: string; csrf: string; cookie: string }> {
  const page = await send(new URL(`oauth/authorization?${query}`, site.server.url));
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(page.text)?.[1] ?? '';
  const setCookie = String(page.headers['set-cookie'] ?? '');
  return { ...page, request: field('request'), csrf: field('csrf'), cookie: setCookie.split(';', 1)[0]! };
}

export function submitSignIn(site: LoginSite, form: Record<string, string>, cookie: string): Promise<Step> {
  return send(new URL('oauth/authorization', site.server.url), { form, headers: cookie ? { cookie } : {} });
}

/** Signs in as `username`; the code and state from the redirect to Terraform. */
export async function signIn(
  site: LoginSite,
  username: string,
  challenge: string,
  redirect = 'http://localhost:10005/login',
): Promise<{ code: string; state: string }> {
  const page = await openSignIn(site, authzQuery(challenge, { redirect_uri: redirect }));
  const done = await submitSignIn(site, { request: page.request, csrf: page.csrf, username, password: PASSWORD }, page.cookie);
  if (done.status !== 302) throw new Error(`sign-in: ${done.status} ${done.text}`);
  const location = new URL(String(done.headers['location']));
  return { code: location.searchParams.get('code')!, state: location.searchParams.get('state')! };
}

export async function exchange(site: LoginSite, form: Record<string, string>): Promise<{ status: number; json: any; headers: Step['headers'] }> {
  const res = await send(new URL('oauth/token', site.server.url), { form });
  return { status: res.status, json: JSON.parse(res.text), headers: res.headers };
}

export const tokenForm = (code: string, verifier: string, change: Record<string, string> = {}) => ({
  grant_type: 'authorization_code',
  client_id: 'terraform-cli',
  code,
  code_verifier: verifier,
  redirect_uri: 'http://localhost:10005/login',
  ...change,
});
