// Fault injection for the atomicity tests: with MODMIRROR_CRASH_AT=<point>,
// the process kills itself (SIGKILL, no cleanup) when it reaches that point.
// Unset in normal use, where this is one string comparison.

export type CrashPoint = 'locked' | 'staged' | 'between-renames' | 'swapped';

export function crashPoint(point: CrashPoint): void {
  if (process.env['MODMIRROR_CRASH_AT'] === point) process.kill(process.pid, 'SIGKILL');
}
