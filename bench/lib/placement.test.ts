import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Pod } from '@nodelet/api';
import { placement, placementViolations } from './placement.js';

const pod = (app: string, nodeName?: string): Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `${app}-${nodeName ?? 'x'}`, labels: { app } }, spec: { containers: [], ...(nodeName ? { nodeName } : {}) } });
const NODES = ['n1', 'n2', 'n3'];

test('spread: even Deployments get maxSkew 1 on the hostname, odd ones required anti-affinity; plain gets nothing', () => {
  assert.deepEqual(placement('plain', 'd0', 0), {});
  assert.deepEqual(placement('spread', 'd0', 0).topologySpreadConstraints, [
    { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'd0' } } },
  ]);
  assert.deepEqual(placement('spread', 'd1', 1).affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution, [
    { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'd1' } } },
  ]);
});

test('a spread Deployment breaks its rule when node counts differ by more than 1, an empty node counting as 0', () => {
  assert.equal(placementViolations('spread', 1, NODES, [pod('d0', 'n1'), pod('d0', 'n2'), pod('d0', 'n3'), pod('d0', 'n1')]), 0);
  assert.equal(placementViolations('spread', 1, NODES, [pod('d0', 'n1'), pod('d0', 'n1')]), 1);
  // Another Deployment's pods and unbound pods do not count.
  assert.equal(placementViolations('spread', 1, NODES, [pod('d0', 'n1'), pod('d2', 'n1'), pod('d2', 'n1'), pod('d0')]), 0);
});

test('an anti-affine Deployment breaks its rule with two pods on one node', () => {
  assert.equal(placementViolations('spread', 2, NODES, [pod('d1', 'n1'), pod('d1', 'n2')]), 0);
  assert.equal(placementViolations('spread', 2, NODES, [pod('d1', 'n1'), pod('d1', 'n1')]), 1);
  assert.equal(placementViolations('plain', 2, NODES, [pod('d1', 'n1'), pod('d1', 'n1')]), 0);
});
