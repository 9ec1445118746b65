// Deprecated versions: which versions of which modules are deprecated, why,
// and where to read more. Kept in the mirror itself (each module's state; an
// older mirror's deprecations.json), so a build, a publish, a bundle and every
// static host carry it with the documents it shows up in (each deprecated
// version's `deprecation` in `versions` and in its detail). A leaf module:
// emit, serve, publish and the commands read it.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MirrorError } from '../errors.js';
import type { Deprecation } from '../types.js';
import type { Manifest } from './manifest.js';

export type { Deprecation };

/** Module key (`ns/name/provider`) -> version -> its deprecation. */
export type Deprecations = Record<string, Record<string, Deprecation>>;

export const DEPRECATIONS_FILE = 'deprecations.json';

/**
 * The mirror's deprecations: the manifest's, or a format-1 manifest's
 * deprecations.json (none when it has no file: a mirror from before
 * deprecation, or a new one).
 */
export function readDeprecations(dir: string, manifest: Manifest | undefined): Deprecations {
  return manifest && manifest.format >= 2 ? deprecationsOf(manifest) : readDeprecationsFile(join(dir, DEPRECATIONS_FILE));
}

/** What a manifest records as deprecated, by module and version. */
export function deprecationsOf(manifest: Pick<Manifest, 'modules'>): Deprecations {
  const out: Deprecations = {};
  for (const [key, { versions }] of Object.entries(manifest.modules)) {
    for (const v of versions) if (v.deprecation) (out[key] ??= {})[v.version] = v.deprecation;
  }
  return out;
}

/** The deprecations in `file` (a mirror's deprecations.json); none when it is missing. */
export function readDeprecationsFile(file: string): Deprecations {
  if (!existsSync(file)) return {};
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw malformed(file, (error as Error).message);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw malformed(file, 'expected an object of modules');
  for (const [key, versions] of Object.entries(value)) {
    if (typeof versions !== 'object' || versions === null) throw malformed(file, `"${key}" is not an object of versions`);
    for (const [version, d] of Object.entries(versions as Record<string, unknown>)) {
      const { reason, link } = (d ?? {}) as Partial<Deprecation>;
      if (typeof reason !== 'string' || (link !== null && typeof link !== 'string'))
        throw malformed(file, `"${key}" ${version} needs a "reason" string and a "link" string or null`);
    }
  }
  return value as Deprecations;
}

/** The file's text for the modules and versions a mirror holds (a version gone from the sources takes its deprecation with it). */
export function deprecationsText(deprecations: Deprecations, versionsByModule: Iterable<[string, string[]]>): string {
  const kept: Deprecations = {};
  for (const [key, versions] of versionsByModule) {
    const of = deprecations[key];
    if (!of) continue;
    const entries = versions.filter((v) => of[v] !== undefined).map((v) => [v, of[v]!] as const);
    if (entries.length > 0) kept[key] = Object.fromEntries(entries);
  }
  return `${JSON.stringify(kept, null, 2)}\n`;
}

/** A link must be one a browser may open from the browse page. */
export function checkDeprecationLink(link: string): string | undefined {
  try {
    const url = new URL(link);
    return url.protocol === 'http:' || url.protocol === 'https:' ? undefined : 'must be an http(s) URL';
  } catch {
    return 'must be an absolute http(s) URL';
  }
}

function malformed(file: string, problem: string): MirrorError {
  return new MirrorError('OUTPUT_FAILED', `The deprecations file "${file}" is malformed: ${problem}`, {
    hint: 'Restore it from a backup or a bundle, or fix it by hand; modmirror deprecate writes it.',
  });
}
