import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AgentError, pollUntil } from '@nodelet/base';
import { FakeClock, RecordingLogger } from '@nodelet/base/testing';
import type { Pod, PodStatus } from '@nodelet/api';
import { NodeShutdownManager, type NodeShutdownManagerOptions } from './shutdown-manager.js';
import { NODE_SHUTDOWN_MESSAGE, nodeShutdownStatus } from './shutdown-pods.js';
import { FakeInhibitor } from './testing/fake-inhibitor.js';
import type { PodStatusFn } from '../kubecontainer/pod-update.js';

const pod = (name: string, spec: Partial<NonNullable<Pod['spec']>> = {}): Pod => ({ metadata: { name, namespace: 'd', uid: `uid-${name}` }, spec: { containers: [], ...spec } });
const until = (what: string, check: () => boolean) => pollUntil(what, check, { timeoutMs: 5000, intervalMs: 1 });

/** A manager on the fake inhibitor and clock; `stopsAfterS` says how long each pod takes to stop (default: its whole grace; Infinity: never). */
function setup(t: { after(fn: () => unknown): void }, o: { pods?: Pod[]; stopsAfterS?: Record<string, number>; grace?: number; critical?: number; inhibitor?: FakeInhibitor } = {}) {
  const clock = new FakeClock();
  const log = new RecordingLogger();
  const inhibitor = o.inhibitor ?? Object.assign(new FakeInhibitor(), { delayMaxMs: 30_000 }); // logind already allows 30 s
  const kills: Array<{ pod: string; graceS: number; atS: number; stoppedAtS?: number }> = [];
  const statusFns: PodStatusFn[] = [];
  const changes: boolean[] = [];
  const events: string[] = [];
  const start = clock.now();
  const sec = () => (clock.now() - start) / 1000;
  const opts: NodeShutdownManagerOptions = {
    inhibitor,
    gracePeriodMs: (o.grace ?? 30) * 1000,
    criticalGracePeriodMs: (o.critical ?? 10) * 1000,
    activePods: () => o.pods ?? [],
    killPod: async (p, graceS, fn) => {
      const k: (typeof kills)[number] = { pod: p.metadata.name!, graceS, atS: sec() };
      kills.push(k);
      statusFns.push(fn);
      const takes = o.stopsAfterS?.[p.metadata.name!] ?? graceS;
      if (takes === Infinity) return new Promise<void>(() => {});
      await clock.sleep(takes * 1000);
      k.stoppedAtS = sec();
    },
    onChange: (b) => changes.push(b),
    nodeEvent: (reason, message) => events.push(`${reason}: ${message}`),
    clock,
    log,
  };
  const m = new NodeShutdownManager(opts);
  const stop = new AbortController();
  const running = m.run(stop.signal);
  t.after(async () => {
    stop.abort();
    await running;
  });
  return { m, clock, log, inhibitor, kills, statusFns, changes, events, sec, stop, running };
}

test('a shutdown stops regular pods first, then critical pods, each with its grace capped, then releases the lock', async (t) => {
  const pods = [
    pod('web'), // no own grace: the regular share, 20 s
    pod('quick', { terminationGracePeriodSeconds: 5 }), // shorter than the share: its own
    pod('dns', { priorityClassName: 'system-cluster-critical', terminationGracePeriodSeconds: 30 }),
    pod('proxy', { priority: 2_000_001_000 }),
  ];
  const s = setup(t, { pods, stopsAfterS: { web: 12, quick: 1, dns: 3, proxy: 2 } });
  await until('armed', () => s.inhibitor.held === 1 && s.inhibitor.calls.includes('watch'));
  assert.equal(s.m.shuttingDown, false);

  s.inhibitor.prepareForShutdown(true);
  await until('regular pods killed', () => s.kills.length === 2);
  assert.equal(s.m.shuttingDown, true);
  assert.deepEqual(s.changes, [true], 'node status is poked at once');
  assert.deepEqual(s.kills.map((k) => `${k.pod}:${k.graceS}@${k.atS}`), ['web:20@0', 'quick:5@0'], 'critical pods wait');
  assert.equal(s.inhibitor.held, 1, 'the lock is held while pods stop');

  await s.clock.advanceAsync(12_000); // both regular pods are down at 12 s: critical ones start then, not at 20 s
  await until('critical pods killed', () => s.kills.length === 4);
  assert.deepEqual(s.kills.slice(2).map((k) => `${k.pod}:${k.graceS}@${k.atS}`), ['dns:10@12', 'proxy:10@12']);
  assert.equal(s.inhibitor.held, 1);

  await s.clock.advanceAsync(3000);
  await until('lock released', () => s.inhibitor.held === 0);
  assert.deepEqual(s.kills.map((k) => k.stoppedAtS), [12, 1, 15, 14]);
  assert.deepEqual(s.inhibitor.calls, ['inhibit', 'watch', 'release']);
  assert.equal(s.m.shuttingDown, true, 'the node stays NotReady until the machine goes down');
  assert.deepEqual(s.events, ['NodeShutdown: Shutdown manager detected shutdown event']);
});

test('a group that outlives its share does not hold the next group or the lock past shutdownGracePeriod', async (t) => {
  const s = setup(t, { pods: [pod('stuck'), pod('crit', { priorityClassName: 'system-node-critical' })], stopsAfterS: { stuck: Infinity, crit: Infinity } });
  await until('armed', () => s.inhibitor.held === 1);
  s.inhibitor.prepareForShutdown(true);
  await until('regular pod killed', () => s.kills.length === 1);
  await s.clock.advanceAsync(19_999);
  assert.equal(s.kills.length, 1);
  await s.clock.advanceAsync(1);
  await until('critical pod killed at 20 s', () => s.kills.length === 2);
  assert.equal(s.kills[1]!.atS, 20);
  await s.clock.advanceAsync(9_999);
  assert.equal(s.inhibitor.held, 1);
  await s.clock.advanceAsync(1);
  await until('lock released at 30 s', () => s.inhibitor.held === 0);
  assert.ok(s.log.entries.some((e) => e.level === 'warn' && e.msg === 'Node shutdown grace period of a pod group ran out'));
});

test('no pods: the lock is released at once; empty groups cost no time', async (t) => {
  const s = setup(t);
  await until('armed', () => s.inhibitor.held === 1);
  s.inhibitor.prepareForShutdown(true);
  await until('released', () => s.inhibitor.held === 0);
  assert.equal(s.sec(), 0);
});

test('a cancelled shutdown makes the node ready again and takes the lock again', async (t) => {
  const s = setup(t, { pods: [pod('web')] , stopsAfterS: { web: 1 } });
  await until('armed', () => s.inhibitor.held === 1);
  s.inhibitor.prepareForShutdown(true);
  await until('killed', () => s.kills.length === 1);
  await s.clock.advanceAsync(1000);
  await until('released', () => s.inhibitor.held === 0);
  s.inhibitor.prepareForShutdown(false);
  await until('lock again', () => s.inhibitor.held === 1);
  assert.equal(s.m.shuttingDown, false);
  assert.deepEqual(s.changes, [true, false]);
  assert.deepEqual(s.inhibitor.calls, ['inhibit', 'watch', 'release', 'inhibit']);
  assert.equal(s.events[1], 'NodeShutdown: Shutdown manager detected shutdown cancellation');
  // A second shutdown is handled like the first.
  s.inhibitor.prepareForShutdown(true);
  await until('killed again', () => s.kills.length === 2);
  assert.equal(s.m.shuttingDown, true);
});

test('the status edit: Failed, reason Terminated, the DisruptionTarget condition; Succeeded stays', () => {
  const now = Date.UTC(2026, 0, 2);
  const fn = nodeShutdownStatus(() => now);
  const st: PodStatus = { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] };
  fn(st);
  assert.equal(st.phase, 'Failed');
  assert.equal(st.reason, 'Terminated');
  assert.equal(st.message, NODE_SHUTDOWN_MESSAGE);
  assert.equal(st.message, 'Pod was terminated in response to imminent node shutdown.');
  assert.deepEqual(st.conditions!.find((c) => c.type === 'DisruptionTarget'), {
    type: 'DisruptionTarget', status: 'True', reason: 'TerminationByKubelet', message: NODE_SHUTDOWN_MESSAGE, lastProbeTime: null, lastTransitionTime: '2026-01-02T00:00:00Z',
  });
  fn(st); // applied again on every later status: one condition, same transition time
  assert.equal(st.conditions!.filter((c) => c.type === 'DisruptionTarget').length, 1);
  const done: PodStatus = { phase: 'Succeeded' };
  fn(done);
  assert.equal(done.phase, 'Succeeded');
});

test('logind allows less delay than shutdownGracePeriod: the drop-in is written and logind reloaded', async (t) => {
  const inhibitor = new FakeInhibitor();
  inhibitor.delayMaxMs = 5000;
  setup(t, { inhibitor });
  await until('armed', () => inhibitor.held === 1);
  assert.deepEqual(inhibitor.calls.slice(0, 2), ['raise:30000', 'inhibit']);
});

test('the drop-in cannot be written: a warning, and the lock is taken anyway', async (t) => {
  const inhibitor = new FakeInhibitor();
  inhibitor.raiseError = new AgentError('ERR_PERMISSION_DENIED', 'read-only file system');
  const s = setup(t, { inhibitor });
  await until('armed', () => inhibitor.held === 1);
  const warns = s.log.entries.filter((e) => e.level === 'warn').map((e) => e.msg);
  assert.deepEqual(warns, ['Cannot raise logind InhibitDelayMaxSec', 'logind InhibitDelayMaxSec is shorter than shutdownGracePeriod; a shutdown will not wait for all pods']);
});

test('without a system bus the manager logs once and returns; the agent runs on', async (t) => {
  const inhibitor = new FakeInhibitor();
  inhibitor.unavailable = true;
  const s = setup(t, { inhibitor });
  await s.running;
  assert.deepEqual(s.log.entries.map((e) => `${e.level} ${e.msg}`), ['info Graceful node shutdown unavailable: no systemd-logind on the system bus']);
  assert.equal(s.m.shuttingDown, false);
});

test('shutdownGracePeriod 0: disabled, logind is never asked', async (t) => {
  const inhibitor = new FakeInhibitor();
  const s = setup(t, { inhibitor, grace: 0, critical: 0 });
  await s.running;
  assert.deepEqual(inhibitor.calls, []);
});

test('the watch ends (bus restarted): the lock is released and everything is set up again', async (t) => {
  const s = setup(t);
  await until('armed', () => s.inhibitor.held === 1);
  s.inhibitor.endWatch();
  await until('released', () => s.inhibitor.held === 0);
  await s.clock.advanceAsync(1000);
  await until('armed again', () => s.inhibitor.held === 1);
  assert.deepEqual(s.inhibitor.calls, ['inhibit', 'watch', 'release', 'inhibit', 'watch']);
});

test('closing the agent releases the lock', async (t) => {
  const s = setup(t);
  await until('armed', () => s.inhibitor.held === 1);
  s.stop.abort();
  await s.running;
  assert.equal(s.inhibitor.held, 0);
});
