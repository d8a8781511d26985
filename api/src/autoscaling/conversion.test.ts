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
    [HPA_V1_ANNOTATIONS.metrics]: JSON.stringify([{ type: 'Resource', resource: { name: 'memory', targetAverageValue: '100Mi' } }]),
    [HPA_V1_ANNOTATIONS.behavior]: JSON.stringify(behavior),
    [HPA_V1_ANNOTATIONS.currentMetrics]: JSON.stringify([{ type: 'Resource', resource: { name: 'memory', currentAverageValue: '50Mi' } }]),
    [HPA_V1_ANNOTATIONS.conditions]: JSON.stringify(conditions),
  });
  const back = hpaFromV1(v1);
  assert.deepEqual(back.metadata, { name: 'm', annotations: { keep: 'me' } });
  assert.deepEqual((back.spec as { behavior: unknown }).behavior, behavior);
  assert.deepEqual((back.spec as { metrics: unknown }).metrics, [cpu(70), mem]);
  assert.deepEqual((back.status as { conditions: unknown }).conditions, conditions);
  assert.deepEqual((back.status as { currentMetrics: unknown }).currentMetrics, [memNow]);
});

test('each metric source keeps its fields through v1’s older annotation shape', () => {
  const sel = { matchLabels: { app: 'web' } };
  const metrics = [
    { type: 'ContainerResource', containerResource: { name: 'memory', container: 'c', target: { type: 'Utilization', averageUtilization: 60 } } },
    { type: 'Pods', pods: { metric: { name: 'qps', selector: sel }, target: { type: 'AverageValue', averageValue: '10' } } },
    { type: 'Object', object: { describedObject: ref, metric: { name: 'hits' }, target: { type: 'Value', value: '5' } } },
    { type: 'External', external: { metric: { name: 'queue', selector: sel }, target: { type: 'AverageValue', averageValue: '3' } } },
  ];
  const current = [
    { type: 'Pods', pods: { metric: { name: 'qps' }, current: { averageValue: '7' } } },
    { type: 'External', external: { metric: { name: 'queue' }, current: { value: '9' } } },
  ];
  const v1 = hpaToV1({ metadata: {}, spec: { scaleTargetRef: ref, maxReplicas: 2, metrics }, status: { desiredReplicas: 0, currentMetrics: current } });
  const ann = (v1.metadata as { annotations: Record<string, string> }).annotations;
  assert.deepEqual(JSON.parse(String(ann[HPA_V1_ANNOTATIONS.metrics])), [
    { type: 'ContainerResource', containerResource: { name: 'memory', container: 'c', targetAverageUtilization: 60 } },
    { type: 'Pods', pods: { metricName: 'qps', selector: sel, targetAverageValue: '10' } },
    { type: 'Object', object: { target: ref, metricName: 'hits', targetValue: '5' } },
    { type: 'External', external: { metricName: 'queue', metricSelector: sel, targetAverageValue: '3' } },
  ]);
  assert.deepEqual(JSON.parse(String(ann[HPA_V1_ANNOTATIONS.currentMetrics])), [
    { type: 'Pods', pods: { metricName: 'qps', currentAverageValue: '7' } },
    { type: 'External', external: { metricName: 'queue', currentValue: '9' } },
  ]);
  const back = hpaFromV1(v1);
  assert.deepEqual((back.spec as { metrics: unknown }).metrics, metrics);
  assert.deepEqual((back.status as { currentMetrics: unknown }).currentMetrics, current);
});

test('an annotation that is not JSON of the right shape is dropped, not an error', () => {
  const v2 = hpaFromV1({ metadata: { annotations: { [HPA_V1_ANNOTATIONS.behavior]: '[1]', [HPA_V1_ANNOTATIONS.metrics]: '{' } }, spec: { scaleTargetRef: ref, maxReplicas: 1 } });
  assert.deepEqual(v2.metadata, {});
  assert.deepEqual(v2.spec, { scaleTargetRef: ref, maxReplicas: 1 });
});
