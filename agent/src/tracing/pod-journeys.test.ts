import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, PodStatus } from '@nodelet/api';
import { formatTraceparent, JourneyTracer, TRACEPARENT_ANNOTATION } from '@nodelet/api/tracing';
import { AgentPodJourneys } from './pod-journeys.js';

const TP = { traceId: 'c'.repeat(32), spanId: 'd'.repeat(16), flags: 1 };
// Epoch ms: OpenTelemetry reads a number below the process's time origin as performance.now().
let clock = 1_800_000_000_000;
const tick = (ms: number): number => (clock += ms);

function pod(uid: string, annotated = true, phase: 'Pending' | 'Running' = 'Pending'): Pod {
  return {
    metadata: { name: `p-${uid}`, namespace: 'default', uid, ...(annotated ? { annotations: { [TRACEPARENT_ANNOTATION]: formatTraceparent(TP) } } : {}) },
    spec: { containers: [{ name: 'c', image: 'busybox' }] },
    status: { phase },
  };
}
const running: PodStatus = { containerStatuses: [{ name: 'c', ready: false, restartCount: 0, image: 'busybox', imageID: '', state: { running: {} } }] as PodStatus['containerStatuses'] };
const ready: PodStatus = { ...running, conditions: [{ type: 'Ready', status: 'True' }] };

test('a pod start is recorded as a chain of steps under its traceparent, then the journey closes', async (t) => {
  const tracer = new JourneyTracer({ service: 'nodelet-agent', now: () => clock });
  t.after(() => tracer.close());
  const j = new AgentPodJourneys(tracer, 'node-1');
  const p = pod('u1');
  j.seen(p);
  tick(2);
  j.admitted(p, true);
  tick(3);
  await j.sync('u1', async () => {
    const t0 = j.now();
    tick(10);
    j.step('u1', 'agent.volumes', t0);
    const t1 = j.now();
    tick(5);
    j.cniAdd('u1', j.now(), tick(40));
    tick(5);
    j.sandbox('u1', t1);
    const t2 = j.now();
    tick(7);
    j.step('u1', 'agent.container.start', t2, { 'k8s.container.name': 'c' });
  });
  tick(100);
  j.statusComputed(p, running);
  tick(20);
  j.statusComputed(p, ready);
  tick(4);
  j.statusWritten('u1', ready);
  assert.equal(j.openCount, 0);
  // Later syncs of the same pod are not traced.
  await j.sync('u1', async () => j.step('u1', 'agent.container.start', j.now()));

  const spans = tracer.spans(TP.traceId);
  const by = (name: string) => spans.find((s) => s.name === name)!;
  const top = spans.filter((s) => s.parentSpanId === TP.spanId).sort((a, b) => a.startMs - b.startMs);
  assert.deepEqual(top.map((s) => s.name), ['agent.admit', 'agent.sync', 'agent.observe', 'agent.probes', 'agent.status']);
  assert.deepEqual(top.map((s) => s.endMs - s.startMs), [2, 67, 100, 20, 4]);
  for (let i = 1; i < top.length; i++) assert.ok(top[i]!.startMs >= top[i - 1]!.endMs, `${top[i]!.name} starts after ${top[i - 1]!.name}`);
  assert.equal(by('agent.sandbox').parentSpanId, by('agent.sync').spanId);
  assert.equal(by('cni.add').parentSpanId, by('agent.sandbox').spanId);
  assert.equal(by('cni.add').endMs - by('cni.add').startMs, 40);
  assert.equal(by('agent.container.start').attributes['k8s.container.name'], 'c');
  assert.equal(by('agent.admit').attributes['k8s.node.name'], 'node-1');
  assert.equal(spans.filter((s) => s.name === 'agent.container.start').length, 1);
});

test('pods without a trace context, already running or refused by admission get no journey steps', async (t) => {
  const tracer = new JourneyTracer({ service: 'nodelet-agent', now: () => clock });
  t.after(() => tracer.close());
  const j = new AgentPodJourneys(tracer, 'node-1', { maxPods: 2 });
  j.seen(pod('plain', false));
  j.seen(pod('old', true, 'Running'));
  assert.equal(j.openCount, 0);
  const refused = pod('refused');
  j.seen(refused);
  j.admitted(refused, false, 'OutOfcpu');
  assert.equal(j.openCount, 0);
  assert.match(tracer.spans(TP.traceId).find((s) => s.name === 'agent.admit')!.error!, /OutOfcpu/);
  for (const uid of ['a', 'b', 'c']) j.seen(pod(uid));
  assert.equal(j.openCount, 2, 'bounded');
});
