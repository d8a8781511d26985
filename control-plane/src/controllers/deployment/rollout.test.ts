import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Deployment, ReplicaSet } from '@nodelet/api';
import { planRollout, planCleanup, newRSNewReplicas } from './rollout.js';
import { computeHash, resolveFenceposts, resolveIntOrPercent, templatesEqualIgnoringHash, newReplicaSetFor, findNewReplicaSet, POD_TEMPLATE_HASH } from './util.js';

function deploy(replicas: number, strategy?: Deployment['spec'] extends infer S ? S extends { strategy?: infer T } ? T : never : never, image = 'busybox:2'): Deployment {
  return {
    metadata: { name: 'web', namespace: 'default', uid: 'd-uid', generation: 2 },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image }] } },
      strategy,
    },
  };
}

function rs(name: string, replicas: number, available: number, created: string, revision = 1): ReplicaSet {
  return {
    metadata: { name, namespace: 'default', creationTimestamp: created, annotations: { 'deployment.kubernetes.io/revision': String(revision) } },
    spec: { replicas, selector: { matchLabels: { app: 'web' } } },
    status: { replicas, availableReplicas: available, readyReplicas: available },
  };
}

test('maxSurge rounds up and maxUnavailable rounds down; both zero makes unavailable 1', () => {
  assert.deepEqual(resolveFenceposts(deploy(10)), { maxSurge: 3, maxUnavailable: 2 });
  assert.deepEqual(resolveFenceposts(deploy(1)), { maxSurge: 1, maxUnavailable: 0 });
  assert.deepEqual(resolveFenceposts(deploy(3, { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: '10%' } })), { maxSurge: 0, maxUnavailable: 1 });
  assert.equal(resolveIntOrPercent('50%', 5, true, '25%'), 3);
  assert.equal(resolveIntOrPercent(2, 5, true, '25%'), 2);
  assert.throws(() => resolveIntOrPercent('abc', 5, true, '25%'), RangeError);
});

test('pod-template-hash ignores the hash label and changes with the template', () => {
  const d = deploy(3);
  const h = computeHash(d.spec!.template);
  assert.match(h, /^[bcdfghjklmnpqrstvwxz2456789]+$/);
  const created = newReplicaSetFor(d, h, 1, 1);
  assert.equal(created.metadata.name, `web-${h}`);
  assert.equal(created.spec?.template?.metadata?.labels?.[POD_TEMPLATE_HASH], h);
  assert.equal(created.spec?.selector.matchLabels?.[POD_TEMPLATE_HASH], h);
  assert.equal(computeHash(created.spec?.template), h);
  assert.equal(templatesEqualIgnoringHash(created.spec?.template, d.spec!.template), true);
  assert.notEqual(computeHash(deploy(3, undefined, 'busybox:3').spec!.template), h);
  assert.notEqual(computeHash(d.spec!.template, 1), h);
  assert.equal(findNewReplicaSet(d, [created])?.metadata.name, created.metadata.name);
  assert.equal(created.metadata.ownerReferences?.[0]?.blockOwnerDeletion, true);
});

test('rolling update of 4 replicas (surge 1, unavailable 1) respects both bounds at every step', () => {
  const d = deploy(4);
  // Simulate: old RS fully available, new RS absent. Each step applies the plan and makes every
  // pod available instantly (worst case for surge: the planner must not exceed desired + 1).
  let oldRS = rs('web-old', 4, 4, '2026-01-01T00:00:00Z');
  let newRS: ReplicaSet | undefined;
  for (let step = 0; step < 20; step++) {
    const plan = planRollout({ deployment: d, newRS, oldRSs: [oldRS], oldPodsRunning: true, complete: false });
    if (plan.createNew !== undefined) newRS = rs('web-new', plan.createNew, 0, '2026-01-02T00:00:00Z', 2);
    for (const a of plan.scale) {
      if (a.name === 'web-old') oldRS = rs('web-old', a.replicas, Math.min(a.replicas, oldRS.status!.availableReplicas!), '2026-01-01T00:00:00Z');
      else newRS = rs('web-new', a.replicas, newRS!.status!.availableReplicas!, '2026-01-02T00:00:00Z', 2);
    }
    const total = (oldRS.spec!.replicas ?? 0) + (newRS?.spec?.replicas ?? 0);
    const available = (oldRS.status!.availableReplicas ?? 0) + (newRS?.status?.availableReplicas ?? 0);
    assert.ok(total <= 5, `step ${step}: ${total} pods > desired + maxSurge`);
    assert.ok(available >= 3, `step ${step}: ${available} available < desired - maxUnavailable`);
    if (newRS) newRS = rs('web-new', newRS.spec!.replicas!, newRS.spec!.replicas!, '2026-01-02T00:00:00Z', 2); // pods become ready
    if (!plan.scale.length && plan.createNew === undefined) break;
  }
  assert.equal(newRS?.spec?.replicas, 4);
  assert.equal(oldRS.spec?.replicas, 0);
});

test('first step of a rollout: new RS gets the surge, old RS keeps availability', () => {
  const plan = planRollout({ deployment: deploy(10), newRS: undefined, oldRSs: [rs('old', 10, 10, '2026-01-01T00:00:00Z')], oldPodsRunning: true, complete: false });
  // maxSurge 3 → new RS 3; maxUnavailable 2 → old RS may drop to 8 right away.
  assert.deepEqual(plan, { createNew: 3, scale: [{ name: 'old', replicas: 8 }], cleanup: [] });
});

test('unhealthy old replicas are scaled down before healthy ones', () => {
  const newRS = rs('new', 3, 0, '2026-01-03T00:00:00Z', 3);
  const broken = rs('broken', 2, 0, '2026-01-02T00:00:00Z', 2);
  const healthy = rs('healthy', 3, 3, '2026-01-01T00:00:00Z', 1);
  const plan = planRollout({ deployment: deploy(4), newRS, oldRSs: [healthy, broken], oldPodsRunning: true, complete: false });
  // all 8, minAvailable 3, new unavailable 3 → may scale down 2: both from the broken RS.
  assert.deepEqual(plan.scale, [{ name: 'broken', replicas: 0 }]);
});

test('scaling a settled deployment scales its one ReplicaSet; scaling down shrinks the new RS', () => {
  const only = rs('new', 2, 2, '2026-01-01T00:00:00Z');
  assert.deepEqual(planRollout({ deployment: deploy(5), newRS: only, oldRSs: [], oldPodsRunning: false, complete: false }).scale, [{ name: 'new', replicas: 5 }]);
  assert.deepEqual(planRollout({ deployment: deploy(1), newRS: only, oldRSs: [], oldPodsRunning: false, complete: false }).scale, [{ name: 'new', replicas: 1 }]);
  assert.equal(newRSNewReplicas(deploy(5), [only, rs('old', 4, 4, '2026-01-01T00:00:00Z')], 2), 3); // 6 of max 5 + 2
  assert.equal(newRSNewReplicas(deploy(5), [only, rs('old', 5, 5, '2026-01-01T00:00:00Z')], 2), 2); // 7 = max already
});

test('Recreate: old to zero, wait for old pods to go, then the new RS at full size', () => {
  const d = deploy(3, { type: 'Recreate' });
  const old = rs('old', 3, 3, '2026-01-01T00:00:00Z');
  assert.deepEqual(planRollout({ deployment: d, newRS: undefined, oldRSs: [old], oldPodsRunning: true, complete: false }).scale, [{ name: 'old', replicas: 0 }]);
  const zero = rs('old', 0, 0, '2026-01-01T00:00:00Z');
  assert.deepEqual(planRollout({ deployment: d, newRS: undefined, oldRSs: [zero], oldPodsRunning: true, complete: false }), { scale: [], cleanup: [] });
  assert.equal(planRollout({ deployment: d, newRS: undefined, oldRSs: [zero], oldPodsRunning: false, complete: false }).createNew, 3);
});

test('revision history: keep revisionHistoryLimit empty old ReplicaSets, delete the lowest revisions', () => {
  const d = deploy(1);
  d.spec!.revisionHistoryLimit = 2;
  const olds = [1, 2, 3, 4].map((r) => rs(`old-${r}`, 0, 0, `2026-01-0${r}T00:00:00Z`, r));
  olds.push(rs('busy', 1, 1, '2026-01-05T00:00:00Z', 5));
  assert.deepEqual(planCleanup(d, olds), ['old-1', 'old-2']);
});

test('a template that kubectl copied back (creationTimestamp: null) still matches its ReplicaSet', () => {
  const d = deploy(1);
  const rsObj = newReplicaSetFor(d, computeHash(d.spec!.template), 1, 1);
  const copied = structuredClone(rsObj.spec!.template!);
  delete copied.metadata!.labels![POD_TEMPLATE_HASH];
  (copied.metadata as Record<string, unknown>)['creationTimestamp'] = null;
  assert.equal(templatesEqualIgnoringHash(copied, rsObj.spec?.template), true);
  assert.equal(computeHash(copied), computeHash(d.spec!.template));
});

function annotated(name: string, replicas: number, available: number, created: string, desired: number, max: number): ReplicaSet {
  const r = rs(name, replicas, available, created);
  r.metadata.annotations = { ...r.metadata.annotations, 'deployment.kubernetes.io/desired-replicas': String(desired), 'deployment.kubernetes.io/max-replicas': String(max) };
  return r;
}

test('scaling mid-rollout shares the change proportionally (upstream example numbers)', () => {
  const d = deploy(20);
  const oldRS = annotated('old', 8, 8, '2026-01-01T00:00:00Z', 10, 13);
  const newRS = annotated('new', 3, 0, '2026-01-02T00:00:00Z', 10, 13);
  // allowed 20 + 5 = 25, 11 now: +14; old ≈ 8·25/13 → +7, new ≈ 3·25/13 → +3, leftover 4 to the largest.
  assert.deepEqual(planRollout({ deployment: d, newRS, oldRSs: [oldRS], oldPodsRunning: true, complete: false }).scale, [
    { name: 'old', replicas: 19 },
    { name: 'new', replicas: 6 },
  ]);
  // Scaling down to 5 mid-rollout: allowed 5 + 2 = 7, 11 now: -4 shared the same way.
  const down = planRollout({ deployment: deploy(5), newRS, oldRSs: [oldRS], oldPodsRunning: true, complete: false }).scale;
  assert.equal(down.reduce((n, a) => n + a.replicas, 0), 7);
});

test('a resized settled deployment scales its one active ReplicaSet; a saturated new RS zeroes old ones', () => {
  const only = annotated('cur', 3, 3, '2026-01-01T00:00:00Z', 3, 4);
  assert.deepEqual(planRollout({ deployment: deploy(5), newRS: only, oldRSs: [], oldPodsRunning: false, complete: false }).scale, [{ name: 'cur', replicas: 5 }]);
  const full = annotated('new', 4, 4, '2026-01-02T00:00:00Z', 4, 5);
  const left = annotated('old', 1, 1, '2026-01-01T00:00:00Z', 3, 4);
  assert.deepEqual(planRollout({ deployment: deploy(4), newRS: full, oldRSs: [left], oldPodsRunning: true, complete: false }).scale, [{ name: 'old', replicas: 0 }]);
  const paused = deploy(2);
  paused.spec!.paused = true;
  assert.deepEqual(planRollout({ deployment: paused, newRS: undefined, oldRSs: [only], oldPodsRunning: true, complete: false }), { scale: [{ name: 'cur', replicas: 2 }], cleanup: [] });
});
