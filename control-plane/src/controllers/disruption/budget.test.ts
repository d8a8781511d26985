import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { OwnerReference, Pod, PodDisruptionBudget } from '@nodelet/api';
import {
  DELETION_TIMEOUT_MS,
  countHealthy,
  expectedPodCount,
  failSafeStatus,
  nextStatus,
  pendingDisruptions,
  scaledValue,
  staleDisruptionAfterMs,
  type ScaleFinder,
} from './budget.js';

const T0 = Date.parse('2025-01-01T00:00:00Z');
const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const owner = (uid: string, kind = 'ReplicaSet'): OwnerReference => ({ apiVersion: 'apps/v1', kind, name: uid, uid, controller: true });
const pod = (name: string, o: { ready?: boolean; deleting?: boolean; owner?: OwnerReference } = {}): Pod => ({
  metadata: { name, namespace: 'ns', ...(o.deleting ? { deletionTimestamp: iso(T0) } : {}), ...(o.owner ? { ownerReferences: [o.owner] } : {}) },
  spec: { containers: [] },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }] },
});
const pdb = (spec: PodDisruptionBudget['spec'], status?: PodDisruptionBudget['status']): PodDisruptionBudget => ({
  metadata: { name: 'b', namespace: 'ns', generation: 1 },
  spec,
  ...(status ? { status } : {}),
});
const scales = (m: Record<string, number>): ScaleFinder => async (ref) => (ref.uid in m ? { uid: ref.uid, replicas: m[ref.uid]! } : undefined);

test('scaledValue rounds percentages up and refuses other strings', () => {
  assert.equal(scaledValue(2, 10), 2);
  assert.equal(scaledValue('50%', 3), 2);
  assert.equal(scaledValue('10%', 5), 1);
  assert.throws(() => scaledValue('x', 3), /not a percentage/);
});

test('expected counts: integer minAvailable counts pods; percentages and maxUnavailable use the controllers’ scale', async () => {
  const pods = [pod('a', { owner: owner('rs1') }), pod('b', { owner: owner('rs1') }), pod('c', { owner: owner('ss', 'StatefulSet') })];
  const finders = [scales({ rs1: 4, ss: 2 })];
  assert.deepEqual(await expectedPodCount(pdb({ minAvailable: 2 }), pods, finders), { expectedCount: 3, desiredHealthy: 2, unmanagedPods: [] });
  assert.deepEqual(await expectedPodCount(pdb({ minAvailable: '50%' }), pods, finders), { expectedCount: 6, desiredHealthy: 3, unmanagedPods: [] });
  assert.deepEqual(await expectedPodCount(pdb({ maxUnavailable: 1 }), pods, finders), { expectedCount: 6, desiredHealthy: 5, unmanagedPods: [] });
  assert.deepEqual(await expectedPodCount(pdb({ maxUnavailable: '100%' }), pods, finders), { expectedCount: 6, desiredHealthy: 0, unmanagedPods: [] });
  // A pod without a controller is reported; one whose controller nothing knows is an error.
  assert.deepEqual((await expectedPodCount(pdb({ maxUnavailable: 1 }), [...pods, pod('bare')], finders)).unmanagedPods, ['bare']);
  await assert.rejects(expectedPodCount(pdb({ maxUnavailable: 1 }), [pod('x', { owner: owner('gone') })], finders), /found no controllers for pod "x"/);
});

test('pending disruptions drop deleted pods and expired entries; healthy excludes them', () => {
  const budget = pdb({ minAvailable: 1 }, {
    disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 1, expectedPods: 3,
    disruptedPods: { a: iso(T0), b: iso(T0 - DELETION_TIMEOUT_MS - 1000), c: iso(T0), gone: iso(T0) },
  });
  const pods = [pod('a'), pod('b'), pod('c', { deleting: true }), pod('d'), pod('e', { ready: false })];
  const { pending, recheckAtMs, expired } = pendingDisruptions(budget, pods, T0 + 1000);
  assert.deepEqual(pending, { a: iso(T0) });
  assert.equal(recheckAtMs, T0 + DELETION_TIMEOUT_MS);
  assert.deepEqual(expired.map((p) => p.metadata.name), ['b']);
  // a: just evicted, c: deleting, e: not ready → b and d are healthy.
  assert.equal(countHealthy(pods, pending, T0 + 1000), 2);
});

test('nextStatus computes disruptionsAllowed and the condition, and is a no-op when nothing changed', () => {
  const budget = pdb({ minAvailable: 2 });
  const s = nextStatus(budget, { currentHealthy: 3, desiredHealthy: 2, expectedCount: 3, disruptedPods: {} }, iso(T0))!;
  assert.deepEqual(
    { ...s, conditions: s.conditions!.map((c) => [c.type, c.status, c.reason, c.observedGeneration, c.lastTransitionTime]) },
    { observedGeneration: 1, disruptionsAllowed: 1, currentHealthy: 3, desiredHealthy: 2, expectedPods: 3, conditions: [['DisruptionAllowed', 'True', 'SufficientPods', 1, iso(T0)]] },
  );
  assert.equal(nextStatus({ ...budget, status: s }, { currentHealthy: 3, desiredHealthy: 2, expectedCount: 3, disruptedPods: {} }, iso(T0 + 5000)), undefined);
  const down = nextStatus({ ...budget, status: s }, { currentHealthy: 2, desiredHealthy: 2, expectedCount: 3, disruptedPods: { a: iso(T0) } }, iso(T0 + 5000))!;
  assert.equal(down.disruptionsAllowed, 0);
  assert.deepEqual(down.disruptedPods, { a: iso(T0) });
  assert.deepEqual(down.conditions!.map((c) => [c.status, c.reason, c.lastTransitionTime]), [['False', 'InsufficientPods', iso(T0 + 5000)]]);
  // No expected pods: nothing may be disrupted, however many are healthy.
  assert.equal(nextStatus(budget, { currentHealthy: 5, desiredHealthy: 0, expectedCount: 0, disruptedPods: {} }, iso(T0))!.disruptionsAllowed, 0);
  const failed = failSafeStatus({ ...budget, status: s }, 'found no controllers for pod "x"', iso(T0 + 9000));
  assert.equal(failed.disruptionsAllowed, 0);
  assert.deepEqual(failed.conditions!.map((c) => [c.status, c.reason, c.message]), [['False', 'SyncFailed', 'found no controllers for pod "x"']]);
});

test('a DisruptionTarget condition goes stale after 2 minutes on a pod that is not terminating', () => {
  const marked = (reason: string, deleting = false): Pod => {
    const p = pod('p', { deleting });
    p.status!.conditions!.push({ type: 'DisruptionTarget', status: 'True', reason, lastTransitionTime: iso(T0) });
    return p;
  };
  assert.equal(staleDisruptionAfterMs(marked('EvictionByEvictionAPI'), T0 + 30_000), 90_000);
  assert.equal(staleDisruptionAfterMs(marked('EvictionByEvictionAPI'), T0 + 300_000), 0);
  assert.equal(staleDisruptionAfterMs(marked('EvictionByEvictionAPI', true), T0), undefined);
  assert.equal(staleDisruptionAfterMs(marked('TerminationByKubelet'), T0), undefined);
  assert.equal(staleDisruptionAfterMs(pod('plain'), T0), undefined);
});
