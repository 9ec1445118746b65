// Spec 4.2: the caller's own account.

import type { IncomingMessage } from 'node:http';
import { MirrorError } from '../../errors.js';
import { checkPassword, hashPassword, type Principal } from '../auth.js';
import { userResource } from '../documents.js';
import { invalid, readBody, resourceBody, unauthorized, type Reply } from '../jsonapi.js';
import type { Store } from '../store.js';

export function accountDetails(principal: Principal): Reply {
  return { status: 200, document: { data: userResource(principal.user, { self: true, principal }) } };
}

function stringAttribute(attributes: Record<string, unknown>, name: string, required: boolean): string | undefined {
  const value = attributes[name];
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string') throw invalid(`${name} must be a string${value === undefined ? ' and is missing' : ''}.`, `/data/attributes/${name}`);
  return value;
}

/** Only a user's own token changes a user: team and organization tokens act as service users (spec 2.4). */
function userOf(principal: Principal) {
  if (principal.kind !== 'user') throw unauthorized();
  return principal.user;
}

export async function updateAccount(store: Store, principal: Principal, req: IncomingMessage): Promise<Reply> {
  const user = userOf(principal);
  const attributes = resourceBody(await readBody(req), 'users');
  const username = stringAttribute(attributes, 'username', false);
  const email = stringAttribute(attributes, 'email', false);
  if (username !== undefined && !/^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$/.test(username)) {
    throw invalid('username may hold letters, digits, ".", "_" and "-", up to 40 characters.', '/data/attributes/username');
  }
  if (email !== undefined && !/^[^\s@]+@[^\s@]+$/.test(email)) throw invalid(`"${email}" is not an e-mail address.`, '/data/attributes/email');
  const updated = await store.mutate(['users'], (data) => {
    const current = data.users.find((u) => u.id === user.id);
    if (!current) throw unauthorized();
    if (username !== undefined && data.users.some((u) => u.username === username && u.id !== user.id)) {
      throw invalid(`The username "${username}" is taken.`, '/data/attributes/username');
    }
    if (username !== undefined) current.username = username;
    // A new address waits for confirmation (spec 4.2); confirming is outside this shim.
    if (email !== undefined && email !== current.email) current.unconfirmedEmail = email;
    return current;
  });
  return { status: 200, document: { data: userResource(updated, { self: true, principal: { kind: 'user', user: updated } }) } };
}

export async function changePassword(store: Store, principal: Principal, req: IncomingMessage): Promise<Reply> {
  const user = userOf(principal);
  const attributes = resourceBody(await readBody(req), 'users');
  const current = stringAttribute(attributes, 'current_password', true)!;
  const password = stringAttribute(attributes, 'password', true)!;
  const confirmation = stringAttribute(attributes, 'password_confirmation', true)!;
  if (password.length < 10) throw invalid('password must be at least 10 characters.', '/data/attributes/password');
  if (confirmation !== password) throw invalid('password_confirmation does not match password.', '/data/attributes/password_confirmation');
  if (!checkPassword(current, user.passwordHash)) throw invalid('current_password is not your current password.', '/data/attributes/current_password');
  const hash = hashPassword(password);
  const updated = await store.mutate(['users'], (data) => {
    const stored = data.users.find((u) => u.id === user.id);
    if (!stored) throw new MirrorError('UNAUTHORIZED', 'The user no longer exists.');
    stored.passwordHash = hash;
    return stored;
  });
  return { status: 200, document: { data: userResource(updated, { self: true, principal: { kind: 'user', user: updated } }) } };
}
