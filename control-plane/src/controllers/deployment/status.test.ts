import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Deployment, ReplicaSet } from '@nodelet/api';
import { computeDeploymentStatus, getCondition } from './status.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');

function deploy(replicas: number, status?: Deployment['status']): Deployment {
  return {
    metadata: { name: 'web', namespace: 'default', generation: 3 },
    spec: { replicas, selector: { matchLabels: { app: 'web' } }, template: { spec: { containers: [{ name: 'c' }] } } },
    status,
  };
}

function rs(name: string, spec: number, replicas: number, ready: number, available: number): ReplicaSet {
  return { metadata: { name }, spec: { replicas: spec, selector: {} }, status: { replicas, readyReplicas: ready, availableReplicas: available } };
}

test('counts come from all ReplicaSets, updated from the new one', () => {
  const newRS = rs('web-new', 2, 2, 1, 1);
  const s = computeDeploymentStatus(deploy(3), newRS, [newRS, rs('web-old', 2, 2, 2, 2)], T0);
  assert.deepEqual(
    { ...s, conditions: undefined },
    { observedGeneration: 3, replicas: 4, updatedReplicas: 2, readyReplicas: 3, availableReplicas: 3, unavailableReplicas: 1, conditions: undefined, collisionCount: undefined },
  );
  assert.equal(getCondition(s, 'Available')?.reason, 'MinimumReplicasAvailable');
  assert.equal(getCondition(s, 'Progressing')?.reason, 'ReplicaSetUpdated');
  assert.equal(getCondition(s, 'Progressing')?.message, 'ReplicaSet "web-new" is progressing.');
});

test('complete rollout → Progressing NewReplicaSetAvailable; below minimum → Available False', () => {
  const newRS = rs('web-new', 3, 3, 3, 3);
  const done = computeDeploymentStatus(deploy(3), newRS, [newRS], T0);
  assert.equal(getCondition(done, 'Progressing')?.reason, 'NewReplicaSetAvailable');
  assert.equal(getCondition(done, 'Progressing')?.message, 'ReplicaSet "web-new" has successfully progressed.');
  assert.equal(getCondition(done, 'Available')?.status, 'True');

  const starting = rs('web-new', 4, 4, 0, 0);
  const low = computeDeploymentStatus(deploy(4), starting, [starting], T0);
  assert.equal(getCondition(low, 'Available')?.status, 'False');
  assert.equal(getCondition(low, 'Available')?.reason, 'MinimumReplicasUnavailable');
});

test('no progress for progressDeadlineSeconds → ProgressDeadlineExceeded', () => {
  const stuck = rs('web-new', 2, 2, 0, 0);
  const prev = computeDeploymentStatus(deploy(2), stuck, [stuck], T0);
  const d = deploy(2, prev);
  const later = computeDeploymentStatus(d, stuck, [stuck], T0 + 601_000);
  assert.equal(getCondition(later, 'Progressing')?.status, 'False');
  assert.equal(getCondition(later, 'Progressing')?.reason, 'ProgressDeadlineExceeded');
  const early = computeDeploymentStatus(d, stuck, [stuck], T0 + 100_000);
  assert.equal(getCondition(early, 'Progressing')?.reason, 'ReplicaSetUpdated');
});
