import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@nodelet/base/testing';
import { noopLogger } from '@nodelet/base';
import type { Container, Pod } from '@nodelet/api';
import type { ObservedPod } from '../kubecontainer/observed.js';
import { ProbeManager } from './prober.js';

const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

function setup(container: Container) {
  const clock = new FakeClock();
  const execs: string[][] = [];
  let exitCode = 1;
  const events: string[] = [];
  const woken: string[] = [];
  const prober = new ProbeManager({
    exec: {
      execSync: async (_id, cmd) => {
        execs.push(cmd);
        return { exitCode, output: exitCode === 0 ? '' : 'not yet' };
      },
    },
    events: { event: (_p, type, reason, message) => events.push(`${type} ${reason} ${message}`) },
    clock,
    log: noopLogger,
    onResultChanged: (uid) => woken.push(uid),
  });
  const pod: Pod = { metadata: { uid: 'u1', name: 'p', namespace: 'default' }, spec: { containers: [container] } };
  const observed = (id: string, state: 'running' | 'exited' = 'running'): ObservedPod => ({
    uid: 'u1', name: 'p', namespace: 'default',
    sandboxes: [{ id: 'sb', attempt: 0, ready: true, createdAt: 0, ips: ['10.0.0.2'], name: 'p', namespace: 'default', uid: 'u1' }],
    containers: [{ id, sandboxId: 'sb', name: container.name, type: 'regular', state, hash: '', restartCount: 0, createdAt: 0, startedAt: clock.now(), image: 'i', imageRef: 'i' }],
  });
  const step = async (ms: number): Promise<void> => {
    clock.advance(ms);
    await settle();
  };
  return { clock, prober, pod, observed, execs, events, woken, step, setExit: (c: number) => (exitCode = c) };
}

test('readiness: not ready until the probe passes; default period 10 s; failures record Unhealthy', async () => {
  const s = setup({ name: 'c', image: 'i', readinessProbe: { exec: { command: ['test', '-f', '/tmp/ready'] } } });
  s.prober.sync(s.pod, s.observed('c1'));
  assert.equal(s.prober.view.ready('c1', true, false), false);
  await s.step(0);
  assert.equal(s.execs.length, 1, 'first probe at once (initialDelaySeconds 0)');
  assert.deepEqual(s.events, ['Warning Unhealthy Readiness probe failed: not yet']);
  await s.step(9_999);
  assert.equal(s.execs.length, 1);
  s.setExit(0);
  await s.step(1);
  assert.equal(s.execs.length, 2, 'next probe after periodSeconds 10');
  assert.equal(s.prober.view.ready('c1', true, false), true, 'successThreshold 1');
  assert.deepEqual(s.woken, ['u1'], 'a changed result wakes the pod worker');
  s.setExit(1);
  await s.step(10_000);
  await s.step(10_000);
  assert.equal(s.prober.view.ready('c1', true, false), true, 'two failures stay below failureThreshold 3');
  await s.step(10_000);
  assert.equal(s.prober.view.ready('c1', true, false), false, 'third failure flips readiness');
  assert.equal(s.prober.view.failed('c1'), undefined, 'readiness never kills');
  s.prober.dispose();
  assert.equal(s.clock.pendingTimers, 0);
});

test('liveness: initialDelaySeconds and failureThreshold, then on hold until the container is replaced', async () => {
  const s = setup({ name: 'c', image: 'i', livenessProbe: { exec: { command: ['false'] }, initialDelaySeconds: 5, periodSeconds: 1, failureThreshold: 2 } });
  s.prober.sync(s.pod, s.observed('c1'));
  await s.step(0);
  await s.step(1000);
  await s.step(1000);
  await s.step(1000);
  await s.step(1000);
  assert.equal(s.execs.length, 0, 'no probe during initialDelaySeconds');
  await s.step(1000);
  assert.equal(s.execs.length, 1);
  assert.equal(s.prober.view.failed('c1'), undefined, 'initial liveness is success; one failure is below threshold');
  await s.step(1000);
  assert.equal(s.prober.view.failed('c1'), 'liveness');
  await s.step(5000);
  assert.equal(s.execs.length, 2, 'on hold after a settled liveness failure');
  assert.equal(s.events.filter((e) => e === 'Warning Unhealthy Liveness probe failed: not yet').length, 2);
  // The restarted container gets a fresh worker and result; the old container's result is gone.
  s.prober.sync(s.pod, s.observed('c2'));
  assert.equal(s.prober.view.failed('c2'), undefined);
  assert.equal(s.prober.view.failed('c1'), undefined);
  assert.equal(s.prober.workerCount, 1);
  s.prober.sync(s.pod, s.observed('c2', 'exited'));
  assert.equal(s.prober.workerCount, 0, 'worker stops when the container is no longer running');
  assert.equal(s.clock.pendingTimers, 0);
});

test('startup gates liveness and readiness; started once it passed, then it stops probing', async () => {
  const s = setup({
    name: 'c', image: 'i',
    startupProbe: { exec: { command: ['startup'] }, periodSeconds: 1, failureThreshold: 30 },
    livenessProbe: { exec: { command: ['live'] }, periodSeconds: 1 },
  });
  s.prober.sync(s.pod, s.observed('c1'));
  await s.step(0);
  await s.step(1000);
  assert.deepEqual(s.execs.map((c) => c[0]), ['startup', 'startup'], 'liveness waits for startup');
  assert.equal(s.prober.view.started('c1', true), false);
  assert.equal(s.prober.view.ready('c1', false, true), false);
  s.setExit(0);
  await s.step(1000);
  assert.equal(s.prober.view.started('c1', true), true);
  s.execs.length = 0;
  await s.step(1000);
  await s.step(1000);
  assert.deepEqual(s.execs.map((c) => c[0]), ['live', 'live'], 'startup probe does not run again');
  s.prober.removePod('u1');
  assert.equal(s.clock.pendingTimers, 0);
});

test('startup failure past failureThreshold asks for a kill', async () => {
  const s = setup({ name: 'c', image: 'i', startupProbe: { exec: { command: ['x'] }, periodSeconds: 1, failureThreshold: 2 } });
  s.prober.sync(s.pod, s.observed('c1'));
  await s.step(0);
  await s.step(1000);
  assert.equal(s.prober.view.failed('c1'), 'startup');
  s.prober.dispose();
});
