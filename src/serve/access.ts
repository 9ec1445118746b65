// `serve --access private`: who is calling, from the bearer token and the
// management data (read on every request, so a change through the admin API
// counts on the next one), and the part of the mirror that caller may see.
// Routes then work on that part as if it were the whole mirror, so listings,
// counts, `next_offset`, search and 404s say nothing about the rest.
// Refusals are recorded per request for the audit line the server writes.

import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { MirrorError } from '../errors.js';
import { authenticate, canReadNamespace, moduleReaders, principalLabel, type ModuleReaders } from '../management/auth.js';
import type { Store } from '../management/store.js';
import type { MirrorIndex } from './mirror.js';
import type { ArchiveSigner } from './signing.js';

export interface Caller {
  /** For the audit log: `user:alice`, `team:acme/platform`, `organization:acme`. */
  label: string;
  readers: ModuleReaders;
  /** Equal for callers who see the same modules, so they share cached answers and nobody else does. */
  key: string;
}

/** Bounds for the caches below: enough for every token of a large site, small next to the mirror's. */
const MAX_CALLERS = 10_000;
const MAX_VIEWS = 1_000;

export class PrivateAccess {
  private callers = new Map<string, Caller | null>();
  private callersGeneration = -1;
  private views = new Map<string, MirrorIndex>();
  private viewsOf = '';
  private readonly refusals = new WeakMap<IncomingMessage, { who: string; why: string }>();

  constructor(
    private readonly store: Store,
    readonly signer: ArchiveSigner,
    readonly archiveUrlTtlSeconds: number,
  ) {}

  /** The caller of a registry request; 401 (recorded) without a token the data knows. */
  caller(req: IncomingMessage): Caller {
    const caller = this.callerIfAny(req);
    if (caller) return caller;
    this.refuse(req, 'anonymous', 'no bearer token');
    throw unauthorized();
  }

  /** The caller when the request has an Authorization header (401, recorded, when the data does not know it); else undefined. */
  callerIfAny(req: IncomingMessage): Caller | undefined {
    const header = req.headers.authorization;
    if (header === undefined) return undefined;
    const data = this.store.read();
    if (this.store.generation !== this.callersGeneration || this.callers.size >= MAX_CALLERS) {
      this.callers.clear();
      this.callersGeneration = this.store.generation;
    }
    // Keyed by a hash: the cache holds no token.
    const id = createHash('sha256').update(header).digest('base64url');
    let caller = this.callers.get(id);
    if (caller === undefined) {
      const principal = authenticate(data, header);
      caller = principal ? callerOf(principal, moduleReaders(data, principal)) : null;
      this.callers.set(id, caller);
    }
    if (caller) return caller;
    this.refuse(req, 'unknown-token', 'the token is not known, revoked, or its organization is disabled');
    throw unauthorized();
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
      view = { ...index, generation: `${index.generation}|${caller.key}`, modules, byKey: new Map(modules.map((m) => [m.key, m])) };
      this.views.set(caller.key, view);
    }
    return view;
  }

  /**
   * A file fetched by a URL this registry signed (Terraform's archive and
   * package fetches send no token) or with a known token (OpenTofu's
   * use_registry_credentials, browsers). Undefined for a valid signature (whoever
   * got the URL could read the file); else the caller; 401 without either,
   * 403 for an expired or altered signature.
   */
  signedOrCaller(req: IncomingMessage, signedPath: string, query: URLSearchParams, what: string): Caller | undefined {
    const signature = this.signer.check(signedPath, query);
    if (signature === 'valid') return undefined;
    const caller = this.callerIfAny(req);
    if (caller) return caller;
    if (signature === 'absent') {
      this.refuse(req, 'anonymous', `${what} without a signature or a token`);
      throw unauthorized();
    }
    this.refuse(req, 'anonymous', `${what} URL signature ${signature}`);
    throw forbiddenSignature(signature);
  }

  /** Records why a request was refused, for the audit line written when it is answered. */
  refuse(req: IncomingMessage, who: string, why: string): void {
    this.refusals.set(req, { who, why });
  }

  refusalOf(req: IncomingMessage): { who: string; why: string } | undefined {
    return this.refusals.get(req);
  }
}

function callerOf(principal: Parameters<typeof principalLabel>[0], readers: ModuleReaders): Caller {
  const names = [...readers.organizations].sort().join(',');
  const key = createHash('sha256').update(`${readers.everything ? 'all-but' : 'only'}:${names}`).digest('base64url').slice(0, 22);
  return { label: principalLabel(principal), readers, key };
}

export const unauthorized = () =>
  new MirrorError('UNAUTHORIZED', 'This registry is private: send a token it knows as Authorization: Bearer <token> (a credentials block or TF_TOKEN_<host> in the CLI config).');

/** An archive URL whose signature is wrong or too old: 403, with the registry's JSON error body. */
export const forbiddenSignature = (why: 'expired' | 'invalid') =>
  new MirrorError(
    'FORBIDDEN',
    why === 'expired' ? 'This archive URL has expired: ask the registry for the download location again.' : 'This archive URL is not one the registry signed (altered or signed with a replaced key).',
  );
