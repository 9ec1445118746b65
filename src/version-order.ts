// Which version is newer, and which one a registry calls latest: one place,
// since scan, emit, publish, verify and serve must all agree.

// semver's single functions rather than its index, which loads every module
// of the package (≈50 files) on each command's start.
import prerelease from 'semver/functions/prerelease.js';
import rcompare from 'semver/functions/rcompare.js';
import valid from 'semver/functions/valid.js';

/** The normalized version, or null when `text` is not semver. */
export function validVersion(text: string): string | null {
  return valid(text);
}

/** Newest first; build metadata is ignored by semver, so ties fall back to the string for a stable order. */
export function compareVersionsDesc(a: string, b: string): number {
  return rcompare(a, b) || (a < b ? -1 : a > b ? 1 : 0);
}

/** The version a registry calls latest: the newest release; pre-releases only when nothing else exists. */
export function latestVersion(versions: string[]): string | undefined {
  const releases = versions.filter((v) => prerelease(v) === null);
  const pool = releases.length > 0 ? releases : versions;
  return [...pool].sort(compareVersionsDesc)[0];
}
