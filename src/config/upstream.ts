// The config's `upstream:` block: the registry `modmirror serve` fills the
// mirror from when it is asked for a module it lacks (serve --upstream),
// checked key by key like the rest of mirror.config.yaml (index.ts reports
// each problem with its file:line). A token is never written here: only the
// variable or the file that holds it.

import { resolve } from 'node:path';

export interface UserUpstream {
  url?: string;
  /** How long a version list is served before the upstream is asked again: seconds, or `30s`, `10m`, `1h`. */
  ttl?: number | string;
  /** A PEM file of CA certificates trusted for the upstream, beside Node.js's own. */
  ca?: string;
  /** The environment variable holding the upstream's token. */
  tokenEnv?: string;
  /** A file holding the upstream's token (its first line). */
  tokenFile?: string;
}

export interface ResolvedUpstream {
  url: string | undefined;
  ttlSeconds: number | undefined;
  /** Absolute paths. */
  ca: string | undefined;
  tokenEnv: string | undefined;
  tokenFile: string | undefined;
}

/** Ten minutes: a new upstream version shows within that, and a busy CI asks the upstream at most that often per module. */
export const DEFAULT_UPSTREAM_TTL_SECONDS = 600;

const KEYS = ['url', 'ttl', 'ca', 'tokenEnv', 'tokenFile'];
const UNITS: Record<string, number> = { '': 1, s: 1, m: 60, h: 3600, d: 86400 };

/** A duration as written: whole seconds, or a number and s, m, h or d (`90s`, `10m`); undefined when it is none. */
export function parseDuration(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value > 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const match = /^\s*(\d+)\s*([smhd]?)\s*$/i.exec(value);
  if (!match) return undefined;
  const seconds = Number(match[1]) * UNITS[match[2]!.toLowerCase()]!;
  return seconds > 0 ? seconds : undefined;
}

/** Every problem of an `upstream:` value, with the key path it is at. */
export function validateUpstream(value: unknown): { path: (string | number)[]; message: string }[] {
  const problems: { path: (string | number)[]; message: string }[] = [];
  const show = (v: unknown) => JSON.stringify(v) ?? String(v);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return [{ path: ['upstream'], message: 'expected a mapping such as { url: https://registry.terraform.io, ttl: 10m }' }];
  }
  const u = value as Record<string, unknown>;
  for (const key of Object.keys(u))
    if (!KEYS.includes(key)) problems.push({ path: ['upstream', key], message: `unknown key; expected one of ${KEYS.join(', ')}` });
  if (!(typeof u['url'] === 'string' && /^https?:\/\/[^/]+/.test(u['url']) && URL.canParse(u['url'])))
    problems.push({ path: ['upstream', 'url'], message: `expected the upstream registry's http(s) URL, got ${show(u['url'])}` });
  if ('ttl' in u && parseDuration(u['ttl']) === undefined)
    problems.push({ path: ['upstream', 'ttl'], message: `expected a duration such as 600, 90s, 10m or 1h, got ${show(u['ttl'])}` });
  for (const key of ['ca', 'tokenFile', 'tokenEnv'])
    if (key in u && !(typeof u[key] === 'string' && u[key] !== ''))
      problems.push({ path: ['upstream', key], message: `expected ${key === 'tokenEnv' ? 'a variable name' : 'a file path'}, got ${show(u[key])}` });
  if ('tokenEnv' in u && 'tokenFile' in u) problems.push({ path: ['upstream', 'tokenFile'], message: 'give tokenEnv or tokenFile, not both' });
  return problems;
}

/** Paths made absolute against the config file's folder. */
export function resolveUpstream(user: UserUpstream | undefined, base: string): ResolvedUpstream {
  return {
    url: user?.url,
    ttlSeconds: user?.ttl === undefined ? undefined : parseDuration(user.ttl),
    ca: user?.ca === undefined ? undefined : resolve(base, user.ca),
    tokenEnv: user?.tokenEnv,
    tokenFile: user?.tokenFile === undefined ? undefined : resolve(base, user.tokenFile),
  };
}
