// Whether a process that left something behind (a lock, a staging folder, a
// scratch folder) is still running: the one check every recovery path uses.

/** True while `pid` names a running process (one of another user's counts: EPERM). */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
