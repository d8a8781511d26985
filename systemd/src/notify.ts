/**
 * sd_notify(3) from Node: READY=1 when the component is really serving, WATCHDOG=1 pings
 * driven by the event loop, STOPPING=1 on shutdown.
 *
 * Node's dgram has no AF_UNIX datagrams, so the message goes through `node-unix-socket`
 * (prebuilt napi binary, works with the default NotifyAccess=main). Without $NOTIFY_SOCKET
 * (not started by systemd, tests, `make up`) every call is a no-op.
 *
 * Watchdog: systemd sets WATCHDOG_USEC (and WATCHDOG_PID) when the unit has WatchdogSec=. We
 * ping at half that interval from a timer callback, so a blocked event loop stops the pings
 * and systemd restarts us; an optional `healthy()` check lets a component withhold pings when
 * it knows it is wedged even though its loop still turns.
 */
import { createRequire } from 'node:module';
import type { Logger } from '@nodelet/base';
import { noopLogger } from '@nodelet/base';

interface DgramLike {
  sendTo(buf: Buffer, offset: number, length: number, path: string): void;
  close(): void;
}

export interface Notifier {
  /** True when running under systemd with a notify socket. */
  readonly enabled: boolean;
  ready(status?: string): void;
  status(text: string): void;
  stopping(): void;
  /** Starts watchdog pings if WATCHDOG_USEC applies to this process; returns a stop function. */
  startWatchdog(healthy?: () => boolean): () => void;
  close(): void;
}

export interface NotifierOptions {
  env?: NodeJS.ProcessEnv;
  pid?: number;
  logger?: Logger;
}

export function createNotifier(opts: NotifierOptions = {}): Notifier {
  const env = opts.env ?? process.env;
  const pid = opts.pid ?? process.pid;
  const log = opts.logger ?? noopLogger;
  const target = env.NOTIFY_SOCKET;
  let sock: DgramLike | undefined;
  if (target) {
    try {
      const require = createRequire(import.meta.url);
      const { DgramSocket } = require('node-unix-socket') as { DgramSocket: new () => DgramLike };
      sock = new DgramSocket();
    } catch (err) {
      log.warn({ err }, 'Cannot open the systemd notify socket; readiness will not be reported');
    }
  }
  // Abstract sockets are written "@name" in NOTIFY_SOCKET and "\0name" on the wire.
  const path = target?.startsWith('@') ? `\0${target.slice(1)}` : target;

  const send = (msg: string): void => {
    if (!sock || !path) return;
    try {
      const buf = Buffer.from(msg);
      sock.sendTo(buf, 0, buf.length, path);
    } catch (err) {
      log.warn({ err }, 'Sending to the systemd notify socket failed');
    }
  };

  return {
    enabled: sock !== undefined,
    ready(status) {
      send(status ? `READY=1\nSTATUS=${status}` : 'READY=1');
    },
    status(text) {
      send(`STATUS=${text}`);
    },
    stopping() {
      send('STOPPING=1');
    },
    startWatchdog(healthy) {
      const usec = Number(env.WATCHDOG_USEC ?? 0);
      const forPid = env.WATCHDOG_PID ? Number(env.WATCHDOG_PID) : pid;
      if (!sock || !(usec > 0) || forPid !== pid) return () => {};
      const everyMs = Math.max(50, Math.floor(usec / 1000 / 2));
      const t = setInterval(() => {
        if (!healthy || healthy()) send('WATCHDOG=1');
      }, everyMs);
      t.unref();
      send('WATCHDOG=1');
      return () => clearInterval(t);
    },
    close() {
      sock?.close();
      sock = undefined;
    },
  };
}
