// `serve --access private`: who is calling, from the bearer token and the
// management data (read on every request, so a change through the admin API
// counts on the next one), and the part of the mirror that caller may see.
// Routes then work on that part as if it were the whole mirror, so listings,
// counts, `next_offset`, search and 404s say nothing about the rest.
// Modules by the organizations' module sharing, providers by their provider
// sharing (auth.ts). Refusals are recorded per request for the audit line the
// server writes.

import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { MirrorError } from '../errors.js';
import {
  canReadNamespace,
  isOrganizationNamespace,
  isExpired,
  moduleReaders,
  principalOf,
  principalLabel,
  providerReaders,
  storedTokenOf,
  type ModuleReaders,
  type Principal,
} from '../management/auth.js';
import type { Data, Token } from '../management/types.js';
import type { Store } from '../management/store.js';
import type { TokenUse } from '../management/token-use.js';
import { parseProviderKey } from '../protocol/providers.js';
import type { MirrorIndex } from './mirror.js';
import type { ArchiveSigner } from './signing.js';

export interface Caller {
  /** For the audit log: `user:alice`, `team:acme/platform`, `organization:acme`. */
  label: string;
  readers: ModuleReaders;
  providerReaders: ModuleReaders;
  /** Equal for callers who see the same modules and providers, so they share cached answers and nobody else does. */
  key: string;
  /** The id of the token that made this caller: the URLs signed for it name it. */
  tokenId: string;
  /** Whom the token stands for, for logs and usage: a team's or an organization's token names its organization (and team), a user's the user. */
  organization?: string;
  team?: string;
  user?: string;
  /** A site administrator's user token: reads everything, /metrics included. */
  siteAdmin: boolean;
  /** The stored token, for noting its use. */
  token: Token;
}

/** Bounds for the caches below: enough for every token of a large site, small next to the mirror's. */
const MAX_CALLERS = 10_000;
const MAX_VIEWS = 1_000;

export class PrivateAccess {
  private callers = new Map<string, Caller | null>();
  /** The same callers by token id, for signed URLs. */
  private byTokenId = new Map<string, Caller | null>();
  private callersGeneration = -1;
  private views = new Map<string, MirrorIndex>();
  private viewsOf = '';
  private readonly refusals = new WeakMap<IncomingMessage, { who: string; why: string }>();

  constructor(
    private readonly store: Store,
    readonly signer: ArchiveSigner,
    readonly archiveUrlTtlSeconds: number,
    private readonly tokenUse?: TokenUse,
    /** Module namespaces no organization has are read by every caller (a serve --upstream's: the upstream's content). */
    private readonly othersEveryones = false,
  ) {}

  /** Whether `namespace` is an organization's: never asked of an upstream, whose content is public. */
  isPrivateNamespace(namespace: string): boolean {
    return isOrganizationNamespace(this.current(), namespace);
  }

  /** The caller of a registry request; 401 (recorded) without a token the data knows. */
  caller(req: IncomingMessage): Caller {
    const caller = this.callerIfAny(req);
    if (caller) return caller;
    this.refuse(req, 'anonymous', 'no bearer token');
    throw unauthorized();
  }

  /** The caller when the request has an Authorization header (401, recorded, when the data does not know it); else undefined. */
  callerIfAny(req: IncomingMessage): Caller | undefined {
    if (req.headers.authorization === undefined) return undefined;
    const caller = this.lookUp(req.headers.authorization);
    if (caller && isCurrent(caller)) {
      this.tokenUse?.used(caller.token);
      return caller;
    }
    if (caller) this.refuse(req, caller.label, 'the token has expired');
    else this.refuse(req, 'unknown-token', 'the token is not known, revoked, or its organization is disabled');
    throw unauthorized();
  }

  /** The caller of a token that works now (its use recorded); undefined for none, or one that does not (no refusal recorded). */
  callerOrNone(req: IncomingMessage): Caller | undefined {
    const caller = req.headers.authorization === undefined ? null : this.lookUp(req.headers.authorization);
    if (!caller || !isCurrent(caller)) return undefined;
    this.tokenUse?.used(caller.token);
    return caller;
  }

  /** The caller a header's token makes, expired or not; null when the data does not know the token. */
  private lookUp(header: string): Caller | null {
    const data = this.current();
    // Keyed by a hash: the cache holds no token.
    const id = createHash('sha256').update(header).digest('base64url');
    let caller = this.callers.get(id);
    if (caller === undefined) {
      const token = storedTokenOf(data, header);
      caller = token ? this.callerOfToken(data, token) : null;
      this.callers.set(id, caller);
    }
    return caller;
  }

  /** The data, with the caches of callers started over when it has changed. */
  private current(): Data {
    const data = this.store.read();
    if (this.store.generation !== this.callersGeneration || this.callers.size + this.byTokenId.size >= MAX_CALLERS) {
      this.callers.clear();
      this.byTokenId.clear();
      this.callersGeneration = this.store.generation;
    }
    return data;
  }

  private callerOfToken(data: Data, token: Token): Caller | null {
    let caller = this.byTokenId.get(token.id);
    if (caller === undefined) {
      const principal = principalOf(data, token);
      caller = principal
        ? callerOf(principal, token, moduleReaders(data, principal, { othersEveryones: this.othersEveryones }), providerReaders(data, principal))
        : null;
      this.byTokenId.set(token.id, caller);
    }
    return caller;
  }

  /** The caller a signed URL was issued to, as the data stands now; null when its token is gone or no longer counts. */
  private callerOfTokenId(tokenId: string): Caller | null {
    const data = this.current();
    const cached = this.byTokenId.get(tokenId);
    if (cached !== undefined) return cached;
    const token = data.tokens.find((t) => t.id === tokenId);
    if (token) return this.callerOfToken(data, token);
    this.byTokenId.set(tokenId, null);
    return null;
  }

  /** The part of `index` the caller may read; made once per mirror generation and set of readable namespaces. */
  view(index: MirrorIndex, caller: Caller): MirrorIndex {
    if (this.viewsOf !== index.generation || this.views.size >= MAX_VIEWS) {
      this.views.clear();
      this.viewsOf = index.generation;
    }
    let view = this.views.get(caller.key);
    if (!view) {
      const modules = index.modules.filter((m) => canReadNamespace(caller.readers, m.summary.namespace));
      // The caller's key is part of the generation: every answer cached by generation is then per caller.
      view = {
        ...index,
        generation: `${index.generation}|${caller.key}`,
        modules,
        byKey: new Map(modules.map((m) => [m.key, m])),
        providers: providersView(index.providers, caller.providerReaders),
      };
      this.views.set(caller.key, view);
    }
    return view;
  }

  /**
   * A file fetched by a URL this registry signed (Terraform's archive and
   * package fetches send no token) or with a known token (OpenTofu's
   * use_registry_credentials, browsers): the caller, the one the URL was
   * issued to for a valid signature, so the file is read as that token reads
   * it now. 401 without either, 403 for an expired or altered signature or
   * one whose token is gone (revoked, or its organization disabled).
   */
  signedOrCaller(req: IncomingMessage, signedPath: string, query: URLSearchParams, what: string): Caller {
    const signature = this.signer.check(signedPath, query);
    if (signature.status === 'valid') {
      const issuedTo = this.callerOfTokenId(signature.token);
      if (issuedTo && isCurrent(issuedTo)) return issuedTo;
      this.refuse(req, 'anonymous', `${what} URL of a token that is revoked or expired, or whose organization is disabled`);
      throw forbiddenSignature('revoked');
    }
    const caller = this.callerIfAny(req);
    if (caller) return caller;
    if (signature.status === 'absent') {
      this.refuse(req, 'anonymous', `${what} without a signature or a token`);
      throw unauthorized();
    }
    this.refuse(req, 'anonymous', `${what} URL signature ${signature.status}`);
    throw forbiddenSignature(signature.status);
  }

  /** Records why a request was refused, for the audit line written when it is answered. */
  refuse(req: IncomingMessage, who: string, why: string): void {
    this.refusals.set(req, { who, why });
  }

  refusalOf(req: IncomingMessage): { who: string; why: string } | undefined {
    return this.refusals.get(req);
  }
}

function callerOf(principal: Principal, token: Token, readers: ModuleReaders, providers: ModuleReaders): Caller {
  const describe = (r: ModuleReaders) => `${r.everything ? 'all-but' : 'only'}:${[...r.organizations].sort().join(',')}`;
  const key = createHash('sha256')
    .update(`${describe(readers)}\n${describe(providers)}`)
    .digest('base64url')
    .slice(0, 22);
  const who =
    principal.kind === 'user'
      ? { user: principal.user.username }
      : { organization: principal.organization.name, ...(principal.kind === 'team' ? { team: principal.team.name } : {}) };
  const siteAdmin = principal.kind === 'user' && principal.user.isSiteAdmin;
  return {
    label: principalLabel(principal),
    readers,
    providerReaders: providers,
    key,
    tokenId: token.id,
    siteAdmin,
    token,
    ...who,
  };
}

/** The providers whose namespace `readers` may read: every map of the index cut to them. */
function providersView(providers: MirrorIndex['providers'], readers: ModuleReaders): MirrorIndex['providers'] {
  const readable = (key: string) => canReadNamespace(readers, parseProviderKey(key).namespace);
  const keep = <V>(map: Map<string, V>, keyOf: (entry: [string, V]) => string) => new Map([...map].filter((entry) => readable(keyOf(entry))));
  return {
    path: providers.path,
    keys: new Set([...providers.keys].filter(readable)),
    zips: keep(providers.zips, ([, key]) => key),
    releaseFiles: keep(providers.releaseFiles, ([, key]) => key),
    // NAMESPACE/TYPE: any host stands in for the parse.
    registry: new Set([...providers.registry].filter((nsType) => readable(`-/${nsType}`))),
  };
}

/**
 * One audit line. Every field a caller can shape (a path, a user name, a reason
 * naming a decoded path) is quoted with JSON's escapes and anything outside
 * printable ASCII escaped too, so no request writes a line break or a field of
 * its own into the log.
 */
export function auditLine(method: string, path: string, status: number, who: string, why: string): string {
  const field = (value: string) => (/^[!#-~]+$/.test(value) ? value : quoted(value));
  return `refused ${field(method)} ${field(path)} ${status} who=${field(who)} why=${quoted(why)}`;
}

const quoted = (value: string) => JSON.stringify(value).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

export const unauthorized = () =>
  new MirrorError(
    'UNAUTHORIZED',
    'This registry is private: send a token it knows as Authorization: Bearer <token> (a credentials block or TF_TOKEN_<host> in the CLI config).',
  );

/** An archive URL whose signature is wrong or too old: 403, with the registry's JSON error body. */
export const forbiddenSignature = (why: 'expired' | 'invalid' | 'revoked') =>
  new MirrorError(
    'FORBIDDEN',
    why === 'expired'
      ? 'This archive URL has expired: ask the registry for the download location again.'
      : why === 'revoked'
        ? 'This archive URL no longer works: the token it was issued to is revoked or expired, or its organization is disabled.'
        : 'This archive URL is not one the registry signed (altered or signed with a replaced key).',
  );

/** A caller whose token works now: not past its expiry. */
function isCurrent(caller: Caller): boolean {
  return !isExpired(caller.token);
}
