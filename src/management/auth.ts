// Tokens and passwords. Passwords are hashed with scrypt and a salt; tokens
// are 32 random bytes, so their sha256 cannot be reversed or guessed and can
// be looked up on every request without scrypt's deliberate cost.

import { createHash, randomBytes, scryptSync, timingSafeEqual } from 'node:crypto';
import type { Data, Organization, Team, Token, TokenKind, User } from './types.js';

export function newToken(): string {
  return `mm.${randomBytes(32).toString('base64url')}`;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function hashPassword(password: string): string {
  const salt = randomBytes(16);
  return `scrypt$${salt.toString('hex')}$${scryptSync(password, salt, 32).toString('hex')}`;
}

export function checkPassword(password: string, stored: string): boolean {
  const [scheme, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  return sameSecret(scryptSync(password, Buffer.from(salt, 'hex'), 32), Buffer.from(hash, 'hex'));
}

/**
 * Equal secrets (hashes, signatures, CSRF tokens, PKCE challenges), compared in a time that does not
 * tell how much of them matched. Text is compared as its UTF-8 bytes: a form may hold any text.
 */
export function sameSecret(a: string | Buffer, b: string | Buffer): boolean {
  const x = typeof a === 'string' ? Buffer.from(a) : a;
  const y = typeof b === 'string' ? Buffer.from(b) : b;
  return x.length === y.length && timingSafeEqual(x, y);
}

const ID_ALPHABET = 'abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/** Opaque ids with a type prefix, as the spec's `ts-<id>`, `user-<id>`. */
export function newId(prefix: string): string {
  const bytes = randomBytes(16);
  return `${prefix}-${[...bytes].map((b) => ID_ALPHABET[b % ID_ALPHABET.length]).join('')}`;
}

/** Who is calling: a user, or a team or organization acting as its synthetic service user (spec 2.4). */
export type Principal =
  | { kind: 'user'; user: User }
  | { kind: 'team'; team: Team; organization: Organization; user: User }
  | { kind: 'organization'; organization: Organization; user: User };

/** The service user a team or organization token acts as; stable, so its id is too. */
function serviceUser(kind: Exclude<TokenKind, 'user'>, name: string): User {
  const digest = createHash('sha256').update(`${kind}:${name}`).digest('hex').slice(0, 16);
  return {
    id: `user-svc${digest}`,
    username: kind === 'team' ? `api-team_${name}` : `api-org-${name}`,
    email: '',
    unconfirmedEmail: null,
    passwordHash: '',
    isSiteAdmin: false,
    createdAt: '1970-01-01T00:00:00.000Z',
  };
}

/** The stored token an `Authorization: Bearer` header presents, expired or not, or undefined. */
export function storedTokenOf(data: Data, header: string | undefined): Token | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (!match) return undefined;
  const hash = hashToken(match[1]!);
  return data.tokens.find((t) => t.hash === hash);
}

/** The stored token an `Authorization: Bearer` header presents, or undefined when there is none or it has expired. */
export function tokenOf(data: Data, header: string | undefined, now = Date.now()): Token | undefined {
  const token = storedTokenOf(data, header);
  return token && !isExpired(token, now) ? token : undefined;
}

/** When a token stops working, in milliseconds since the epoch; Infinity for one that never does. */
export function expiryOf(token: Token): number {
  return token.expiresAt ? Date.parse(token.expiresAt) : Infinity;
}

export function isExpired(token: Token, now = Date.now()): boolean {
  return now >= expiryOf(token);
}

/** The principal of an `Authorization: Bearer` header, or undefined (then 401). */
export function authenticate(data: Data, header: string | undefined): Principal | undefined {
  const token = tokenOf(data, header);
  return token && principalOf(data, token);
}

/** Who a stored token acts as; undefined when its subject is gone or its organization is disabled. */
export function principalOf(data: Data, token: Token): Principal | undefined {
  if (token.kind === 'user') {
    const user = data.users.find((u) => u.id === token.subject);
    return user && { kind: 'user', user };
  }
  if (token.kind === 'team') {
    const team = data.teams.find((t) => t.id === token.subject);
    const organization = team && data.organizations.find((o) => o.name === team.organization);
    // A disabled organization has no permissions left, its tokens included.
    if (!team || !organization || organization.isDisabled) return undefined;
    return { kind: 'team', team, organization, user: serviceUser('team', `${organization.name}_${team.name}`) };
  }
  const organization = data.organizations.find((o) => o.name === token.subject);
  if (!organization || organization.isDisabled) return undefined;
  return { kind: 'organization', organization, user: serviceUser('organization', organization.name) };
}

/** Who the caller is, as a string: over the same data, the same key sees the same answers. */
export function principalKey(principal: Principal): string {
  if (principal.kind === 'user') return `user:${principal.user.id}`;
  return principal.kind === 'team' ? `team:${principal.team.id}` : `organization:${principal.organization.name}`;
}

/** Whether the principal can see an organization's runs. */
export function canAccess(data: Data, principal: Principal, organization: Organization): boolean {
  if (organization.isDisabled) return false;
  if (principal.kind !== 'user') return principal.organization.name === organization.name;
  const { user } = principal;
  return (
    user.isSiteAdmin || organization.owners.includes(user.id) || data.teams.some((t) => t.organization === organization.name && t.members.includes(user.id))
  );
}

/** Overriding failed tasks: owners, site administrators and the organization's own token. */
export function canOverride(principal: Principal, organization: Organization): boolean {
  if (principal.kind === 'organization') return principal.organization.name === organization.name;
  if (principal.kind === 'team') return false;
  return principal.user.isSiteAdmin || organization.owners.includes(principal.user.id);
}

/**
 * Publishing and deleting an organization's private modules (HCP's "manage
 * modules"): site administrators, the organization's owners, its
 * organization token, and a team token or member of a team given
 * manage-modules. Reading them is canAccess.
 */
export function canManageModules(data: Data, principal: Principal, organization: Organization): boolean {
  if (organization.isDisabled) return false;
  if (principal.kind === 'organization') return principal.organization.name === organization.name;
  if (principal.kind === 'team') return principal.organization.name === organization.name && principal.team.manageModules === true;
  const { user } = principal;
  return (
    user.isSiteAdmin ||
    organization.owners.includes(user.id) ||
    data.teams.some((t) => t.organization === organization.name && t.manageModules === true && t.members.includes(user.id))
  );
}

/**
 * Whose private modules a caller may read, by Terraform Enterprise's rule: a
 * module's namespace is its organization; a user reads the organizations it
 * owns or is in a team of, a team token its team's organization, an
 * organization token its organization, each plus the organizations sharing
 * modules with one of those (module consumers, or global module sharing). A
 * site administrator reads everything. A disabled organization's modules are
 * read by nobody, and its membership gives nothing.
 */
export interface ModuleReaders {
  everything: boolean;
  /** With `everything`, the namespaces still hidden (disabled organizations; lower case, compared without case); otherwise those readable. */
  organizations: Set<string>;
}

export function moduleReaders(data: Data, principal: Principal, options: { othersEveryones?: boolean } = {}): ModuleReaders {
  const readers = readersOf(
    data,
    principal,
    (o) => o.globalModuleSharing,
    (o) => o.moduleConsumers,
  );
  return options.othersEveryones ? everyoneElses(data, readers) : readers;
}

/**
 * Readers that also read every namespace no organization has (a public
 * registry's, mirrored or cached): the organizations they may not read are
 * what stays hidden. Names are folded: organization "Acme" keeps "acme" to itself.
 */
function everyoneElses(data: Data, readers: ModuleReaders): ModuleReaders {
  const hidden = readers.everything ? [...readers.organizations] : data.organizations.map((o) => o.name).filter((name) => !readers.organizations.has(name));
  return { everything: true, organizations: new Set(hidden.map((name) => name.toLowerCase())) };
}

/** Whether `namespace` is an organization's (compared without case): its modules and providers are private. */
export function isOrganizationNamespace(data: Data, namespace: string): boolean {
  const folded = namespace.toLowerCase();
  return data.organizations.some((o) => o.name.toLowerCase() === folded);
}

/**
 * The same rule for providers, with provider sharing (consumers, global
 * provider sharing), over the providers whose namespace is an organization's
 * name (in-house). A namespace no organization has (a provider mirrored from a
 * public registry) is everyone's, so the answer lists what stays hidden.
 * Provider namespaces are lower case (Terraform folds a provider address), and
 * an organization's name may not be: the names hidden are folded too, so
 * organization "Acme" keeps provider "acme/widgets" to itself.
 */
export function providerReaders(data: Data, principal: Principal): ModuleReaders {
  return everyoneElses(
    data,
    readersOf(
      data,
      principal,
      (o) => o.globalProviderSharing,
      (o) => o.providerConsumers,
    ),
  );
}

function readersOf(data: Data, principal: Principal, global: (o: Organization) => boolean, consumers: (o: Organization) => string[]): ModuleReaders {
  const disabled = new Set(data.organizations.filter((o) => o.isDisabled).map((o) => o.name));
  if (principal.kind === 'user' && principal.user.isSiteAdmin)
    return { everything: true, organizations: new Set([...disabled].map((name) => name.toLowerCase())) };
  const active = data.organizations.filter((o) => !o.isDisabled);
  const own = new Set(
    principal.kind === 'user'
      ? active
          .filter((o) => o.owners.includes(principal.user.id) || data.teams.some((t) => t.organization === o.name && t.members.includes(principal.user.id)))
          .map((o) => o.name)
      : disabled.has(principal.organization.name)
        ? []
        : [principal.organization.name],
  );
  const shared = active.filter((o) => global(o) || consumers(o).some((c) => own.has(c))).map((o) => o.name);
  return { everything: false, organizations: new Set([...own, ...shared]) };
}

/** Whether `readers` may read the modules of `namespace`. */
export function canReadNamespace(readers: ModuleReaders, namespace: string): boolean {
  return readers.everything ? !readers.organizations.has(namespace.toLowerCase()) : readers.organizations.has(namespace);
}

/** Who a principal is, for a log line: never the token. */
export function principalLabel(principal: Principal): string {
  if (principal.kind === 'user') return `user:${principal.user.username}`;
  return principal.kind === 'team' ? `team:${principal.organization.name}/${principal.team.name}` : `organization:${principal.organization.name}`;
}
