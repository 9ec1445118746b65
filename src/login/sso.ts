// Signing in through an OpenID Connect identity provider (Keycloak, Entra
// ID, Okta...) instead of a password: the sign-in page sends the browser to
// the provider, whose ID token (its issuer, audience, expiry, signature and
// nonce checked by openid-client) names the person. They are matched to a
// user by the provider's subject, else by a verified e-mail address, or made
// on first sign-in when serve says so; the groups claim sets their
// membership of the teams it is mapped to.

import type { ServerResponse } from 'node:http';
import * as oidc from 'openid-client';
import { newId, hashPassword, newToken } from '../management/auth.js';
import type { Store } from '../management/store.js';
import type { Data, User } from '../management/types.js';
import { sendProblem } from './page.js';
import { MAX_PENDING, sweepPending } from './pending.js';

export interface SsoOptions {
  /** The provider's issuer URL, exactly as its discovery document states it. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The claim listing the person's groups (default: groups). */
  groupsClaim?: string;
  /** Group name → the team it makes its members part of. */
  teams?: Record<string, { organization: string; team: string }>;
  /** Make a user on first sign-in when no user matches (default: refuse). */
  createUsers?: boolean;
}

/** How long the provider's page may take, from leaving the sign-in page to coming back. */
const STATE_TTL_MS = 10 * 60_000;

interface Flow {
  /** The pending terraform login request it completes. */
  request: string;
  verifier: string;
  nonce: string;
  callback: string;
  expires: number;
}

export interface Sso {
  /** Redirects the browser to the provider for `request`; `callback` is this server's callback URL. */
  start(res: ServerResponse, request: string, callback: string): Promise<void>;
  /** Checks the provider's answer; the request and user it signed in, or why not once a page has said so. */
  finish(res: ServerResponse, url: URL): Promise<{ request: string; user: string } | { refused: string }>;
}

export function createSso(options: SsoOptions, store: Store): Sso {
  const flows = new Map<string, Flow>();
  let config: Promise<oidc.Configuration> | undefined;
  const configuration = () => {
    // Found once; a provider that was down is asked again at the next sign-in.
    config ??= discover(options).catch((error: unknown) => {
      config = undefined;
      throw error;
    });
    return config;
  };

  return {
    async start(res, request, callback) {
      let found: oidc.Configuration;
      try {
        found = await configuration();
      } catch (error) {
        return sendProblem(res, 502, `The identity provider at ${options.issuer} cannot be used: ${(error as Error).message}`);
      }
      const now = Date.now();
      sweepPending(flows, (flow) => flow.expires <= now, MAX_PENDING);
      const state = oidc.randomState();
      const flow: Flow = { request, verifier: oidc.randomPKCECodeVerifier(), nonce: oidc.randomNonce(), callback, expires: now + STATE_TTL_MS };
      flows.set(state, flow);
      const target = oidc.buildAuthorizationUrl(found, {
        redirect_uri: callback,
        scope: 'openid email profile',
        code_challenge: await oidc.calculatePKCECodeChallenge(flow.verifier),
        code_challenge_method: 'S256',
        state,
        nonce: flow.nonce,
      });
      res.writeHead(302, { Location: target.href, 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' });
      res.end();
    },

    async finish(res, url) {
      const state = url.searchParams.get('state') ?? '';
      const flow = flows.get(state);
      // Single use: a state seen once is gone, so a replayed answer finds nothing.
      flows.delete(state);
      const refuse = (status: number, why: string, page: string) => {
        sendProblem(res, status, page);
        return { refused: why };
      };
      if (!flow || flow.expires <= Date.now())
        return refuse(
          400,
          'an unknown or used state',
          'This answer from the identity provider is not one this server is waiting for (already used or expired). Run terraform login again.',
        );
      if (url.searchParams.has('error')) {
        const why = url.searchParams.get('error_description') ?? url.searchParams.get('error') ?? '';
        return refuse(401, `the provider refused: ${why}`, `The identity provider refused the sign-in: ${why}`);
      }
      let claims: oidc.IDToken;
      try {
        const found = await configuration();
        // The callback URL as the provider was told it, with the answer's query.
        const answer = new URL(flow.callback);
        answer.search = url.search;
        const tokens = await oidc.authorizationCodeGrant(found, answer, {
          pkceCodeVerifier: flow.verifier,
          expectedState: state,
          expectedNonce: flow.nonce,
          idTokenExpected: true,
        });
        claims = tokens.claims()!;
      } catch (error) {
        const why = reason(error);
        return refuse(401, why, `The identity provider's answer was refused: ${why}. Run terraform login again, or ask an administrator.`);
      }
      try {
        const user = await signedIn(store, options, claims);
        return { request: flow.request, user: user.id };
      } catch (error) {
        return refuse(403, (error as Error).message, (error as Error).message);
      }
    },
  };
}

async function discover(options: SsoOptions): Promise<oidc.Configuration> {
  const issuer = new URL(options.issuer);
  // Plain HTTP only to a provider on this machine: anywhere else the ID token's transport must be TLS.
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(issuer.hostname);
  const config = await oidc.discovery(issuer, options.clientId, options.clientSecret, undefined, loopback ? { execute: [oidc.allowInsecureRequests] } : {});
  // Check the ID token's signature too, not only its claims: the token endpoint is not trusted blindly.
  oidc.enableNonRepudiationChecks(config);
  return config;
}

/** What an openid-client refusal means to a person: the check that failed, found along the error's causes. */
function reason(error: unknown): string {
  const chain: { message?: unknown; claim?: unknown; cause?: unknown }[] = [];
  for (let e = error as (typeof chain)[number] | undefined; e && typeof e === 'object' && chain.length < 5; e = e.cause as typeof e) chain.push(e);
  const claim = chain.map((e) => e.claim).find((c) => typeof c === 'string');
  const messages = chain.map((e) => (typeof e.message === 'string' ? e.message : '')).join(' | ');
  if (claim === 'iss') return 'the ID token comes from another issuer than the one configured (iss)';
  if (claim === 'aud') return 'the ID token is meant for another client (aud)';
  if (claim === 'exp') return 'the ID token has expired (exp)';
  if (claim === 'nonce') return 'the ID token belongs to another sign-in (nonce)';
  if (/signature verification failed/i.test(messages)) return "the ID token signature does not verify against the provider's keys";
  return messages || String(error);
}

/** The user the claims name, made or linked as the options say, with the mapped teams' membership set from the groups claim. */
async function signedIn(store: Store, options: SsoOptions, claims: oidc.IDToken): Promise<User> {
  const subject = `${options.issuer}#${claims.sub}`;
  // Only an address the provider says it verified may name a user here: one it merely passes on would let anyone claim an account.
  const email = typeof claims['email'] === 'string' && claims['email_verified'] === true ? claims['email'].toLowerCase() : undefined;
  const groupsClaim = claims[options.groupsClaim ?? 'groups'];
  const groups = new Set(Array.isArray(groupsClaim) ? groupsClaim.filter((g): g is string => typeof g === 'string') : []);
  return store.mutate(['users', 'teams'], (data) => {
    let user = data.users.find((u) => u.ssoSubject === subject) ?? (email ? data.users.find((u) => u.email.toLowerCase() === email) : undefined);
    if (!user) {
      if (!options.createUsers)
        throw new Error(`No user here matches ${email ?? claims.sub}: ask an administrator to create one (modmirror user create) with that e-mail address.`);
      // A password no one knows (the person signs in through the provider), hashed only for a user made here.
      user = newUser(data, claims, email, hashPassword(newToken()));
      data.users.push(user);
    }
    user.ssoSubject = subject;
    for (const [group, { organization, team }] of Object.entries(options.teams ?? {})) {
      const t = data.teams.find((x) => x.organization === organization && x.name === team);
      if (!t) continue;
      const member = t.members.includes(user.id);
      if (groups.has(group) && !member) t.members.push(user.id);
      if (!groups.has(group) && member) t.members = t.members.filter((id) => id !== user.id);
    }
    return user;
  });
}

function newUser(data: Data, claims: oidc.IDToken, email: string | undefined, passwordHash: string): User {
  const preferred = typeof claims['preferred_username'] === 'string' ? claims['preferred_username'] : undefined;
  const wanted = (preferred ?? email?.split('@')[0] ?? claims.sub).replace(/[^A-Za-z0-9_.-]/g, '-').slice(0, 40);
  if (data.users.some((u) => u.username === wanted))
    throw new Error(`The user name "${wanted}" is taken by another account: ask an administrator to link them (the same e-mail address).`);
  // The random password is never told: this user signs in through the provider only.
  return {
    id: newId('user'),
    username: wanted,
    email: email ?? '',
    unconfirmedEmail: null,
    passwordHash,
    isSiteAdmin: false,
    createdAt: new Date().toISOString(),
  };
}
