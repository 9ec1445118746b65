// Fault injection for the atomicity tests: with MODMIRROR_CRASH_AT=<point>,
// the process kills itself (SIGKILL, no cleanup) when it reaches that point.
// Unset in normal use, where this is one string comparison.

/** The last two are a bucket write's: half its objects uploaded, and all but the manifest. */
export type CrashPoint = 'locked' | 'staged' | 'between-renames' | 'swapped' | 'upload-half' | 'before-manifest';

export function crashPoint(point: CrashPoint): void {
  if (process.env['MODMIRROR_CRASH_AT'] === point) process.kill(process.pid, 'SIGKILL');
}
