import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasCode, noopLogger } from '@nodelet/base';
import { logindInhibitor, parseShutdownSignal } from './logind.js';

test('PrepareForShutdown is read from busctl --json=short monitor lines; anything else is not an event', () => {
  const sig = (data: unknown[], member = 'PrepareForShutdown', type = 'b') =>
    JSON.stringify({ type: 'signal', endian: 'l', flags: 1, version: 1, cookie: 7, sender: ':1.3', path: '/org/freedesktop/login1', interface: 'org.freedesktop.login1.Manager', member, payload: { type, data } });
  assert.equal(parseShutdownSignal(sig([true])), true);
  assert.equal(parseShutdownSignal(sig([false])), false);
  assert.equal(parseShutdownSignal(sig([true], 'PrepareForSleep')), undefined);
  assert.equal(parseShutdownSignal(sig(['x'], 'PrepareForShutdown', 's')), undefined);
  assert.equal(parseShutdownSignal('Monitoring bus message stream.'), undefined);
  assert.equal(parseShutdownSignal('{not json'), undefined);
});

test('without a system bus every call fails with ERR_UNAVAILABLE and nothing is spawned', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'logind-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const inh = logindInhibitor({ log: noopLogger, busSocket: join(dir, 'no-bus'), busctl: join(dir, 'never-run'), systemdInhibit: join(dir, 'never-run') });
  const signal = new AbortController().signal;
  await assert.rejects(inh.inhibitDelayMaxMs(signal), (e) => hasCode(e, 'ERR_UNAVAILABLE') && /no system bus at/.test(String(e)));
  await assert.rejects(inh.inhibit(signal), (e) => hasCode(e, 'ERR_UNAVAILABLE'));
  await assert.rejects(inh.watchShutdown(() => {}, signal), (e) => hasCode(e, 'ERR_UNAVAILABLE'));
});
