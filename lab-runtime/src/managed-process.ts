/**
 * Long-lived processes the lab starts and later stops by PID — containerd, `nodelet server`,
 * `nodelet agent`: a detached child whose output is appended to a log file and whose PID is kept
 * in a pidfile. A pidfile's PID is trusted only while that process's argv still says it is ours
 * (`isOurs`), so a recycled PID is never signalled.
 *
 *   startManaged ─▶ pidfile + log ─▶ managedPid (alive and ours?) ─▶ stopManaged (TERM, KILL, rm pidfile)
 */
import { spawn } from 'node:child_process';
import { open, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AgentError } from '@nodelet/base';
import { isAlive, processArgv, terminate } from './procs.js';

export interface ManagedProcess {
  /** For messages: "containerd", "server", "agent". */
  name: string;
  pidFile: string;
  logFile: string;
}

/** `<dir>/<name>.pid` and `<dir>/<name>.log`. */
export function managedProcess(dir: string, name: string): ManagedProcess {
  return { name, pidFile: join(dir, `${name}.pid`), logFile: join(dir, `${name}.log`) };
}

export interface StartManagedOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Let the process outlive this one (a CLI that starts a daemon and exits). Default false. */
  keepRunning?: boolean;
  /** How to install the binary, said when it is missing (e.g. `apt-get install containerd`). */
  installHint?: string;
}

export interface StartedProcess {
  pid: number;
  /** How it ended, once it has (while this process still watches it); undefined while it runs. */
  exited(): { code: number | null; signal: NodeJS.Signals | null } | undefined;
}

/**
 * Spawns `cmd args` detached (its own process group, so a Ctrl-C of ours does not reach it),
 * output appended to the log file, PID written to the pidfile. Resolves once it has started;
 * ERR_FAILED_PRECONDITION naming the binary when it cannot be started.
 */
export async function startManaged(p: ManagedProcess, cmd: string, args: readonly string[], o: StartManagedOptions = {}): Promise<StartedProcess> {
  const log = await open(p.logFile, 'a', 0o600);
  let ended: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  let pid: number;
  try {
    const child = spawn(cmd, args, { stdio: ['ignore', log.fd, log.fd], detached: true, env: o.env ?? process.env, ...(o.cwd ? { cwd: o.cwd } : {}) });
    const spawnError = await new Promise<Error | undefined>((resolve) => {
      child.once('spawn', () => resolve(undefined));
      child.once('error', resolve);
    });
    if (spawnError) {
      const missing = (spawnError as NodeJS.ErrnoException).code === 'ENOENT';
      const hint = o.installHint ? ` (${o.installHint})` : '';
      throw new AgentError('ERR_FAILED_PRECONDITION', missing ? `${p.name} is not installed${hint}` : `cannot start ${p.name}: ${spawnError.message}`, { cause: spawnError });
    }
    pid = child.pid!;
    child.on('exit', (code, signal) => (ended = { code, signal }));
    if (o.keepRunning) child.unref();
  } finally {
    await log.close();
  }
  await writeFile(p.pidFile, `${pid}\n`);
  return { pid, exited: () => ended };
}

/** The PID in `p`'s pidfile when that process is alive and `isOurs(argv)`; else undefined. */
export async function managedPid(p: ManagedProcess, isOurs: (argv: readonly string[]) => boolean): Promise<number | undefined> {
  let pid: number;
  try {
    pid = Number((await readFile(p.pidFile, 'utf8')).trim());
  } catch {
    // No pidfile: never started here, or stopped.
    return undefined;
  }
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  const argv = await processArgv(pid);
  return argv && isOurs(argv) && (await isAlive(pid)) ? pid : undefined;
}

/**
 * Stops `p` when it runs and is ours: SIGTERM, SIGKILL after `graceMs`, resolved once it is gone.
 * Removes the pidfile either way. True when it was running. Idempotent.
 */
export async function stopManaged(p: ManagedProcess, isOurs: (argv: readonly string[]) => boolean, graceMs: number): Promise<boolean> {
  const pid = await managedPid(p, isOurs);
  if (pid !== undefined) await terminate(pid, graceMs);
  await rm(p.pidFile, { force: true });
  return pid !== undefined;
}

/** The last `lines` lines of a log, for error messages. */
export async function logTail(file: string, lines = 20): Promise<string> {
  try {
    return (await readFile(file, 'utf8')).trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    // An error message is being built: a missing log is worth saying, not throwing over.
    return '(no log)';
  }
}
