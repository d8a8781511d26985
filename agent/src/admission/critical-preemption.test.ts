import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, PodStatus } from '@nodelet/api';
import { noopLogger } from '@nodelet/base';
import type { PodStatusFn } from '../kubecontainer/pod-update.js';
import { criticalPodAdmissionHandler, podsToPreempt } from './critical-preemption.js';
import { resourceFitAdmitHandler } from './resource-fit.js';

type Res = Record<string, string>;
const pod = (name: string, o: { requests?: Res; limits?: Res; priority?: number; critical?: boolean } = {}): Pod => ({
  metadata: { name, namespace: 'd', uid: name },
  spec: {
    containers: [{ name: 'c', image: 'i', resources: { ...(o.requests ? { requests: o.requests } : {}), ...(o.limits ? { limits: o.limits } : {}) } }],
    ...(o.priority !== undefined ? { priority: o.priority } : {}),
    ...(o.critical ? { priorityClassName: 'system-node-critical', priority: 2000001000 } : {}),
  },
});
const guaranteed = (name: string, cpu: string, memory: string): Pod => pod(name, { requests: { cpu, memory }, limits: { cpu, memory } });
const burstable = (name: string, cpu: string, memory: string): Pod => pod(name, { requests: { cpu, memory } });
const names = (ps: Pod[]): string[] => ps.map((p) => p.metadata.name!);

test('podsToPreempt: fewest pods, lower QoS classes spent first, smaller request on a tie', () => {
  const crit = pod('crit', { critical: true });
  const be = pod('best-effort');
  const bu = burstable('burstable', '100m', '100Mi');
  const buBig = burstable('burstable-big', '300m', '300Mi');
  const gu = guaranteed('guaranteed', '100m', '100Mi');
  const guBig = guaranteed('guaranteed-big', '300m', '300Mi');
  const all = [be, bu, buBig, gu, guBig];
  const mi = 2 ** 20;
  // One burstable pod covers it: no guaranteed pod goes, and the one closest to the need is chosen.
  assert.deepEqual(names(podsToPreempt(crit, all, [{ resource: 'memory', quantity: 50 * mi }])), ['burstable']);
  assert.deepEqual(names(podsToPreempt(crit, all, [{ resource: 'memory', quantity: 250 * mi }])), ['burstable-big']);
  // More than all burstable pods give: the smallest guaranteed pod that covers the rest, then burstable pods.
  assert.deepEqual(names(podsToPreempt(crit, all, [{ resource: 'memory', quantity: 500 * mi }])), ['burstable-big', 'burstable', 'guaranteed']);
  // A pod slot is freed by any pod: the BestEffort one, which requests least.
  assert.deepEqual(names(podsToPreempt(crit, all, [{ resource: 'pods', quantity: 1 }])), ['best-effort']);
  // Two resources at once: one pod covering both beats two covering one each.
  assert.deepEqual(names(podsToPreempt(crit, all, [{ resource: 'cpu', quantity: 200 }, { resource: 'memory', quantity: 200 * mi }])), ['burstable-big']);
  // Critical pods are never candidates; kubelet's message when nothing can free enough.
  assert.throws(() => podsToPreempt(crit, [pod('other-crit', { critical: true })], [{ resource: 'pods', quantity: 1 }]), { message: 'no set of running pods found to reclaim resources: [(res: pods, q: 1), ]' });
  // A non-critical preemptor only outranks pods of strictly lower priority.
  assert.deepEqual(names(podsToPreempt(pod('p', { priority: 10 }), [pod('low', { priority: 5 }), pod('same', { priority: 10 })], [{ resource: 'pods', quantity: 1 }])), ['low']);
});

test('critical pod admission: a full node evicts the chosen pods with kubelet reason, message, event and condition, then admits', () => {
  const running = [burstable('small', '100m', '64Mi'), burstable('big', '600m', '64Mi'), pod('crit-running', { critical: true, requests: { cpu: '100m' } })];
  const killed: { name: string; grace: number; status: PodStatus }[] = [];
  const events: string[] = [];
  const handler = criticalPodAdmissionHandler({
    activePods: () => running,
    killPod: (p: Pod, grace: number, fn: PodStatusFn) => {
      const status: PodStatus = { phase: 'Running' };
      fn(status);
      killed.push({ name: p.metadata.name!, grace, status });
      return Promise.resolve();
    },
    podEvent: (p, type, reason, message) => events.push(`${p.metadata.name} ${type} ${reason} ${message}`),
    now: () => Date.parse('2026-01-01T00:00:00Z'),
    log: noopLogger,
  });
  const admit = resourceFitAdmitHandler(() => ({ cpu: '1', memory: '1Gi', pods: '10' }), handler);
  // 800m used of 1: a normal pod asking 500m is refused as before, nothing evicted.
  assert.deepEqual(admit(burstable('normal', '500m', '1Mi'), running), { admit: false, reason: 'OutOfcpu', message: "Node didn't have enough resource: cpu, requested: 500, used: 800, capacity: 1000" });
  assert.equal(killed.length, 0);
  // The critical pod is 300m short: the 600m pod alone covers it.
  assert.deepEqual(admit(pod('crit', { critical: true, requests: { cpu: '500m' } }), running), { admit: true });
  assert.deepEqual(killed.map((k) => [k.name, k.grace]), [['big', 30]]);
  assert.deepEqual(events, ['big Warning Preempting Preempted in order to admit critical pod']);
  const st = killed[0]!.status;
  assert.equal(st.phase, 'Failed');
  assert.equal(st.reason, 'Preempting');
  assert.equal(st.message, 'Preempted in order to admit critical pod');
  assert.deepEqual(st.conditions, [{ type: 'DisruptionTarget', status: 'True', reason: 'TerminationByKubelet', message: 'Pod was preempted by Kubelet to accommodate a critical pod.', lastProbeTime: null, lastTransitionTime: '2026-01-01T00:00:00Z' }]);
  // More than every preemptable pod frees: kubelet's UnexpectedAdmissionError, nothing evicted.
  killed.length = 0;
  assert.deepEqual(admit(pod('crit2', { critical: true, requests: { cpu: '1' } }), running), {
    admit: false,
    reason: 'UnexpectedAdmissionError',
    message: 'Unexpected error while attempting to recover from admission failure: preemption: error finding a set of pods to preempt: no set of running pods found to reclaim resources: [(res: cpu, q: 100), ]',
  });
  assert.equal(killed.length, 0);
});
