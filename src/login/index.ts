// `terraform login` against `serve --access private`: Terraform's login
// protocol, the OAuth 2.0 authorization code grant with PKCE (RFC 6749,
// RFC 7636) for a public client that listens on a loopback port.
//
//   GET  /oauth/authorization  checks Terraform's request, shows the sign-in page
//   POST /oauth/authorization  checks the form (CSRF, throttle, password), redirects to Terraform with a code
//   POST /oauth/token          trades the code and its PKCE verifier for a user token that expires
//
// Pending requests and codes live in memory: a sign-in is a minute's work,
// and a restart only means running terraform login again.

import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { checkPassword, hashPassword, sameSecret } from '../management/auth.js';
import type { Store } from '../management/store.js';
import { issueToken, revokeToken } from '../management/tokens.js';
import { LOGIN_CLIENT_ID, LOGIN_PORTS } from '../protocol/documents.js';
import { LOGIN_AUTHZ_PATH, LOGIN_TOKEN_PATH } from '../protocol/paths.js';
import { sendProblem, sendSignIn } from './page.js';
import { MAX_PENDING, sweepPending } from './pending.js';
import { createSso, type SsoOptions } from './sso.js';
import { FREE_FAILURES, Throttle } from './throttle.js';

/** How long the sign-in page stays good, and a code once issued (single use either way). */
const REQUEST_TTL_MS = 10 * 60_000;
const CODE_TTL_MS = 60_000;
/** A token from terraform login expires after this long, unless serve says otherwise. */
export const DEFAULT_LOGIN_TOKEN_SECONDS = 30 * 86_400;
const MAX_FORM_BYTES = 16 * 1024;
const COOKIE = 'mm_login_csrf';
const SSO_START = 'oauth/sso';
const SSO_CALLBACK = 'oauth/sso/callback';

interface AuthzRequest {
  redirectUri: string;
  state: string;
  challenge: string;
}
interface Pending extends AuthzRequest {
  csrf: string;
  expires: number;
}
interface Code extends AuthzRequest {
  user: string;
  expires: number;
  /** Set once the code is traded: a second trade is a replay, and revokes what the first made. */
  used?: { token?: string };
}

export interface LoginOptions {
  store: Store;
  /** Cookies get `Secure` when the server is reached over HTTPS. */
  secure: boolean;
  tokenSeconds?: number | undefined;
  /** Single sign-on through an OpenID Connect provider, offered beside the password. */
  sso?: SsoOptions | undefined;
  /** The URL clients reach the server at, for the provider's callback; else the request's Host. */
  baseUrl?: string | undefined;
  /** Records why a request was refused, for the server's audit line (never a password or a token). */
  audit?: (req: IncomingMessage, who: string, why: string) => void;
}

export interface Login {
  /** True when the path is the login protocol's (the server answers nothing else there). */
  owns(segments: string[]): boolean;
  handle(req: IncomingMessage, res: ServerResponse, segments: string[], query: URLSearchParams): Promise<void>;
}

const random = () => randomBytes(32).toString('base64url');
/** Checked against when the user does not exist, so an unknown name costs the same scrypt as a wrong password; made on first need, not when serve starts. */
let nobody: string | undefined;
const nobodyHash = () => (nobody ??= hashPassword(random()));

export function createLogin(options: LoginOptions): Login {
  const pending = new Map<string, Pending>();
  const codes = new Map<string, Code>();
  const throttle = new Throttle();
  const sso = options.sso && createSso(options.sso, options.store);
  const audit = options.audit ?? (() => {});
  const ssoLink = (request: string) => (sso ? `/${SSO_START}?request=${encodeURIComponent(request)}` : undefined);
  const tokenMs = (options.tokenSeconds ?? DEFAULT_LOGIN_TOKEN_SECONDS) * 1000;
  const cookie = (value: string, maxAge: number) =>
    `${COOKIE}=${value}; Path=/${LOGIN_AUTHZ_PATH}; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${options.secure ? '; Secure' : ''}`;

  const sweep = (now: number) => {
    sweepPending(pending, (p) => p.expires <= now, MAX_PENDING);
    sweepPending(codes, (c) => c.expires + CODE_TTL_MS <= now, MAX_PENDING);
  };

  const start = (res: ServerResponse, query: URLSearchParams) => {
    const problem = authzProblem(query);
    if (problem) return sendProblem(res, 400, problem);
    const now = Date.now();
    sweep(now);
    const id = random();
    const csrf = random();
    pending.set(id, {
      redirectUri: query.get('redirect_uri')!,
      state: query.get('state')!,
      challenge: query.get('code_challenge')!,
      csrf,
      expires: now + REQUEST_TTL_MS,
    });
    sendSignIn(res, 200, { request: id, csrf, sso: ssoLink(id), returnTo: query.get('redirect_uri')! }, { 'Set-Cookie': cookie(csrf, REQUEST_TTL_MS / 1000) });
  };

  const signIn = async (req: IncomingMessage, res: ServerResponse) => {
    const form = await readForm(req);
    if (!form) return sendProblem(res, 400, 'Send the sign-in form as application/x-www-form-urlencoded, under 16 KiB.');
    const now = Date.now();
    const id = form.get('request') ?? '';
    const request = pending.get(id);
    if (!request || request.expires <= now) return sendProblem(res, 400, 'This sign-in page has expired or was already used. Run terraform login again.');
    const csrf = form.get('csrf') ?? '';
    if (!sameSecret(csrf, request.csrf) || !sameSecret(cookieOf(req, COOKIE) ?? '', request.csrf)) {
      audit(req, 'anonymous', "sign-in form without the page's CSRF token or cookie");
      return sendProblem(res, 403, 'The form did not come from this sign-in page (its CSRF token or cookie is missing or wrong). Run terraform login again.');
    }
    const username = (form.get('username') ?? '').trim();
    const password = form.get('password') ?? '';
    const account = `account:${username.toLowerCase()}`;
    const address = `address:${req.socket.remoteAddress ?? ''}`;
    const wait = Math.max(throttle.wait(account, now), throttle.wait(address, now));
    const again = { request: id, csrf, username, sso: ssoLink(id), returnTo: request.redirectUri };
    if (wait > 0) {
      audit(req, 'anonymous', `sign-in as ${JSON.stringify(username)} refused for ${wait} s after failed ones`);
      return sendSignIn(res, 429, { ...again, problem: `Too many failed sign-ins: try again in ${wait} seconds.` }, { 'Retry-After': String(wait) });
    }
    const user = options.store.read().users.find((u) => u.username === username);
    const matches = checkPassword(password, user?.passwordHash || nobodyHash());
    if (!user || !matches) {
      throttle.failed(account, FREE_FAILURES.account, now);
      throttle.failed(address, FREE_FAILURES.address, now);
      audit(req, 'anonymous', `sign-in as ${JSON.stringify(username)} failed: wrong user name or password`);
      return sendSignIn(res, 401, { ...again, problem: 'Wrong user name or password.' });
    }
    throttle.succeeded(account);
    redirectWithCode(res, id, request, user.id, now);
  };

  /** The sign-in is done: a single-use code for Terraform, on the redirect to its listener. */
  const redirectWithCode = (res: ServerResponse, id: string, request: Pending, user: string, now: number) => {
    pending.delete(id);
    const code = random();
    codes.set(code, { redirectUri: request.redirectUri, state: request.state, challenge: request.challenge, user, expires: now + CODE_TTL_MS });
    const target = new URL(request.redirectUri);
    target.searchParams.set('code', code);
    target.searchParams.set('state', request.state);
    res.writeHead(302, { Location: target.href, 'Cache-Control': 'no-store', 'Set-Cookie': cookie('', 0), 'Referrer-Policy': 'no-referrer' });
    res.end();
  };

  const ssoStart = async (req: IncomingMessage, res: ServerResponse, query: URLSearchParams) => {
    const id = query.get('request') ?? '';
    const request = pending.get(id);
    if (!sso || !request || request.expires <= Date.now())
      return sendProblem(res, 400, 'This sign-in page has expired or was already used. Run terraform login again.');
    await sso.start(res, id, new URL(SSO_CALLBACK, publicBase(req)).href);
  };

  const ssoFinish = async (req: IncomingMessage, res: ServerResponse) => {
    if (!sso) return sendProblem(res, 404, 'Single sign-on is not set up here.');
    const done = await sso.finish(res, new URL(req.url ?? '/', publicBase(req)));
    if ('refused' in done) return audit(req, 'anonymous', `single sign-on refused: ${done.refused}`);
    const request = pending.get(done.request);
    const now = Date.now();
    if (!request || request.expires <= now) return sendProblem(res, 400, 'This sign-in page has expired or was already used. Run terraform login again.');
    redirectWithCode(res, done.request, request, done.user, now);
  };

  /** Where browsers reach this server: the base URL, else the scheme and Host of the request. */
  const publicBase = (req: IncomingMessage) => options.baseUrl ?? `${options.secure ? 'https' : 'http'}://${req.headers.host ?? 'localhost'}/`;

  const exchange = async (req: IncomingMessage, res: ServerResponse) => {
    const refuse = (status: number, error: string, description: string) => {
      audit(req, 'anonymous', `token request refused: ${error}: ${description}`);
      sendOAuth(res, status, { error, error_description: description });
    };
    const form = await readForm(req);
    if (!form) return refuse(400, 'invalid_request', 'Send the token request as application/x-www-form-urlencoded, under 16 KiB.');
    if (form.get('grant_type') !== 'authorization_code') return refuse(400, 'unsupported_grant_type', 'Only grant_type=authorization_code is supported.');
    // Go's oauth2 sends the client id as HTTP Basic or in the form, depending on the attempt.
    const clientId = form.get('client_id') ?? basicUser(req.headers.authorization);
    if (clientId !== LOGIN_CLIENT_ID) return refuse(401, 'invalid_client', `The client id must be "${LOGIN_CLIENT_ID}", as login.v1 says.`);
    const now = Date.now();
    const code = codes.get(form.get('code') ?? '');
    if (!code || code.expires <= now) return refuse(400, 'invalid_grant', 'The code is unknown or has expired: run terraform login again.');
    if (code.used) {
      // A code traded twice was seen by someone else: the token it gave is withdrawn (RFC 6749 4.1.2).
      if (code.used.token) await revokeToken(options.store, code.used.token);
      delete code.used.token;
      return refuse(400, 'invalid_grant', 'The code was already used.');
    }
    code.used = {};
    if (form.get('redirect_uri') !== code.redirectUri) return refuse(400, 'invalid_grant', 'redirect_uri differs from the one the code was issued for.');
    const verifier = form.get('code_verifier') ?? '';
    if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier) || !sameSecret(createHash('sha256').update(verifier).digest('base64url'), code.challenge))
      return refuse(400, 'invalid_grant', 'The PKCE code_verifier does not match the code_challenge.');
    const expiresAt = new Date(now + tokenMs).toISOString();
    const made = await issueToken(options.store, { kind: 'user', id: code.user }, { description: 'terraform login', expiresAt });
    code.used.token = made.id;
    sendOAuth(res, 200, { access_token: made.token, token_type: 'bearer', expires_in: Math.floor(tokenMs / 1000) });
  };

  return {
    owns: (segments) => [LOGIN_AUTHZ_PATH, LOGIN_TOKEN_PATH, SSO_START, SSO_CALLBACK].includes(segments.join('/')),
    handle: async (req, res, segments, query) => {
      const path = segments.join('/');
      const method = req.method === 'HEAD' ? 'GET' : req.method;
      if (path === LOGIN_AUTHZ_PATH && method === 'GET') return start(res, query);
      if (path === LOGIN_AUTHZ_PATH && method === 'POST') return signIn(req, res);
      if (path === LOGIN_TOKEN_PATH && method === 'POST') return exchange(req, res);
      if (path === SSO_START && method === 'GET') return ssoStart(req, res, query);
      if (path === SSO_CALLBACK && method === 'GET') return ssoFinish(req, res);
      req.resume();
      const allow = path === LOGIN_TOKEN_PATH ? 'POST' : path === LOGIN_AUTHZ_PATH ? 'GET, HEAD, POST' : 'GET, HEAD';
      res.writeHead(405, { Allow: allow, 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ errors: [`Method ${req.method} not allowed`] }));
    },
  };
}

/** What is wrong with Terraform's authorization request, or undefined. Nothing is redirected until it is right. */
export function authzProblem(query: URLSearchParams): string | undefined {
  if (query.get('response_type') !== 'code') return 'response_type must be "code".';
  if (query.get('client_id') !== LOGIN_CLIENT_ID) return `client_id must be "${LOGIN_CLIENT_ID}", as this registry's login.v1 says.`;
  const redirect = loopbackRedirect(query.get('redirect_uri') ?? '');
  if (!redirect)
    return `redirect_uri must be http://localhost:PORT/... (or 127.0.0.1, [::1]) with PORT from ${LOGIN_PORTS[0]} to ${LOGIN_PORTS[1]}: the port terraform login listens on.`;
  if (query.get('code_challenge_method') !== 'S256') return 'code_challenge_method must be S256 (PKCE).';
  if (!/^[A-Za-z0-9_-]{43}$/.test(query.get('code_challenge') ?? '')) return 'code_challenge must be a SHA-256 digest in base64url (PKCE).';
  const state = query.get('state') ?? '';
  if (state === '' || state.length > 512) return 'state is missing or too long.';
  return undefined;
}

/** A redirect URI Terraform's login listener could own: plain HTTP to a loopback address on one of login.v1's ports. */
function loopbackRedirect(text: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  const port = Number(url.port);
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  const ok = url.protocol === 'http:' && loopback && url.username === '' && url.password === '' && url.hash === '';
  return ok && port >= LOGIN_PORTS[0] && port <= LOGIN_PORTS[1] ? url : undefined;
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams | undefined> {
  const type = String(req.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  if (type !== 'application/x-www-form-urlencoded' || Number(req.headers['content-length'] ?? 0) > MAX_FORM_BYTES) {
    req.resume();
    return undefined;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_FORM_BYTES) return undefined;
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function cookieOf(req: IncomingMessage, name: string): string | undefined {
  for (const part of String(req.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

function basicUser(header: string | undefined): string | undefined {
  const match = /^Basic\s+(\S+)$/i.exec(header ?? '');
  if (!match) return undefined;
  const user = Buffer.from(match[1]!, 'base64').toString('utf8').split(':', 1)[0]!;
  try {
    return decodeURIComponent(user.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

function sendOAuth(res: ServerResponse, status: number, body: object): void {
  const text = Buffer.from(JSON.stringify(body));
  res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', Pragma: 'no-cache', 'Content-Length': String(text.length) });
  res.end(text);
}
