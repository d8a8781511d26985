/**
 * The `nodelet server` and `nodelet agent` processes of `nodelet lab up`, managed with
 * lab-runtime's process manager: detached, with a pidfile and a log file in the state dir, and
 * ours only while their argv still runs `nodelet <name>` with the state dir in it.
 */
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { managedPid, managedProcess, startManaged, stopManaged, type ManagedProcess } from '@nodelet/lab-runtime';
import { AGENT_NODE_OPTIONS } from '@nodelet/systemd';

export { logTail, type ManagedProcess } from '@nodelet/lab-runtime';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

/** How to run `nodelet <sub>` the same way this process runs (built dist or TS sources). */
export function nodeletCommand(): { cmd: string; args: string[] } {
  const fromSource = process.execArgv.includes('--conditions=source');
  const tsx = `file://${join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')}`;
  const args = fromSource ? ['--conditions=source', '--import', tsx] : [];
  return { cmd: process.execPath, args: [...args, join(REPO_ROOT, 'bin', 'nodelet')] };
}

/** `<stateDir>/<name>.pid` and `.log`. */
export const managed = managedProcess;

/**
 * Starts `nodelet <argv…>` detached so it outlives this command; resolves with its PID. `prefix`
 * is a command that execs the rest in place (e.g. `nsenter --net=<netns>` for a lab node in its
 * own network namespace), so the pidfile still holds the nodelet process's PID.
 */
export async function startDetached(p: ManagedProcess, argv: string[], env: NodeJS.ProcessEnv = process.env, prefix: readonly string[] = []): Promise<number> {
  const { cmd, args } = nodeletCommand();
  // The agent runs with the node flags its systemd unit gives it (small V8 semi-spaces, one V8 worker).
  const nodeFlags = argv[0] === 'agent' ? AGENT_NODE_OPTIONS.split(' ') : [];
  const full = [...prefix, cmd, ...nodeFlags, ...args, ...argv];
  return (await startManaged(p, full[0]!, full.slice(1), { env, cwd: REPO_ROOT, keepRunning: true })).pid;
}

const runsNodelet = (p: ManagedProcess, marker: string) => (argv: readonly string[]): boolean => argv.includes(p.name) && argv.some((a) => a.includes(marker));

/** The PID of `p` when it is alive and still runs `nodelet <name>` with `marker` in its argv. */
export function runningPid(p: ManagedProcess, marker: string): Promise<number | undefined> {
  return managedPid(p, runsNodelet(p, marker));
}

/** SIGTERM, wait up to `graceMs`, then SIGKILL. Removes the pidfile. Idempotent. */
export function stopProcess(p: ManagedProcess, marker: string, graceMs = 15_000): Promise<boolean> {
  return stopManaged(p, runsNodelet(p, marker), graceMs);
}
