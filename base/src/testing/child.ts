import type { ChildProcess } from 'node:child_process';

/** Resolves once `child` has exited (at once if it already has). */
export function childExited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Stops a process a test started, by its handle: SIGTERM, SIGKILL after `graceMs`; resolves when it is gone. */
export async function terminateChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await childExited(child);
  clearTimeout(t);
}
