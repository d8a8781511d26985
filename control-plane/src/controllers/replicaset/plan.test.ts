import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, ReplicaSet } from '@nodelet/api';
import { planReplicaSet, podFromTemplate, podsToDelete, replicaSetStatus, selectorMatches } from './plan.js';

const NOW = Date.parse('2026-01-01T01:00:00Z');

function rs(replicas: number, minReadySeconds = 0): ReplicaSet {
  return {
    metadata: { name: 'web-abc', namespace: 'default', uid: 'rs-uid', generation: 4 },
    spec: {
      replicas,
      minReadySeconds,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web', tier: 'fe' }, annotations: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
    },
  };
}

function pod(name: string, o: { node?: string; phase?: string; ready?: boolean; readySince?: string; restarts?: number; created?: string; deleting?: boolean; labels?: Record<string, string> } = {}): Pod {
  return {
    metadata: {
      name,
      labels: o.labels ?? { app: 'web', tier: 'fe' },
      creationTimestamp: o.created ?? '2026-01-01T00:00:00Z',
      deletionTimestamp: o.deleting ? '2026-01-01T00:30:00Z' : undefined,
    },
    spec: { containers: [{ name: 'c' }], nodeName: o.node },
    status: {
      phase: (o.phase ?? 'Running') as Pod['status'] extends infer S ? (S extends { phase?: infer P } ? P : never) : never,
      conditions: o.ready === undefined ? [] : [{ type: 'Ready', status: o.ready ? 'True' : 'False', lastTransitionTime: o.readySince ?? '2026-01-01T00:10:00Z' }],
      containerStatuses: [{ name: 'c', ready: !!o.ready, restartCount: o.restarts ?? 0, image: '', imageID: '' }],
    },
  };
}

test('creates the missing pods and ignores terminating and finished ones', () => {
  assert.deepEqual(planReplicaSet(rs(3), [pod('a', { node: 'n' })]), { create: 2, delete: [] });
  assert.deepEqual(planReplicaSet(rs(2), [pod('a'), pod('b', { deleting: true }), pod('c', { phase: 'Failed' })]), { create: 1, delete: [] });
  assert.equal(planReplicaSet(rs(1000), []).create, 500); // burstReplicas
});

test('deletes unscheduled, then pending, then not-ready, then newest pods first', () => {
  const pods = [
    pod('ready-old', { node: 'n', ready: true, readySince: '2026-01-01T00:01:00Z' }),
    pod('ready-new', { node: 'n', ready: true, readySince: '2026-01-01T00:20:00Z' }),
    pod('unscheduled', { phase: 'Pending' }),
    pod('pending', { node: 'n', phase: 'Pending' }),
    pod('not-ready', { node: 'n', ready: false }),
    pod('crashy', { node: 'n', ready: false, restarts: 5 }),
  ];
  assert.deepEqual(podsToDelete(pods, 6).map((p) => p.metadata.name), ['unscheduled', 'pending', 'crashy', 'not-ready', 'ready-new', 'ready-old']);
  assert.deepEqual(planReplicaSet(rs(4), pods).delete.map((p) => p.metadata.name), ['unscheduled', 'pending']);
});

test('status counts replicas, fully labeled, ready and available (minReadySeconds)', () => {
  const pods = [
    pod('a', { node: 'n', ready: true, readySince: '2026-01-01T00:59:50Z' }),
    pod('b', { node: 'n', ready: true, readySince: '2026-01-01T00:00:00Z' }),
    pod('c', { node: 'n', ready: false, labels: { app: 'web' } }),
    pod('gone', { deleting: true, ready: true }),
  ];
  assert.deepEqual(replicaSetStatus(rs(3, 30), pods, NOW), { replicas: 3, fullyLabeledReplicas: 2, readyReplicas: 2, availableReplicas: 1, observedGeneration: 4 });
});

test('pods from the template carry labels, annotations and a blocking controller reference', () => {
  const p = podFromTemplate(rs(1), 'web-abc-x2f9k');
  assert.equal(p.metadata.name, 'web-abc-x2f9k');
  assert.equal(p.metadata.generateName, 'web-abc-');
  assert.deepEqual(p.metadata.labels, { app: 'web', tier: 'fe' });
  assert.deepEqual(p.metadata.ownerReferences, [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-abc', uid: 'rs-uid', controller: true, blockOwnerDeletion: true }]);
  assert.equal(selectorMatches(rs(1), p), true);
  assert.equal(selectorMatches(rs(1), pod('x', { labels: { app: 'other' } })), false);
});
