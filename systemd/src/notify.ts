/**
 * sd_notify(3) from Node: READY=1 when the component is really serving, WATCHDOG=1 pings
 * driven by the event loop, STOPPING=1 on shutdown.
 *
 * Node's dgram has no AF_UNIX datagrams. The kept addons for it either need a native build at
 * install time or ship prebuilt binaries whose sibling platform packages the offline registry
 * lacks (which breaks `npm ci`), so we use the dependency-free route the reference documents:
 * spawn `systemd-notify` and give the units `NotifyAccess=all` (a child is not the main PID).
 * A fork every WATCHDOG_USEC/2 (15 s by default) is cheap. systemd-notify ≥ 252 waits until the
 * manager has processed the message, so a short-lived sender is fine.
 *
 * Watchdog: systemd sets WATCHDOG_USEC (and WATCHDOG_PID) when the unit has WatchdogSec=. Pings
 * come from a timer callback, so a blocked event loop stops them and systemd restarts us; an
 * optional `healthy()` lets a component withhold pings when it knows it is wedged.
 *
 * Without $NOTIFY_SOCKET (not started by systemd, tests, `make up`) every call is a no-op.
 * ready() also arms the test-only hung-event-loop hook (test-hang.ts) when its variables are set.
 */
import { spawn } from 'node:child_process';
import type { Logger } from '@nodelet/base';
import { noopLogger } from '@nodelet/base';
import { armTestHang } from './test-hang.js';

export interface Notifier {
  /** True when running under systemd with a notify socket. */
  readonly enabled: boolean;
  ready(status?: string): Promise<void>;
  status(text: string): Promise<void>;
  stopping(): Promise<void>;
  /** Starts watchdog pings if WATCHDOG_USEC applies to this process; returns a stop function. */
  startWatchdog(healthy?: () => boolean): () => void;
}

export interface NotifierOptions {
  env?: NodeJS.ProcessEnv;
  pid?: number;
  logger?: Logger;
  /** The systemd-notify binary (tests point it at a recorder). */
  notifyBin?: string;
}

export function createNotifier(opts: NotifierOptions = {}): Notifier {
  const env = opts.env ?? process.env;
  const pid = opts.pid ?? process.pid;
  const log = opts.logger ?? noopLogger;
  const bin = opts.notifyBin ?? 'systemd-notify';
  const enabled = Boolean(env.NOTIFY_SOCKET);

  const send = (lines: string[]): Promise<void> =>
    new Promise((resolve) => {
      if (!enabled) return resolve();
      const child = spawn(bin, lines, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...env } });
      let err = '';
      child.stderr.on('data', (d) => (err += d));
      child.on('error', (e) => {
        log.warn({ err: e }, 'Cannot run systemd-notify; readiness and watchdog are not reported');
        resolve();
      });
      child.on('close', (code) => {
        if (code !== 0) log.warn({ code, stderr: err.trim() }, 'systemd-notify failed');
        resolve();
      });
    });

  return {
    enabled,
    async ready(status) {
      await send(status ? ['READY=1', `STATUS=${status}`] : ['READY=1']);
      // Test-only watchdog exercise; inert unless two NODELET_TEST_HANG_* variables are set (test-hang.ts).
      if (enabled) armTestHang(env, log);
    },
    status: (text) => send([`STATUS=${text}`]),
    stopping: () => send(['STOPPING=1']),
    startWatchdog(healthy) {
      const usec = Number(env.WATCHDOG_USEC ?? 0);
      const forPid = env.WATCHDOG_PID ? Number(env.WATCHDOG_PID) : pid;
      if (!enabled || !(usec > 0) || forPid !== pid) return () => {};
      const everyMs = Math.max(50, Math.floor(usec / 1000 / 2));
      const ping = (): void => {
        if (!healthy || healthy()) void send(['WATCHDOG=1']);
      };
      const t = setInterval(ping, everyMs);
      t.unref();
      ping();
      return () => clearInterval(t);
    },
  };
}
