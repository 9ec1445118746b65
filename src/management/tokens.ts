// A token's life: issued (with a description and an expiry), listed without
// its secret, revoked. The CLI and the API's authentication-tokens routes
// both come here; a running server reads the data folder on every request,
// so a revocation or an expiry counts from the next one.

import { MirrorError } from '../errors.js';
import { hashToken, newId, newToken } from './auth.js';
import type { Store } from './store.js';
import type { Data, Token, TokenKind } from './types.js';

/** Whom a token acts for, as the CLI names it. */
export type TokenSubject = { user: string } | { team: string; organization: string } | { organization: string };

export interface TokenOptions {
  description?: string;
  /** ISO 8601; absent: the token never expires. */
  expiresAt?: string;
}

const fail = (message: string, hint?: string) => new MirrorError('DATA_INVALID', message, hint === undefined ? {} : { hint });

/** The stored kind and subject id of a subject; throws when it does not exist. */
export function subjectOf(data: Data, subject: TokenSubject): { kind: TokenKind; id: string } {
  if ('user' in subject) {
    const id = data.users.find((u) => u.username === subject.user)?.id;
    if (!id) throw fail(`No user named "${subject.user}".`);
    return { kind: 'user', id };
  }
  if ('team' in subject) {
    const id = data.teams.find((t) => t.name === subject.team && t.organization === subject.organization)?.id;
    if (!id) throw fail(`No team "${subject.team}" in organization "${subject.organization}".`);
    return { kind: 'team', id };
  }
  const id = data.organizations.find((o) => o.name === subject.organization)?.name;
  if (!id) throw fail(`No organization named "${subject.organization}".`);
  return { kind: 'organization', id };
}

/** Makes a token; its secret exists only in the answer: the data folder keeps its hash. */
export async function issueToken(
  store: Store,
  subject: TokenSubject | { kind: TokenKind; id: string },
  options: TokenOptions = {},
): Promise<{ id: string; token: string; record: Token }> {
  const token = newToken();
  const record = await store.mutate(['tokens'], (data) => {
    const { kind, id } = 'kind' in subject ? subject : subjectOf(data, subject);
    const stored: Token = {
      id: newId('at'),
      kind,
      subject: id,
      hash: hashToken(token),
      createdAt: new Date().toISOString(),
      ...(options.description === undefined ? {} : { description: options.description }),
      expiresAt: options.expiresAt ?? null,
      lastUsedAt: null,
    };
    data.tokens.push(stored);
    return stored;
  });
  return { id: record.id, token, record };
}

/** A subject's tokens, oldest first. */
export function tokensOf(data: Data, kind: TokenKind, id: string): Token[] {
  return data.tokens.filter((t) => t.kind === kind && t.subject === id).sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
}

/** Removes a token by its id; false when there was none. */
export async function revokeToken(store: Store, id: string, allowed: (token: Token) => boolean = () => true): Promise<boolean> {
  return store.mutate(['tokens'], (data) => {
    const token = data.tokens.find((t) => t.id === id);
    if (!token || !allowed(token)) return false;
    data.tokens = data.tokens.filter((t) => t !== token);
    return true;
  });
}

const UNITS: Record<string, number> = { m: 60, h: 3600, d: 86_400, w: 604_800 };

/**
 * `--expires-in`: a whole number and a unit, `m`inutes, `h`ours, `d`ays or
 * `w`eeks (`90d`, `12h`); several add up (`1d12h`). Undefined when the text
 * is not one.
 */
export function durationSeconds(text: string): number | undefined {
  if (!/^(\d+[mhdw])+$/.test(text)) return undefined;
  let seconds = 0;
  for (const [, count, unit] of text.matchAll(/(\d+)([mhdw])/g)) seconds += Number(count) * UNITS[unit!]!;
  return seconds > 0 && Number.isSafeInteger(seconds * 1000) ? seconds : undefined;
}

/** TFE's authentication-tokens resource: metadata, and the secret only in the answer that creates it. */
export function tokenResource(token: Token, secret: string | null = null) {
  const createdBy = token.kind === 'user' ? 'users' : token.kind === 'team' ? 'teams' : 'organizations';
  return {
    id: token.id,
    type: 'authentication-tokens',
    attributes: {
      'created-at': token.createdAt,
      'last-used-at': token.lastUsedAt ?? null,
      description: token.description ?? null,
      token: secret,
      'expired-at': token.expiresAt ?? null,
    },
    relationships: { 'created-by': { data: { id: token.subject, type: createdBy } } },
    links: { self: `/api/v2/authentication-tokens/${token.id}` },
  };
}
