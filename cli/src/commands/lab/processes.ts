/**
 * Long-lived nodelet processes started by `nodelet lab up`: detached children with a pidfile
 * and a log file, stopped by that PID (after checking /proc/<pid>/cmdline still names us, so a
 * recycled PID is never signalled).
 */
import { spawn } from 'node:child_process';
import { openSync, closeSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { delay } from '@nodelet/base';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

/** How to run `nodelet <sub>` the same way this process runs (built dist or TS sources). */
export function nodeletCommand(): { cmd: string; args: string[] } {
  const fromSource = process.execArgv.includes('--conditions=source');
  const tsx = `file://${join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')}`;
  const args = fromSource ? ['--conditions=source', '--import', tsx] : [];
  return { cmd: process.execPath, args: [...args, join(REPO_ROOT, 'bin', 'nodelet')] };
}

export interface ManagedProcess {
  name: string;
  pidFile: string;
  logFile: string;
}

export function managed(stateDir: string, name: string): ManagedProcess {
  return { name, pidFile: join(stateDir, `${name}.pid`), logFile: join(stateDir, `${name}.log`) };
}

/**
 * Starts `nodelet <argv>` detached. `prefix` is a command that execs the rest in place (e.g.
 * `nsenter --net=<netns>` for a lab node in its own network namespace), so the pidfile still
 * holds the nodelet process's PID.
 */
export function startDetached(p: ManagedProcess, argv: string[], env: NodeJS.ProcessEnv = process.env, prefix: readonly string[] = []): number {
  const { cmd, args } = nodeletCommand();
  const fd = openSync(p.logFile, 'a', 0o600);
  try {
    const full = [...prefix, cmd, ...args, ...argv];
    const child = spawn(full[0]!, full.slice(1), { stdio: ['ignore', fd, fd], detached: true, env, cwd: REPO_ROOT });
    child.unref();
    writeFileSync(p.pidFile, `${child.pid}\n`);
    return child.pid!;
  } finally {
    closeSync(fd);
  }
}

/** The argv of a live process; undefined when it is gone or a zombie (empty cmdline). */
function cmdline(pid: number): string | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return s ? s.replaceAll('\0', ' ') : undefined;
  } catch {
    return undefined;
  }
}

/** The PID of `p` when it is alive and still runs `nodelet <name>` with `marker` in its argv. */
export function runningPid(p: ManagedProcess, marker: string): number | undefined {
  if (!existsSync(p.pidFile)) return undefined;
  const pid = Number(readFileSync(p.pidFile, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  const cl = cmdline(pid);
  return cl && cl.includes(` ${p.name} `) && cl.includes(marker) ? pid : undefined;
}

/** SIGTERM, wait up to `graceMs`, then SIGKILL. Removes the pidfile. Idempotent. */
export async function stopProcess(p: ManagedProcess, marker: string, graceMs = 15_000): Promise<boolean> {
  const pid = runningPid(p, marker);
  if (pid === undefined) {
    rmSync(p.pidFile, { force: true });
    return false;
  }
  process.kill(pid, 'SIGTERM');
  const until = Date.now() + graceMs;
  while (cmdline(pid) !== undefined && Date.now() < until) await delay(50);
  if (cmdline(pid) !== undefined) process.kill(pid, 'SIGKILL');
  while (cmdline(pid) !== undefined) await delay(20);
  rmSync(p.pidFile, { force: true });
  return true;
}

/** The last lines of a log, for error messages. */
export function logTail(file: string, lines = 20): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
