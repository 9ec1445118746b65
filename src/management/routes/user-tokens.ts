// Terraform Enterprise's user tokens API: a user lists and makes tokens under
// /users/:id/authentication-tokens, reads and deletes one at
// /authentication-tokens/:id. Only the user's own token may: a list for
// another user is empty, and every other refusal is a 404, as TFE answers.
// The secret is in the creation's answer only.

import type { IncomingMessage } from 'node:http';
import type { Principal } from '../auth.js';
import { invalid, notFound, pageLinksAndMeta, paginate, readBody, resourceBody, type Reply } from '../jsonapi.js';
import type { Store } from '../store.js';
import { issueToken, revokeToken, tokenResource, tokensOf } from '../tokens.js';
import type { Data } from '../types.js';

const ownUser = (principal: Principal) => (principal.kind === 'user' ? principal.user.id : undefined);

export function listUserTokens(data: Data, principal: Principal, userId: string, query: URLSearchParams): Reply {
  if (!data.users.some((u) => u.id === userId)) throw notFound();
  const tokens = ownUser(principal) === userId ? tokensOf(data, 'user', userId) : [];
  const page = paginate(tokens, query);
  return {
    status: 200,
    document: { data: page.items.map((t) => tokenResource(t)), ...pageLinksAndMeta(page, `/api/v2/users/${userId}/authentication-tokens`, query) },
  };
}

export async function createUserToken(store: Store, principal: Principal, userId: string, req: IncomingMessage): Promise<Reply> {
  if (ownUser(principal) !== userId) throw notFound();
  const attributes = resourceBody(await readBody(req), 'authentication-tokens');
  const description = attributes['description'];
  if (description !== undefined && description !== null && typeof description !== 'string')
    throw invalid('description must be a string.', '/data/attributes/description');
  const expiredAt = attributes['expired-at'];
  let expiresAt: string | undefined;
  if (expiredAt !== undefined && expiredAt !== null) {
    const at = typeof expiredAt === 'string' ? Date.parse(expiredAt) : NaN;
    if (Number.isNaN(at)) throw invalid('expired-at must be an ISO 8601 time such as "2030-01-31T12:00:00Z".', '/data/attributes/expired-at');
    if (at <= Date.now()) throw invalid('expired-at must be in the future.', '/data/attributes/expired-at');
    expiresAt = new Date(at).toISOString();
  }
  const made = await issueToken(store, { kind: 'user', id: userId }, { ...(typeof description === 'string' ? { description } : {}), expiresAt });
  return { status: 201, document: { data: tokenResource(made.record, made.token) } };
}

export function showUserToken(data: Data, principal: Principal, tokenId: string): Reply {
  const token = data.tokens.find((t) => t.id === tokenId && t.kind === 'user' && t.subject === ownUser(principal));
  if (!token) throw notFound();
  return { status: 200, document: { data: tokenResource(token) } };
}

export async function deleteUserToken(store: Store, principal: Principal, tokenId: string): Promise<Reply> {
  const user = ownUser(principal);
  if (!(await revokeToken(store, tokenId, (t) => t.kind === 'user' && t.subject === user))) throw notFound();
  return { status: 204 };
}
