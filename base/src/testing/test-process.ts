/**
 * The one way tests and benches run a real process of their own (`nodelet server`, `nodelet agent`,
 * an etcd member; containerd goes through `@nodelet/lab-runtime/testing`, which builds its config):
 *
 *   startTestProcess ─▶ spawned, stdout+stderr appended to logFile
 *        │  ready() polled (pollUntil) until truthy; an exit or the deadline fails the start,
 *        │  the process is stopped and the error carries the log's tail
 *        ▼
 *     running ── kill(signal) ─▶ that signal by PID, resolved once it has exited
 *        └────── stop() ──────▶ SIGTERM by PID, SIGKILL after graceMs; the default temp log removed
 *
 * With `t`, stop() is registered with `cleanups(t)` (last in, first out with the test's other
 * cleanups). A test process that dies without cleaning up SIGKILLs what it started (an `exit`
 * hook), so no child outlives the test run. Only the PID this spawn returned is ever signalled.
 */
import { spawn, type ChildProcess, type Serializable } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeError } from '../errors.js';
import { isCheckDefect, pollUntil } from '../poll.js';
import { childExited, terminateChild } from './child.js';
import { cleanups, type AfterHookHost } from './cleanups.js';

export interface TestProcessOptions<T> {
  /** For messages and the default log's name: "nodelet server", "etcd m0". */
  name: string;
  command: string;
  args: readonly string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /**
   * Where stdout and stderr are appended. Default: a file in a fresh temp dir that stop() removes
   * (kept, and its path printed, with NODELET_TEST_KEEP_LOGS=1).
   */
  logFile?: string;
  /**
   * Resolves to a truthy value once the process serves (a log line, a health endpoint); polled
   * with `pollUntil` (falsy or an ordinary error is "not yet"). Its value is `ready` on the result.
   */
  ready(p: TestProcess<undefined>): Promise<T | undefined | null | false> | T | undefined | null | false;
  /** Default 60 s. */
  readyTimeoutMs?: number;
  /** SIGTERM to SIGKILL in stop(); default 10 s. */
  graceMs?: number;
  /** Registers stop() with `cleanups(t)`. */
  t?: AfterHookHost;
  signal?: AbortSignal;
  /**
   * Opens an IPC channel to a node child (stdio 'ipc'): each message it sends comes here, and
   * `send()` works. For probes preloaded into the process (bench/lib/footprint-probe.mjs).
   */
  ipc?: (message: unknown) => void;
}

export interface TestProcess<T = unknown> {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  /** `performance.now()` just before the spawn, so a bench can time spawn → ready without the log file's setup. */
  readonly startedAt: number;
  /** What ready() resolved to. */
  readonly ready: T;
  /** Everything the process wrote so far. */
  output(): string;
  /** The last `lines` lines of the output, for error messages. */
  tail(lines?: number): string;
  /** The output's JSON lines (pino records), optionally only those whose `msg` is `msg`. */
  records(msg?: string): Array<Record<string, unknown>>;
  /** How it ended, once it has; undefined while it runs. */
  exited(): { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** Sends `signal` (default SIGKILL) to the PID and resolves once it has exited. Does nothing when it has. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** SIGTERM by PID, SIGKILL after `graceMs`; resolves once it is gone. Idempotent. */
  stop(): Promise<void>;
  /** Sends `message` over the IPC channel (`ipc` option); throws without one. */
  send(message: Serializable): void;
}

/**
 * Starts `command args` and resolves once `ready` does. On failure (spawn error, exit, timeout,
 * abort) the process is stopped and the error names it and shows its output's tail.
 */
export async function startTestProcess<T>(o: TestProcessOptions<T>): Promise<TestProcess<T>> {
  const tempDir = o.logFile ? undefined : await mkdtemp(join(tmpdir(), `nodelet-${o.name.replace(/[^A-Za-z0-9-]+/g, '-')}-`));
  const logFile = o.logFile ?? join(tempDir!, 'output.log');
  const log = await open(logFile, 'a', 0o600);
  let child: ChildProcess;
  let ended: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  let spawned: Promise<Error | undefined>;
  let startedAt: number;
  try {
    startedAt = performance.now();
    child = spawn(o.command, o.args, { stdio: ['ignore', log.fd, log.fd, ...(o.ipc ? ['ipc' as const] : [])], env: o.env ?? process.env, ...(o.cwd ? { cwd: o.cwd } : {}) });
    // Listened for before anything is awaited: both events come on the next tick.
    spawned = new Promise<Error | undefined>((resolve) => {
      child.once('spawn', () => resolve(undefined));
      child.once('error', resolve);
    });
    child.on('exit', (code, signal) => (ended = { code, signal }));
    if (o.ipc) child.on('message', o.ipc);
  } finally {
    await log.close();
  }
  // Hooked before anything is awaited, so a test run that ends while this start still waits leaves no child.
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  const spawnError = await spawned;

  const output = (): string => {
    try {
      return readFileSync(logFile, 'utf8');
    } catch {
      // Read for a message or an assertion: a log already removed by stop() reads as empty.
      return '';
    }
  };
  const tail = (lines = 30): string => output().trimEnd().split('\n').slice(-lines).join('\n');
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      process.removeListener('exit', killOnExit);
      await terminateChild(child, o.graceMs ?? 10_000);
      if (!tempDir) return;
      if (process.env.NODELET_TEST_KEEP_LOGS) process.stderr.write(`# ${o.name}: output kept at ${logFile}\n`);
      else await rm(tempDir, { recursive: true, force: true });
    })();
    return stopping;
  };
  const base: TestProcess<undefined> = {
    name: o.name,
    pid: child.pid ?? 0,
    logFile,
    startedAt,
    ready: undefined,
    output,
    tail,
    records: (msg) => output().split('\n').flatMap((line) => {
      if (!line.startsWith('{')) return [];
      try {
        const r = JSON.parse(line) as Record<string, unknown>;
        return msg === undefined || r.msg === msg ? [r] : [];
      } catch {
        // A line cut short by a kill, or not a record: not one of the records asked for.
        return [];
      }
    }),
    exited: () => ended,
    kill: async (signal = 'SIGKILL') => {
      if (ended || child.exitCode !== null || child.signalCode !== null) return;
      const gone = childExited(child);
      process.kill(child.pid!, signal);
      await gone;
    },
    stop,
    send: (message) => {
      if (!o.ipc) throw new Error(`${o.name} was started without an IPC channel (the ipc option)`);
      child.send(message);
    },
  };
  if (spawnError) {
    await stop();
    throw new Error(`cannot start ${o.name} (${o.command}): ${spawnError.message}`, { cause: spawnError });
  }
  if (o.t) cleanups(o.t)(stop);
  try {
    const ready = await pollUntil(`${o.name} ready`, async () => {
      if (ended) throw new ExitedError(`${o.name} exited (${ended.code ?? ended.signal}) before it was ready`);
      return o.ready(base);
    }, { timeoutMs: o.readyTimeoutMs ?? 60_000, intervalMs: 50, signal: o.signal, fatal: (err) => err instanceof ExitedError || isCheckDefect(err) });
    return { ...base, ready };
  } catch (err) {
    const text = tail();
    await stop();
    throw new Error(`${describeError(err)}; its output (${logFile}) ends:\n${text}`, { cause: err });
  }
}

/** The process is gone: waiting longer cannot help. */
class ExitedError extends Error {}

/** The first JSON record in `p`'s output whose `msg` is `msg`, for a `ready` check; undefined before. */
export function firstRecord(p: Pick<TestProcess, 'records'>, msg: string): Record<string, unknown> | undefined {
  return p.records(msg)[0];
}
