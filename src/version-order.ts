// Which version is newer, and which one a registry calls latest: one place,
// since scan, emit, publish, verify and serve must all agree.

import semver from 'semver';

/** Newest first; build metadata is ignored by semver, so ties fall back to the string for a stable order. */
export function compareVersionsDesc(a: string, b: string): number {
  return semver.rcompare(a, b) || (a < b ? -1 : a > b ? 1 : 0);
}

/** The version a registry calls latest: the newest release; pre-releases only when nothing else exists. */
export function latestVersion(versions: string[]): string | undefined {
  const releases = versions.filter((v) => semver.prerelease(v) === null);
  const pool = releases.length > 0 ? releases : versions;
  return [...pool].sort(compareVersionsDesc)[0];
}
