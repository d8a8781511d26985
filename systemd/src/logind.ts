/**
 * systemd-logind's shutdown inhibitor over the system bus, for the agent's graceful node shutdown
 * (docs/agent.md, "Graceful node shutdown"). What it speaks:
 *
 *   inhibitDelayMaxMs()   property org.freedesktop.login1.Manager.InhibitDelayMaxUSec
 *   raiseInhibitDelay()   /etc/systemd/logind.conf.d/99-nodelet.conf (InhibitDelayMaxSec=N), then
 *                         org.freedesktop.systemd1.Manager.KillUnit("systemd-logind.service", "all", SIGHUP)
 *   inhibit()             org.freedesktop.login1.Manager.Inhibit("shutdown", "nodelet",
 *                         "nodelet is shutting down pods", "delay") → a lock held until release()
 *   watchShutdown()       the PrepareForShutdown(b) signal of /org/freedesktop/login1
 *
 * Why subprocesses and not a D-Bus library: Inhibit returns the lock as a UNIX file descriptor,
 * and the lock lasts exactly as long as that descriptor is open. Node's sockets cannot receive
 * descriptors (SCM_RIGHTS); the npm D-Bus clients (dbus-next, dbus-native) only get them through
 * the native `usocket` addon, which needs a compiler at install time, and dbus-next itself has
 * not been released since 2021. systemd ships the tools for each step instead: `systemd-inhibit`
 * takes the lock and holds it while its child runs (here `cat` on a pipe we own: closing the pipe,
 * or the agent dying, releases the lock, so a crashed agent never blocks a shutdown), and `busctl`
 * (JSON output) reads the property, sends KillUnit and streams the signal. Both are part of every
 * systemd that has logind; without them or without a system bus every call fails with
 * ERR_UNAVAILABLE, which the caller treats as "graceful shutdown is not available here".
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AgentError, abortError, type Logger } from '@nodelet/base';

const LOGIND = ['org.freedesktop.login1', '/org/freedesktop/login1', 'org.freedesktop.login1.Manager'] as const;
const SYSTEMD = ['org.freedesktop.systemd1', '/org/freedesktop/systemd1', 'org.freedesktop.systemd1.Manager'] as const;
const SHUTDOWN_MATCH = "type='signal',sender='org.freedesktop.login1',path='/org/freedesktop/login1',interface='org.freedesktop.login1.Manager',member='PrepareForShutdown'";
/** Where logind reads drop-ins; ours sorts last so it wins over the distro's. */
export const LOGIND_DROPIN = '/etc/systemd/logind.conf.d/99-nodelet.conf';
const CALL_TIMEOUT_MS = 10_000;

/** A held delay lock. */
export interface InhibitLock {
  /** Releases the lock (logind may then go on with the shutdown). Idempotent; resolves once it is gone. */
  release(): Promise<void>;
  /** Resolves when the lock is gone, released or lost (the holder process died). */
  readonly gone: Promise<void>;
}

/** A running PrepareForShutdown watch. */
export interface ShutdownWatch {
  /** Resolves when the watch ends by itself (bus gone, logind restarted away); never rejects. */
  readonly ended: Promise<void>;
  close(): void;
}

/**
 * logind as the node shutdown manager needs it; the agent's tests use a fake at this boundary.
 * Every method fails with ERR_UNAVAILABLE when there is no system bus or logind does not answer.
 */
export interface ShutdownInhibitor {
  /** logind's InhibitDelayMaxSec: how long a delay lock may hold a shutdown back, in ms. */
  inhibitDelayMaxMs(signal: AbortSignal): Promise<number>;
  /** Raises InhibitDelayMaxSec to `ms` (rounded to seconds) with a drop-in, and asks logind to reload. */
  raiseInhibitDelay(ms: number, signal: AbortSignal): Promise<void>;
  /** Takes a shutdown delay lock; resolves once logind granted it. */
  inhibit(signal: AbortSignal): Promise<InhibitLock>;
  /** Calls `onEvent(true)` when a shutdown starts and `onEvent(false)` when it was cancelled. Resolves once subscribed. */
  watchShutdown(onEvent: (shuttingDown: boolean) => void, signal: AbortSignal): Promise<ShutdownWatch>;
}

export interface LogindOptions {
  log: Logger;
  /** The system bus socket (default: $DBUS_SYSTEM_BUS_ADDRESS's path, else /run/dbus/system_bus_socket). */
  busSocket?: string;
  /** The drop-in written by raiseInhibitDelay (tests point it elsewhere). */
  dropInPath?: string;
  /** Tool names (tests point them at recorders). */
  busctl?: string;
  systemdInhibit?: string;
}

function systemBusSocket(env: NodeJS.ProcessEnv): string {
  const addr = env.DBUS_SYSTEM_BUS_ADDRESS;
  const m = addr ? /(?:^|;)unix:path=([^,;]+)/.exec(addr) : null;
  return m ? m[1]! : '/run/dbus/system_bus_socket';
}

/** The real inhibitor (module comment). */
export function logindInhibitor(o: LogindOptions): ShutdownInhibitor {
  const busctl = o.busctl ?? 'busctl';
  const inhibitBin = o.systemdInhibit ?? 'systemd-inhibit';
  const socket = o.busSocket ?? systemBusSocket(process.env);
  const dropIn = o.dropInPath ?? LOGIND_DROPIN;

  const needBus = (): void => {
    if (!existsSync(socket)) throw new AgentError('ERR_UNAVAILABLE', `no system bus at "${socket}" (is dbus running?)`);
  };

  /** One busctl call with JSON output; its stderr becomes the error. */
  const call = (args: string[], signal: AbortSignal): Promise<string> => {
    needBus();
    return new Promise((resolve, reject) => {
      execFile(busctl, ['--system', '--json=short', ...args], { signal, timeout: CALL_TIMEOUT_MS, encoding: 'utf8' }, (err, stdout, stderr) => {
        if (signal.aborted) return reject(abortError(signal.reason));
        if (err) return reject(new AgentError('ERR_UNAVAILABLE', `busctl ${args[0]} failed: ${(stderr || err.message).trim()}`, { cause: err }));
        resolve(stdout);
      });
    });
  };

  return {
    async inhibitDelayMaxMs(signal) {
      const out = await call(['get-property', ...LOGIND, 'InhibitDelayMaxUSec'], signal);
      const v = (JSON.parse(out) as { type?: string; data?: unknown }).data;
      if (typeof v !== 'number') throw new AgentError('ERR_INTERNAL', `logind's InhibitDelayMaxUSec is not a number: ${out.trim()}`);
      return Math.floor(v / 1000);
    },

    async raiseInhibitDelay(ms, signal) {
      const text = `# Written by nodelet: room for graceful node shutdown (shutdownGracePeriod).\n[Login]\nInhibitDelayMaxSec=${Math.round(ms / 1000)}\n`;
      await mkdir(dirname(dropIn), { recursive: true, mode: 0o755 });
      const tmp = join(dirname(dropIn), `.99-nodelet.conf.${process.pid}`);
      await writeFile(tmp, text, { mode: 0o644 });
      await rename(tmp, dropIn);
      // logind rereads its configuration on SIGHUP (what `systemctl kill -s HUP` sends).
      await call(['call', ...SYSTEMD, 'KillUnit', 'ssi', 'systemd-logind.service', 'all', '1'], signal);
    },

    async inhibit(signal) {
      needBus();
      const child = spawn(inhibitBin, ['--what=shutdown', '--who=nodelet', '--why=nodelet is shutting down pods', '--mode=delay', '--', 'sh', '-c', 'echo held && exec cat'], {
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      return holdLock(child, signal, o.log);
    },

    async watchShutdown(onEvent, signal) {
      needBus();
      // --match filters on the bus side; busctl prints one JSON object per message.
      const child = spawn(busctl, ['--system', '--json=short', `--match=${SHUTDOWN_MATCH}`, 'monitor'], { stdio: ['ignore', 'pipe', 'pipe'] });
      return streamSignals(child, onEvent, signal, o.log);
    },
  };
}

/** Waits for systemd-inhibit's child to say "held"; the lock lives until its stdin closes. */
function holdLock(child: ChildProcess, signal: AbortSignal, log: Logger): Promise<InhibitLock> {
  const gone = new Promise<void>((r) => child.once('close', () => r()));
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  // The pipe may already be closed when the process failed: its exit is what we report.
  child.stdin!.on('error', (err) => log.debug?.({ err: String(err) }, 'Inhibitor pipe closed'));
  const release = async (): Promise<void> => {
    child.stdin!.end();
    await gone;
  };
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      void release();
      reject(abortError(signal.reason));
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    child.once('error', (err) => {
      signal.removeEventListener('abort', onAbort);
      reject(new AgentError('ERR_UNAVAILABLE', `cannot run systemd-inhibit: ${err.message}`, { cause: err }));
    });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (!out.includes('held')) return;
      child.stdout!.removeAllListeners('data');
      child.stdout!.resume();
      signal.removeEventListener('abort', onAbort);
      resolve({ release, gone });
    });
    void gone.then(() => {
      signal.removeEventListener('abort', onAbort);
      reject(new AgentError('ERR_UNAVAILABLE', `systemd-inhibit failed (exit ${child.exitCode}): ${stderr.trim() || 'no output'}`));
    });
  });
}

/**
 * Parses busctl's JSON lines into PrepareForShutdown events. busctl has no "subscribed" line
 * on stdout, so it is taken as subscribed once it runs and says on stderr that it monitors.
 */
function streamSignals(child: ChildProcess, onEvent: (b: boolean) => void, signal: AbortSignal, log: Logger): Promise<ShutdownWatch> {
  const ended = new Promise<void>((r) => child.once('close', () => r()));
  const close = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  };
  let buf = '';
  child.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      const active = parseShutdownSignal(line);
      if (active === undefined) {
        if (line) log.warn({ line: line.slice(0, 200) }, 'Unexpected message from busctl monitor');
        continue;
      }
      onEvent(active);
    }
  });
  let stderr = '';
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      close();
      reject(abortError(signal.reason));
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    const ready = (): void => {
      signal.removeEventListener('abort', onAbort);
      resolve({ ended, close });
    };
    child.once('error', (err) => {
      signal.removeEventListener('abort', onAbort);
      reject(new AgentError('ERR_UNAVAILABLE', `cannot run busctl: ${err.message}`, { cause: err }));
    });
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (/monitoring/i.test(stderr)) ready();
    });
    void ended.then(() => {
      signal.removeEventListener('abort', onAbort);
      reject(new AgentError('ERR_UNAVAILABLE', `busctl monitor exited (${child.exitCode ?? child.signalCode}): ${stderr.trim() || 'no output'}`));
    });
  });
}

/** The PrepareForShutdown argument of one `busctl --json=short monitor` line; undefined for anything else. */
export function parseShutdownSignal(line: string): boolean | undefined {
  if (!line.startsWith('{')) return undefined;
  let m: { type?: string; member?: string; payload?: { type?: string; data?: unknown[] } };
  try {
    m = JSON.parse(line) as typeof m;
  } catch {
    return undefined; // not one of busctl's JSON lines: the caller logs it
  }
  if (m.type !== 'signal' || m.member !== 'PrepareForShutdown' || m.payload?.type !== 'b') return undefined;
  const v = m.payload.data?.[0];
  return typeof v === 'boolean' ? v : undefined;
}
