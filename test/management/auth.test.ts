// Who is calling, and what they may do (src/management/auth.ts): tokens,
// passwords, the principal of a bearer header (spec 2.4's service users for
// team and organization tokens) and the access rules built on it.

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  authenticate,
  canAccess,
  canOverride,
  checkPassword,
  hashPassword,
  hashToken,
  newId,
  newToken,
  principalKey,
  type Principal,
} from '../../src/management/auth.js';
import type { Data, Team, Token, User } from '../../src/management/types.js';
import { organizationRecord as organization } from './records.js';

const user = (id: string, extra: Partial<User> = {}): User => ({
  id,
  username: id,
  email: `${id}@example.com`,
  unconfirmedEmail: null,
  passwordHash: '',
  isSiteAdmin: false,
  createdAt: '2024-01-01T00:00:00.000Z',
  ...extra,
});

const team = (id: string, name: string, org: string, members: string[] = []): Team => ({ id, name, organization: org, members });
const token = (secret: string, kind: Token['kind'], subject: string): Token => ({
  id: `at-${secret}`,
  kind,
  subject,
  hash: hashToken(secret),
  createdAt: '2024-01-01T00:00:00.000Z',
});

/** acme (owned by alice, team ops with bob) and the disabled org gone (team old). */
function data(): Data {
  return {
    settings: { edition: 'self-hosted' },
    users: [user('user-alice'), user('user-bob'), user('user-carol'), user('user-root', { isSiteAdmin: true })],
    tokens: [
      token('alice-secret', 'user', 'user-alice'),
      token('ghost-secret', 'user', 'user-deleted'),
      token('ops-secret', 'team', 'team-ops'),
      token('old-secret', 'team', 'team-old'),
      token('acme-secret', 'organization', 'acme'),
      token('gone-secret', 'organization', 'gone'),
    ],
    teams: [team('team-ops', 'ops', 'acme', ['user-bob']), team('team-old', 'old', 'gone', ['user-carol'])],
    organizations: [organization('acme', { owners: ['user-alice'] }), organization('gone', { isDisabled: true }), organization('other')],
    runs: [],
    taskStages: [],
    taskResults: [],
    registryModules: [],
    moduleVersions: [],
  };
}

const serviceId = (seed: string) => `user-svc${createHash('sha256').update(seed).digest('hex').slice(0, 16)}`;
const orgNamed = (d: Data, name: string) => d.organizations.find((o) => o.name === name)!;
const as = (d: Data, secret: string): Principal => authenticate(d, `Bearer ${secret}`)!;

describe('tokens, passwords and ids', () => {
  it('makes tokens of 32 random bytes, found again by their sha256', () => {
    const a = newToken();
    expect(a).toMatch(/^mm\.[A-Za-z0-9_-]{43}$/);
    expect(newToken()).not.toBe(a);
    expect(hashToken(a)).toBe(createHash('sha256').update(a).digest('hex'));
  });

  it('checks a password against its salted scrypt hash, and nothing else', () => {
    const stored = hashPassword('correct horse');
    expect(stored).toMatch(/^scrypt\$[0-9a-f]{32}\$[0-9a-f]{64}$/);
    expect(hashPassword('correct horse')).not.toBe(stored);
    expect(checkPassword('correct horse', stored)).toBe(true);
    expect(checkPassword('correct horsE', stored)).toBe(false);
    const [, salt, hash] = stored.split('$');
    for (const bad of ['', 'correct horse', `bcrypt$${salt}$${hash}`, `scrypt$${salt}$`, `scrypt$$${hash}`, `scrypt$${salt}$${hash!.slice(0, 62)}`]) {
      expect(checkPassword('correct horse', bad), bad).toBe(false);
    }
  });

  it('makes opaque ids with the type prefix and an unambiguous alphabet', () => {
    const id = newId('ts');
    expect(id).toMatch(/^ts-[a-km-zA-HJ-NP-Z2-9]{16}$/);
    expect(newId('ts')).not.toBe(id);
  });
});

describe('authenticate', () => {
  it('finds the user of a user token', () => {
    const d = data();
    expect(as(d, 'alice-secret')).toEqual({ kind: 'user', user: d.users[0] });
    expect(authenticate(d, 'bearer   alice-secret  ')).toEqual({ kind: 'user', user: d.users[0] });
  });

  it('gives a team token the team, its organization and a stable service user', () => {
    const d = data();
    const principal = as(d, 'ops-secret');
    expect(principal).toMatchObject({ kind: 'team', team: d.teams[0], organization: orgNamed(d, 'acme') });
    expect(principal.user).toEqual({
      id: serviceId('team:acme_ops'),
      username: 'api-team_acme_ops',
      email: '',
      unconfirmedEmail: null,
      passwordHash: '',
      isSiteAdmin: false,
      createdAt: '1970-01-01T00:00:00.000Z',
    });
  });

  it('gives an organization token the organization and its service user', () => {
    const d = data();
    const principal = as(d, 'acme-secret');
    expect(principal).toMatchObject({ kind: 'organization', organization: orgNamed(d, 'acme') });
    expect([principal.user.id, principal.user.username]).toEqual([serviceId('organization:acme'), 'api-org-acme']);
  });

  it("answers no one for a missing, malformed or unknown token, a deleted user, and a disabled organization's tokens", () => {
    const d = data();
    const headers = [
      undefined,
      '',
      'alice-secret',
      'Basic alice-secret',
      'Bearer',
      'Bearer alice-secret extra',
      'Bearer nope',
      'Bearer ghost-secret',
      'Bearer old-secret',
      'Bearer gone-secret',
    ];
    expect(headers.filter((h) => authenticate(d, h) !== undefined)).toEqual([]);
  });
});

describe('principalKey', () => {
  it('names a user by id, a team by id and an organization by name', () => {
    const d = data();
    expect(['alice-secret', 'ops-secret', 'acme-secret'].map((s) => principalKey(as(d, s)))).toEqual(['user:user-alice', 'team:team-ops', 'organization:acme']);
  });
});

describe('canAccess and canOverride', () => {
  const d = data();
  const principals: Record<string, Principal> = {
    owner: as(d, 'alice-secret'),
    member: { kind: 'user', user: d.users[1]! },
    stranger: { kind: 'user', user: d.users[2]! },
    admin: { kind: 'user', user: d.users[3]! },
    team: as(d, 'ops-secret'),
    organization: as(d, 'acme-secret'),
  };
  const allowed = (rule: (p: Principal) => boolean) => Object.keys(principals).filter((name) => rule(principals[name]!));

  it("lets owners, team members, site administrators and the organization's own tokens see its runs", () => {
    expect(allowed((p) => canAccess(d, p, orgNamed(d, 'acme')))).toEqual(['owner', 'member', 'admin', 'team', 'organization']);
    expect(allowed((p) => canAccess(d, p, orgNamed(d, 'other')))).toEqual(['admin']);
  });

  it('lets no one see a disabled organization, site administrators included', () => {
    expect(allowed((p) => canAccess(d, p, orgNamed(d, 'gone')))).toEqual([]);
  });

  it("lets owners, site administrators and the organization's token override, never a team", () => {
    expect(allowed((p) => canOverride(p, orgNamed(d, 'acme')))).toEqual(['owner', 'admin', 'organization']);
    expect(allowed((p) => canOverride(p, orgNamed(d, 'other')))).toEqual(['admin']);
  });
});
