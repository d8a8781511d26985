import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '@nodelet/api';
import type { PressureCondition } from '../eviction/signals.js';
import { admitPod, rejectedStatus } from './admit.js';
import { osAdmitHandler } from './os.js';
import { userNamespacesAdmitHandler } from './user-namespaces.js';
import { pressureAdmitHandler } from './pressure.js';
import { resourceFitAdmitHandler } from './resource-fit.js';
import { shutdownAdmitHandler } from './shutdown.js';

const pod = (name: string, requests?: Record<string, string>, extra: Partial<NonNullable<Pod['spec']>> = {}): Pod => ({
  metadata: { name, namespace: 'd', uid: name },
  spec: { containers: [{ name: 'c', image: 'i', ...(requests ? { resources: { requests } } : {}) }], ...extra },
});
const under = (...c: PressureCondition[]) => pressureAdmitHandler(() => new Set(c));

test('admission under pressure: kubelet eviction manager Admit', () => {
  const bestEffort = pod('be');
  const burstable = pod('bu', { memory: '10Mi' });
  const critical = pod('crit', undefined, { priorityClassName: 'system-node-critical', priority: 2000001000 });
  const tolerant = pod('tol', undefined, { tolerations: [{ key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' }] });
  assert.deepEqual(under()(bestEffort, []), { admit: true });
  // MemoryPressure alone: only BestEffort pods that do not tolerate its taint are refused.
  assert.deepEqual(under('MemoryPressure')(bestEffort, []), { admit: false, reason: 'Evicted', message: 'The node had condition: [MemoryPressure]. ' });
  assert.deepEqual(under('MemoryPressure')(burstable, []), { admit: true });
  assert.deepEqual(under('MemoryPressure')(tolerant, []), { admit: true });
  // Any other pressure refuses every pod that is not critical, whatever it tolerates.
  assert.deepEqual(under('DiskPressure')(burstable, []), { admit: false, reason: 'Evicted', message: 'The node had condition: [DiskPressure]. ' });
  assert.deepEqual(under('DiskPressure', 'MemoryPressure')(tolerant, []), { admit: false, reason: 'Evicted', message: 'The node had condition: [MemoryPressure DiskPressure]. ' });
  assert.deepEqual(under('DiskPressure', 'PIDPressure')(critical, []), { admit: true });
});

test('admission during node shutdown refuses every pod with NodeShutdown', () => {
  let down = false;
  const h = shutdownAdmitHandler(() => down);
  assert.deepEqual(h(pod('a'), []), { admit: true });
  down = true;
  assert.deepEqual(h(pod('a'), []), { admit: false, reason: 'NodeShutdown', message: 'Pod was rejected as the node is shutting down.' });
});

test('admission resource fit: requests against allocatable minus the admitted pods, with kubelet reasons and messages', () => {
  let alloc: Record<string, string> | undefined = { cpu: '1900m', memory: '1Gi', pods: '3', 'ephemeral-storage': '10Gi' };
  const h = resourceFitAdmitHandler(() => alloc);
  const running = [pod('a', { cpu: '500m', memory: '256Mi' }), pod('b')];
  assert.deepEqual(h(pod('fits', { cpu: '1400m', memory: '768Mi' }), running), { admit: true });
  assert.deepEqual(h(pod('cpu', { cpu: '1500m' }), running), { admit: false, reason: 'OutOfcpu', message: "Node didn't have enough resource: cpu, requested: 1500, used: 500, capacity: 1900" });
  assert.deepEqual(h(pod('mem', { memory: '1Gi' }), running), {
    admit: false, reason: 'OutOfmemory', message: `Node didn't have enough resource: memory, requested: ${2 ** 30}, used: ${256 * 2 ** 20}, capacity: ${2 ** 30}`,
  });
  assert.deepEqual(h(pod('disk', { 'ephemeral-storage': '11Gi' }), []).admit, false);
  assert.deepEqual(h(pod('fourth'), [...running, pod('c')]), { admit: false, reason: 'OutOfpods', message: "Node didn't have enough resource: pods, requested: 1, used: 3, capacity: 3" });
  // An init container larger than the app containers counts (the pod's effective request).
  const init = pod('init', { cpu: '100m' }, { initContainers: [{ name: 'i', image: 'i', resources: { requests: { cpu: '1500m' } } }] });
  assert.equal(h(init, running).admit, false);
  // Before the node is registered nothing is known, so everything fits.
  alloc = undefined;
  assert.deepEqual(h(pod('cpu', { cpu: '64' }), running), { admit: true });
});

test('admitPod: the first refusal wins, in handler order', () => {
  const r = admitPod([shutdownAdmitHandler(() => true), under('DiskPressure')], pod('a'), []);
  assert.equal(r.admit === false && r.reason, 'NodeShutdown');
  assert.deepEqual(admitPod([under(), shutdownAdmitHandler(() => false)], pod('a'), []), { admit: true });
});

test('hostUsers: false is refused on this node (no user namespaces), loudly; true or unset is admitted', () => {
  const h = userNamespacesAdmitHandler();
  assert.deepEqual(h(pod('u', undefined, { hostUsers: false }), []), { admit: false, reason: 'UserNamespacesNotSupported', message: 'the pod asks for a user namespace (hostUsers: false), which the container runtime of this node does not support' });
  assert.deepEqual(h(pod('t', undefined, { hostUsers: true }), []), { admit: true });
  assert.deepEqual(h(pod('n'), []), { admit: true });
  const status = { phase: 'Pending' as const };
  rejectedStatus('UserNamespacesNotSupported', 'x')(status);
  assert.deepEqual(status, { phase: 'Failed', reason: 'UserNamespacesNotSupported', message: 'Pod was rejected: x' });
});

test('OS: a pod naming another OS in spec.os or its kubernetes.io/os label is refused with kubelet reasons', () => {
  assert.deepEqual(osAdmitHandler(pod('plain'), []), { admit: true });
  assert.deepEqual(osAdmitHandler(pod('linux', undefined, { os: { name: 'linux' } } as Partial<NonNullable<Pod['spec']>>), []), { admit: true });
  assert.deepEqual(osAdmitHandler(pod('win', undefined, { os: { name: 'windows' } } as Partial<NonNullable<Pod['spec']>>), []), {
    admit: false, reason: 'PodOSNotSupported', message: "Failed to admit pod as the OS field doesn't match node OS",
  });
  const labelled: Pod = { ...pod('lbl'), metadata: { name: 'lbl', namespace: 'd', uid: 'lbl', labels: { 'kubernetes.io/os': 'windows' } } };
  assert.deepEqual(osAdmitHandler(labelled, []), {
    admit: false, reason: 'PodOSSelectorNodeLabelDoesNotMatch', message: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label",
  });
});
