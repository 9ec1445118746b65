// The config's `upstream:` block: the registry `modmirror serve` fills the
// mirror from when it is asked for a module it lacks (serve --upstream),
// checked key by key like the rest of mirror.config.yaml (index.ts reports
// each problem with its file:line). A token is never written here: only the
// variable or the file that holds it.

import { resolve } from 'node:path';
import { Checker, show, type Problem } from './check.js';

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
  /** Fill the registry modules a filled version calls before a client asks for them (default true). */
  followCalls?: boolean;
}

export interface ResolvedUpstream {
  url: string | undefined;
  ttlSeconds: number | undefined;
  /** Absolute paths. */
  ca: string | undefined;
  tokenEnv: string | undefined;
  tokenFile: string | undefined;
  followCalls: boolean;
}

/** Ten minutes: a new upstream version shows within that, and a busy CI asks the upstream at most that often per module. */
export const DEFAULT_UPSTREAM_TTL_SECONDS = 600;

const KEYS = ['url', 'ttl', 'ca', 'tokenEnv', 'tokenFile', 'followCalls'];
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
export function validateUpstream(value: unknown): Problem[] {
  const check = new Checker();
  if (!check.mapping(value, ['upstream'], 'expected a mapping such as { url: https://registry.terraform.io, ttl: 10m }')) return check.problems;
  check.knownKeys(value, KEYS, ['upstream']);
  const url = value['url'];
  check.expect(
    typeof url === 'string' && /^https?:\/\/[^/]+/.test(url) && URL.canParse(url),
    ['upstream', 'url'],
    `expected the upstream registry's http(s) URL, got ${show(url)}`,
  );
  if ('ttl' in value)
    check.expect(parseDuration(value['ttl']) !== undefined, ['upstream', 'ttl'], `expected a duration such as 600, 90s, 10m or 1h, got ${show(value['ttl'])}`);
  for (const key of ['ca', 'tokenFile', 'tokenEnv'])
    if (key in value)
      check.expect(
        typeof value[key] === 'string' && value[key] !== '',
        ['upstream', key],
        `expected ${key === 'tokenEnv' ? 'a variable name' : 'a file path'}, got ${show(value[key])}`,
      );
  if ('followCalls' in value)
    check.expect(typeof value['followCalls'] === 'boolean', ['upstream', 'followCalls'], `expected true or false, got ${show(value['followCalls'])}`);
  if ('tokenEnv' in value && 'tokenFile' in value) check.problems.push({ path: ['upstream', 'tokenFile'], message: 'give tokenEnv or tokenFile, not both' });
  return check.problems;
}

/** Paths made absolute against the config file's folder. */
export function resolveUpstream(user: UserUpstream | undefined, base: string): ResolvedUpstream {
  return {
    url: user?.url,
    ttlSeconds: user?.ttl === undefined ? undefined : parseDuration(user.ttl),
    ca: user?.ca === undefined ? undefined : resolve(base, user.ca),
    tokenEnv: user?.tokenEnv,
    tokenFile: user?.tokenFile === undefined ? undefined : resolve(base, user.tokenFile),
    followCalls: user?.followCalls !== false,
  };
}
