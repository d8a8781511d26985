/**
 * The D-Bus half of graceful node shutdown against a real systemd-logind (systemd 252 as PID 1 in
 * nspawn): the agent's logind module (systemd/src/logind.ts, driven by logind-driver.mjs) raises
 * InhibitDelayMaxSec with its drop-in, takes the delay lock (seen by `systemd-inhibit --list`),
 * sees PrepareForShutdown(true) on `systemctl poweroff`, and logind waits for its release before
 * powering the container off: checked from outside, through a host directory and nspawn's exit.
 * The pod half runs on real containerd in agent/test/integration/node-shutdown.itest.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bootSystemd, nspawnUnavailable, REPO_ROOT } from './nspawn.js';
import { cleanups } from '@nodelet/base/testing';

const HOLD_MS = 3000;

function lines(file: string): Map<string, { arg: string; at: number }> {
  const m = new Map<string, { arg: string; at: number }>();
  if (!existsSync(file)) return m;
  for (const l of readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
    const parts = l.split(' ');
    m.set(parts[0]!, { arg: parts.slice(1, -1).join(' '), at: Number(parts.at(-1)) });
  }
  return m;
}

test('logind: the delay lock holds `systemctl poweroff` back until the agent module releases it', async (t) => {
  const cleanup = cleanups(t);
  const why = nspawnUnavailable() ?? (existsSync(join(REPO_ROOT, 'systemd/dist/index.js')) ? undefined : 'systemd/dist missing (run npx tsc -b)');
  if (why) return t.skip(why);
  const out = mkdtempSync(join(tmpdir(), 'nodelet-logind-'));
  cleanup(() => rmSync(out, { recursive: true, force: true }));
  const box = await bootSystemd({ name: 'logind', rwBinds: [[out, '/out']] });
  cleanup(() => box.close());
  const events = join(out, 'events');

  await box.exec(['systemd-run', '--unit=logind-driver', '--collect', 'node', '/opt/nodelet/test/systemd/logind-driver.mjs', '/out/events', String(HOLD_MS), '8000']);
  await box.waitFor('the driver armed', async () => lines(events).has('armed'), 20_000);
  const l = lines(events);
  assert.equal(l.get('delay-before')?.arg, '5000', "logind's default InhibitDelayMaxSec");
  assert.equal(l.get('delay-after')?.arg, '8000', 'raised by the drop-in and a reload');
  const dropIn = await box.exec(['cat', '/etc/systemd/logind.conf.d/99-nodelet.conf']);
  assert.match(dropIn.stdout, /^\[Login\]\nInhibitDelayMaxSec=8$/m);
  const list = await box.exec(['systemd-inhibit', '--list', '--no-legend', '--no-pager']);
  assert.match(list.stdout, /^nodelet\s+0\s+root\s+\d+\s+systemd-inhibit\s+shutdown\s+nodelet is shutting down pods\s+delay$/m);
  const prop = await box.exec(['busctl', 'get-property', 'org.freedesktop.login1', '/org/freedesktop/login1', 'org.freedesktop.login1.Manager', 'InhibitDelayMaxUSec']);
  assert.equal(prop.stdout.trim(), 't 8000000');

  await box.exec(['systemctl', 'poweroff', '--no-block']);
  const exitedAt = await box.exited;
  const after = lines(events);
  const fired = after.get('prepare-for-shutdown');
  const released = after.get('released');
  assert.equal(fired?.arg, 'true', 'PrepareForShutdown(true) reached the watch');
  assert.ok(released, 'the lock was released by the driver');
  assert.ok(released.at - fired.at >= HOLD_MS, `held ${released.at - fired.at} ms`);
  assert.ok(exitedAt >= released.at, `logind waited for the release: the container exited ${exitedAt - released.at} ms after it`);
});
