// Fault injection for the atomicity tests: with MODMIRROR_CRASH_AT=<point>,
// the process kills itself (SIGKILL, no cleanup) when it reaches that point.
// Unset in normal use, where this is one string comparison.

/**
 * A new generation's swap (staged, between-renames, swapped); a change in place (journaled:
 * before its first rename, applying: half its files moved); a bucket write's (half its objects
 * uploaded, all but the module states and the manifest, all but the manifest).
 */
export type CrashPoint = 'locked' | 'staged' | 'between-renames' | 'swapped' | 'journaled' | 'applying' | 'upload-half' | 'before-state' | 'before-manifest';

export function crashPoint(point: CrashPoint): void {
  if (process.env['MODMIRROR_CRASH_AT'] === point) process.kill(process.pid, 'SIGKILL');
}
