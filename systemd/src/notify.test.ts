import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, chmodSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { createNotifier } from './notify.js';
import { pollUntil } from '@nodelet/base';

function recorder(t: { after(fn: () => void): void }): { bin: string; lines: () => string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-notify-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const out = join(dir, 'out');
  const bin = join(dir, 'systemd-notify');
  writeFileSync(bin, `#!/bin/sh\nfor a in "$@"; do echo "$a" >> ${out}; done\n`);
  chmodSync(bin, 0o755);
  return { bin, lines: () => (existsSync(out) ? readFileSync(out, 'utf8').trim().split('\n') : []) };
}

test('without NOTIFY_SOCKET every call is a no-op', async (t) => {
  const r = recorder(t);
  const n = createNotifier({ env: {}, notifyBin: r.bin });
  assert.equal(n.enabled, false);
  await n.ready();
  n.startWatchdog()();
  assert.deepEqual(r.lines(), []);
});

test('ready sends READY=1 with a status; the watchdog pings only for our PID', async (t) => {
  const r = recorder(t);
  const n = createNotifier({ env: { NOTIFY_SOCKET: '/run/x', WATCHDOG_USEC: '100000', WATCHDOG_PID: '42' }, pid: 42, notifyBin: r.bin });
  await n.ready('serving');
  assert.deepEqual(r.lines(), ['READY=1', 'STATUS=serving']);
  const stop = n.startWatchdog();
  // Pings every 50 ms (half of WATCHDOG_USEC): wait until two have arrived.
  await pollUntil('two watchdog pings', () => r.lines().filter((l) => l === 'WATCHDOG=1').length >= 2, { timeoutMs: 5_000, intervalMs: 20 });
  stop();
  const other = createNotifier({ env: { NOTIFY_SOCKET: '/run/x', WATCHDOG_USEC: '100000', WATCHDOG_PID: '7' }, pid: 42, notifyBin: r.bin });
  const before = r.lines().length;
  other.startWatchdog()();
  assert.equal(r.lines().length, before);
});

test('an unhealthy component withholds pings', async (t) => {
  const r = recorder(t);
  const n = createNotifier({ env: { NOTIFY_SOCKET: '/run/x', WATCHDOG_USEC: '100000' }, notifyBin: r.bin });
  const stop = n.startWatchdog(() => false);
  await new Promise((res) => setTimeout(res, 200));
  stop();
  assert.deepEqual(r.lines(), []);
});
