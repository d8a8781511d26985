/**
 * Whether a process with this PID exists (signal 0): one another user owns counts (EPERM), as
 * does a zombie not yet reaped. For PID-named leftovers (lock files, test namespaces) whose
 * owner may be gone.
 */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
