/**
 * Process helpers for the lab runtime: find, signal and wait for processes by PID, and run a
 * short command. We only ever signal PIDs we started or whose command line names our own
 * private socket/config (guarding against PID reuse) — never by program name.
 */
import { spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { AgentError, delay } from '@nodelet/base';

/** argv of a live process, or undefined when it is gone (or a zombie, which has no argv). */
export async function processArgv(pid: number): Promise<string[] | undefined> {
  try {
    const raw = await readFile(`/proc/${pid}/cmdline`, 'utf8');
    if (raw === '') return undefined;
    return raw.split('\0').filter((s, i, a) => s !== '' || i < a.length - 1);
  } catch {
    return undefined;
  }
}

/** True while `pid` exists and is not a zombie. */
export async function isAlive(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** The parent PID of `pid`, or undefined when it is gone. */
export async function parentPid(pid: number): Promise<number | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** Every PID whose argv satisfies `match` (used to find the shims of our own socket). */
export async function findProcesses(match: (argv: string[]) => boolean): Promise<{ pid: number; argv: string[] }[]> {
  const out: { pid: number; argv: string[] }[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === process.pid) continue;
    const argv = await processArgv(pid);
    if (argv && match(argv)) out.push({ pid, argv });
  }
  return out;
}

/**
 * SIGTERM, wait up to `graceMs`, then SIGKILL and wait up to 5 s more. Resolves once the process
 * is gone; ERR_INTERNAL if even SIGKILL did not end it. Idempotent for a PID that already exited.
 */
export async function terminate(pid: number, graceMs: number): Promise<void> {
  if (!(await isAlive(pid))) return;
  signal(pid, 'SIGTERM');
  if (await waitGone(pid, graceMs)) return;
  signal(pid, 'SIGKILL');
  if (!(await waitGone(pid, 5_000))) throw new AgentError('ERR_INTERNAL', `process ${pid} did not exit after SIGKILL`);
}

export function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/** Polls until the process is gone; false after `timeoutMs`. */
export async function waitGone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (let wait = 5; ; wait = Math.min(wait * 2, 100)) {
    if (!(await isAlive(pid))) return true;
    if (Date.now() >= deadline) return false;
    await delay(wait);
  }
}

/**
 * Runs a command to completion; resolves {code, stdout, stderr}. Never rejects on a non-zero exit.
 * The command is killed after `timeoutMs` (default 30 s): cleanup paths call runc/umount and
 * must not hang on a wedged one.
 */
export function run(cmd: string, args: readonly string[], opts: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], signal: opts.signal, timeout: opts.timeoutMs ?? 30_000, killSignal: 'SIGKILL' });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.on('error', reject);
    child.on('close', (code, sig) => resolve({ code: code ?? 1, stdout, stderr: sig ? `${stderr}${cmd} killed by ${sig} (timeout?)` : stderr }));
  });
}
