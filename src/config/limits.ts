// The config's `limits:`: how large a module version's files may be. Without
// a bound, one stray disk image in a module folder made every build read it
// and every client download it; a CI runner could be killed for the whole
// build. A version over a bound fails alone, naming the file (scan/large.ts).

import type { SizeLimits } from '../types.js';
import { Checker, show, type Problem } from './check.js';

const MiB = 1024 * 1024;
const KEYS = ['fileSize', 'versionSize'];

/**
 * The defaults: a per-file bound at half the per-version one lets a module
 * carry one large artifact (a zipped lambda, a baked image) and still stops
 * a stray build output or disk image before it reaches every client's cache.
 */
export const DEFAULT_LIMITS: SizeLimits = { file: 512 * MiB, version: 1024 * MiB };

/** The tar header's size field holds 11 octal digits: a file must stay under 8 GiB. */
const MAX_BOUND = 8 * 1024 * MiB - 1;

const UNITS: Record<string, number> = { '': 1, b: 1, kb: 1000, mb: 1000 ** 2, gb: 1000 ** 3, kib: 1024, mib: MiB, gib: 1024 * MiB };

/** A size as written: bytes (a whole number), or a number and a unit such as `512MiB`, `1 GiB`, `200MB`. */
export function parseSize(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value > 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(value);
  const unit = match ? UNITS[match[2]!.toLowerCase()] : undefined;
  if (!match || unit === undefined) return undefined;
  const bytes = Math.floor(Number(match[1]) * unit);
  return bytes > 0 ? bytes : undefined;
}

export interface UserLimits {
  fileSize?: number | string;
  versionSize?: number | string;
}

/** Every problem with `limits:`, as the rest of the config's are reported. */
export function validateLimits(value: unknown): Problem[] {
  const check = new Checker();
  if (!check.mapping(value, ['limits'], 'expected a mapping with fileSize and versionSize')) return check.problems;
  check.knownKeys(value, KEYS, ['limits']);
  for (const key of KEYS.filter((k) => k in value)) {
    const bytes = parseSize(value[key]);
    check.expect(
      bytes !== undefined && bytes <= MAX_BOUND,
      ['limits', key],
      `expected a size under 8 GiB such as 512MiB, 2GiB or a number of bytes, got ${show(value[key])}`,
    );
  }
  return check.problems;
}

/** The bounds in bytes, defaults filled. Call after validateLimits found no problem. */
export function resolveLimits(user: UserLimits | undefined): SizeLimits {
  return {
    file: parseSize(user?.fileSize) ?? DEFAULT_LIMITS.file,
    version: parseSize(user?.versionSize) ?? DEFAULT_LIMITS.version,
  };
}
