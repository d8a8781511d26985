/**
 * TEST ONLY — simulates a hung event loop so the nspawn test (test/systemd/systemd.itest.ts) can
 * prove that WatchdogSec= restarts a wedged nodelet. Never set these variables in production.
 *
 * Armed only when BOTH are present, so it cannot fire by accident:
 *   NODELET_TEST_HANG_AFTER_READY_MS=<ms>   how long after READY=1 to start blocking
 *   NODELET_TEST_HANG_ONCE_FILE=<path>      an existing file; it is deleted before the hang, so
 *                                           the process systemd restarts comes up healthy
 * The hang is a busy loop on the main thread: timers (and with them the watchdog pings) stop,
 * exactly like a real infinite loop or a synchronous call that never returns.
 */
import { existsSync, unlinkSync } from 'node:fs';
import type { Logger } from '@nodelet/base';

export const TEST_HANG_MS_ENV = 'NODELET_TEST_HANG_AFTER_READY_MS';
export const TEST_HANG_FILE_ENV = 'NODELET_TEST_HANG_ONCE_FILE';

/** Schedules the hang when armed; returns a function that cancels it (for unit tests), else undefined. */
export function armTestHang(env: NodeJS.ProcessEnv, log: Logger): (() => void) | undefined {
  const ms = env[TEST_HANG_MS_ENV];
  const file = env[TEST_HANG_FILE_ENV];
  if (ms === undefined || !file) return undefined;
  if (!/^\d+$/.test(ms) || Number(ms) > 2 ** 31 - 1 || !existsSync(file)) return undefined;
  unlinkSync(file);
  log.warn({ afterMs: Number(ms), env: TEST_HANG_MS_ENV }, 'TEST HOOK: the event loop will be blocked on purpose');
  const t = setTimeout(() => {
    // Deliberately never returns: only the watchdog (SIGABRT) ends this process.
    for (;;) {
      /* busy */
    }
  }, Number(ms));
  t.unref();
  return () => clearTimeout(t);
}
