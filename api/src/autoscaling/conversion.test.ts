// autoscaling/v1 ⇄ v2 HorizontalPodAutoscaler conversion: the CPU target and current value map to
// the Resource cpu metric, and v2-only fields survive a round trip through v1's annotations.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HPA_V1_ANNOTATIONS, hpaFromV1, hpaToV1 } from './conversion.js';

const ref = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };
const cpu = (n: number) => ({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: n } } });

test('v1 targetCPUUtilizationPercentage and currentCPUUtilizationPercentage ⇄ the v2 cpu metrics', () => {
  const v1 = { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'web' },
    spec: { scaleTargetRef: ref, minReplicas: 1, maxReplicas: 3, targetCPUUtilizationPercentage: 50 },
    status: { currentReplicas: 2, desiredReplicas: 2, currentCPUUtilizationPercentage: 40 } };
  const v2 = hpaFromV1(v1);
  assert.deepEqual(v2, { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'web' },
    spec: { scaleTargetRef: ref, minReplicas: 1, maxReplicas: 3, metrics: [cpu(50)] },
    status: { currentReplicas: 2, desiredReplicas: 2, currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 40 } } }] } });
  assert.deepEqual(hpaToV1(v2), v1);
});

test('a v1 form without a CPU target converts to v2 without metrics (v2 defaulting then applies 80%)', () => {
  const v2 = hpaFromV1({ metadata: { name: 'a' }, spec: { scaleTargetRef: ref, maxReplicas: 2 } });
  assert.deepEqual(v2.spec, { scaleTargetRef: ref, maxReplicas: 2 });
});

test('v2-only metrics, behavior, conditions and current metrics ride in annotations and come back', () => {
  const mem = { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } } };
  const memNow = { type: 'Resource', resource: { name: 'memory', current: { averageValue: '50Mi' } } };
  const behavior = { scaleDown: { stabilizationWindowSeconds: 60 } };
  const conditions = [{ type: 'AbleToScale', status: 'True', reason: 'ReadyForNewScale' }];
  const v2 = { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'm', annotations: { keep: 'me' } },
    spec: { scaleTargetRef: ref, minReplicas: 1, maxReplicas: 4, metrics: [mem, cpu(70)], behavior },
    status: { desiredReplicas: 1, currentMetrics: [memNow], conditions } };
  const v1 = hpaToV1(v2);
  assert.deepEqual(v1.spec, { scaleTargetRef: ref, minReplicas: 1, maxReplicas: 4, targetCPUUtilizationPercentage: 70 });
  assert.deepEqual(v1.status, { desiredReplicas: 1 });
  assert.deepEqual((v1.metadata as { annotations: unknown }).annotations, {
    keep: 'me',
    [HPA_V1_ANNOTATIONS.metrics]: JSON.stringify([mem]),
    [HPA_V1_ANNOTATIONS.behavior]: JSON.stringify(behavior),
    [HPA_V1_ANNOTATIONS.currentMetrics]: JSON.stringify([memNow]),
    [HPA_V1_ANNOTATIONS.conditions]: JSON.stringify(conditions),
  });
  const back = hpaFromV1(v1);
  assert.deepEqual(back.metadata, { name: 'm', annotations: { keep: 'me' } });
  assert.deepEqual((back.spec as { behavior: unknown }).behavior, behavior);
  assert.deepEqual((back.spec as { metrics: unknown }).metrics, [cpu(70), mem]);
  assert.deepEqual((back.status as { conditions: unknown }).conditions, conditions);
});

test('an annotation that is not JSON of the right shape is dropped, not an error', () => {
  const v2 = hpaFromV1({ metadata: { annotations: { [HPA_V1_ANNOTATIONS.behavior]: '[1]', [HPA_V1_ANNOTATIONS.metrics]: '{' } }, spec: { scaleTargetRef: ref, maxReplicas: 1 } });
  assert.deepEqual(v2.metadata, {});
  assert.deepEqual(v2.spec, { scaleTargetRef: ref, maxReplicas: 1 });
});
