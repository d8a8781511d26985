import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Job, Pod } from '@nodelet/api';
import { firstPendingIndexes, formatIndexes, parseIndexes, podCompletionIndex } from './indexes.js';
import { backoffRemainingMs, ensureCondition, isPodFailed, matchPodFailurePolicy, nextBackoffRecord, wantActive } from './policy.js';
import { countUncounted, trackFinishedPods } from './track.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');

test('pod-failure backoff: 10 s × 2^(n−1) from the last failure, capped at 10 min, reset by a success', () => {
  assert.equal(backoffRemainingMs(undefined, T0), 0);
  assert.equal(backoffRemainingMs({ failuresAfterLastSuccess: 1, lastFailureMs: T0 }, T0), 10_000);
  assert.equal(backoffRemainingMs({ failuresAfterLastSuccess: 1, lastFailureMs: T0 }, T0 + 4_000), 6_000);
  assert.equal(backoffRemainingMs({ failuresAfterLastSuccess: 3, lastFailureMs: T0 }, T0), 40_000);
  assert.equal(backoffRemainingMs({ failuresAfterLastSuccess: 7, lastFailureMs: T0 }, T0), 600_000);
  assert.equal(backoffRemainingMs({ failuresAfterLastSuccess: 30, lastFailureMs: T0 }, T0 + 600_001), 0);
  const r = nextBackoffRecord(undefined, [{ failed: true, atMs: T0 + 2 }, { failed: false, atMs: T0 + 1 }, { failed: true, atMs: T0 + 3 }]);
  assert.deepEqual(r, { failuresAfterLastSuccess: 2, lastFailureMs: T0 + 3 });
  assert.deepEqual(nextBackoffRecord(r, [{ failed: false, atMs: T0 + 9 }]), { failuresAfterLastSuccess: 0 });
});

test('wanted active pods: min(parallelism, remaining completions); a work queue keeps what runs after a success', () => {
  const j = (spec: Partial<NonNullable<Job['spec']>>): Job => ({ metadata: {}, spec: { template: {}, ...spec } });
  assert.equal(wantActive(j({ parallelism: 2, completions: 5 }), 0, 0), 2);
  assert.equal(wantActive(j({ parallelism: 2, completions: 5 }), 4, 2), 1);
  assert.equal(wantActive(j({ parallelism: 2, completions: 5 }), 6, 0), 0);
  assert.equal(wantActive(j({ parallelism: 3 }), 0, 1), 3);
  assert.equal(wantActive(j({ parallelism: 3 }), 1, 2), 2);
});

test('completed indexes round-trip in interval form; pending indexes skip done and running ones', () => {
  assert.equal(formatIndexes([7, 1, 3, 4, 5, 3]), '1,3-5,7');
  assert.deepEqual([...parseIndexes('1,3-5,7,x,9', 8)].sort(), [1, 3, 4, 5, 7]);
  assert.deepEqual(firstPendingIndexes(new Set([0, 2]), 2, 5), [1, 3]);
  const pod = (v: string): Pod => ({ metadata: { annotations: { 'batch.kubernetes.io/job-completion-index': v } } });
  assert.equal(podCompletionIndex(pod('12')), 12);
  assert.equal(podCompletionIndex(pod('012')), undefined);
  assert.equal(podCompletionIndex(pod('-1')), undefined);
});

test('pod failure policy: first matching rule wins; exit code 0 and other containers never match', () => {
  const job: Job = {
    metadata: {},
    spec: {
      template: {},
      podFailurePolicy: {
        rules: [
          { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] },
          { action: 'FailJob', onExitCodes: { containerName: 'main', operator: 'In', values: [42] } },
          { action: 'Count', onExitCodes: { operator: 'NotIn', values: [1] } },
        ],
      },
    },
  };
  const failed = (exitCode: number, name = 'main', conditions: NonNullable<Pod['status']>['conditions'] = []): Pod => ({
    metadata: { name: 'p', namespace: 'ns' },
    status: { phase: 'Failed', conditions, containerStatuses: [{ name, ready: false, restartCount: 0, image: '', imageID: '', state: { terminated: { exitCode } } }] },
  });
  assert.deepEqual(matchPodFailurePolicy(job, failed(42)), { action: 'FailJob', message: 'Container main for pod ns/p failed with exit code 42 matching FailJob rule at index 1' });
  assert.equal(matchPodFailurePolicy(job, failed(42, 'sidecar'))?.action, 'Count');
  assert.equal(matchPodFailurePolicy(job, failed(1)), undefined);
  assert.equal(matchPodFailurePolicy(job, failed(0)), undefined);
  assert.equal(matchPodFailurePolicy(job, failed(42, 'main', [{ type: 'DisruptionTarget', status: 'True' }]))?.action, 'Ignore');
  // A deleted, unfinished pod is a failure unless only Failed pods are replaced (a podFailurePolicy implies that).
  const deleting: Pod = { metadata: { deletionTimestamp: '2026-01-01T00:00:00Z' }, status: { phase: 'Running' } };
  assert.equal(isPodFailed(deleting, { metadata: {}, spec: { template: {} } }), true);
  assert.equal(isPodFailed(deleting, job), false);
});

test('tracking: finished pods become uncounted first, then counted once; conditions move lastTransitionTime only on a status change', () => {
  const job: Job = { metadata: {}, spec: { template: {}, completions: 3 }, status: { succeeded: 1 } };
  const p = (uid: string, phase: 'Succeeded' | 'Failed' | 'Running', finalizer = true): Pod => ({
    metadata: { uid, name: uid, finalizers: finalizer ? ['batch.kubernetes.io/job-tracking'] : [] },
    status: { phase },
  });
  const r = trackFinishedPods(job, [p('a', 'Succeeded'), p('b', 'Failed'), p('c', 'Running'), p('d', 'Succeeded', false)], T0);
  assert.equal(r.pendingChanged, true);
  assert.deepEqual(r.pending.uncountedTerminatedPods, { succeeded: ['a'], failed: ['b'] });
  assert.deepEqual(r.release.map((x) => x.metadata.uid), ['a', 'b']);
  const counted = countUncounted(job, r.pending);
  assert.deepEqual([counted.succeeded, counted.failed, counted.uncountedTerminatedPods], [2, 1, {}]);
  // After a crash between the two writes, the uids already listed are released again but not re-added.
  const again = trackFinishedPods({ ...job, status: r.pending }, [p('a', 'Succeeded'), p('b', 'Failed')], T0);
  assert.equal(again.pendingChanged, false);
  assert.deepEqual(again.release.map((x) => x.metadata.uid), ['a', 'b']);

  const conditions: NonNullable<NonNullable<Job['status']>['conditions']> = [];
  assert.equal(ensureCondition(conditions, 'Suspended', 'False', 'JobResumed', 'Job resumed', T0), false, 'False is never added');
  assert.equal(ensureCondition(conditions, 'Suspended', 'True', 'JobSuspended', 'Job suspended', T0), true);
  assert.equal(ensureCondition(conditions, 'Suspended', 'True', 'JobSuspended', 'Job suspended', T0 + 5_000), false);
  assert.equal(ensureCondition(conditions, 'Suspended', 'False', 'JobResumed', 'Job resumed', T0 + 9_000), true);
  assert.equal(conditions[0]!.lastTransitionTime, '2026-01-01T00:00:09Z');
});
