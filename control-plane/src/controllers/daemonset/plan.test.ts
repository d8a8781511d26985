import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { DaemonSet, Node, Pod } from '@nodelet/api';
import { daemonPodTolerations, nodeShouldRunDaemonPod, targetNodeName } from './eligibility.js';
import { nodeStates, planRollingUpdate, updateBudget } from './plan.js';

const ds = (spec: Partial<NonNullable<DaemonSet['spec']>> = {}, podSpec: Partial<NonNullable<Pod['spec']>> = {}): DaemonSet => ({
  metadata: { name: 'd', namespace: 'ns', uid: 'u' },
  spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c' }], ...podSpec } }, ...spec },
});
const node = (name: string, spec: Node['spec'] = {}, labels: Record<string, string> = {}): Node => ({ metadata: { name, labels }, spec });

test('eligibility: selectors and affinity decide; NoSchedule stops new pods, NoExecute also removes old ones; automatic tolerations', () => {
  assert.deepEqual(nodeShouldRunDaemonPod(node('n'), ds()), { shouldRun: true, shouldContinueRunning: true });
  assert.deepEqual(nodeShouldRunDaemonPod(node('n', {}, { disk: 'hdd' }), ds({}, { nodeSelector: { disk: 'ssd' } })), { shouldRun: false, shouldContinueRunning: false });
  assert.deepEqual(nodeShouldRunDaemonPod(node('n', { taints: [{ key: 'k', effect: 'NoSchedule' }] }), ds()), { shouldRun: false, shouldContinueRunning: true });
  assert.deepEqual(nodeShouldRunDaemonPod(node('n', { taints: [{ key: 'k', effect: 'NoExecute' }] }), ds()), { shouldRun: false, shouldContinueRunning: false });
  for (const key of ['not-ready', 'unreachable']) {
    assert.equal(nodeShouldRunDaemonPod(node('n', { taints: [{ key: `node.kubernetes.io/${key}`, effect: 'NoExecute' }] }), ds()).shouldRun, true, key);
  }
  for (const key of ['disk-pressure', 'memory-pressure', 'pid-pressure', 'unschedulable']) {
    assert.equal(nodeShouldRunDaemonPod(node('n', { taints: [{ key: `node.kubernetes.io/${key}`, effect: 'NoSchedule' }] }), ds()).shouldRun, true, key);
  }
  const netDown = node('n', { taints: [{ key: 'node.kubernetes.io/network-unavailable', effect: 'NoSchedule' }] });
  assert.equal(nodeShouldRunDaemonPod(netDown, ds()).shouldRun, false, 'only hostNetwork daemons run without a pod network');
  assert.equal(nodeShouldRunDaemonPod(netDown, ds({}, { hostNetwork: true })).shouldRun, true);
  assert.equal(daemonPodTolerations({ containers: [], tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }] }).length, 6, 'no duplicates');
  assert.equal(nodeShouldRunDaemonPod(node('n'), ds({}, { nodeName: 'other' })).shouldRun, false);
  assert.equal(targetNodeName({ metadata: {}, spec: { containers: [], affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['x'] }] }] } } } } }), 'x');
});

test('rolling update budget and steps: unavailable old pods go first, then up to maxUnavailable; surge waits for availability', () => {
  assert.deepEqual(updateBudget(ds({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: 0 } } }), 5), { maxSurge: 0, maxUnavailable: 2 });
  assert.deepEqual(updateBudget(ds({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 0 } } }), 5), { maxSurge: 0, maxUnavailable: 1 });
  const now = Date.parse('2026-01-01T00:00:00Z');
  const pod = (name: string, nodeName: string, hash: string, ready: boolean): Pod => ({
    metadata: { name, uid: name, labels: { 'controller-revision-hash': hash } },
    spec: { containers: [], nodeName },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: '2025-12-31T00:00:00Z' }] },
  });
  const d = ds({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } } });
  const nodes = [node('a'), node('b'), node('c')];
  const byNode = new Map([['a', [pod('pa', 'a', 'old', true)]], ['b', [pod('pb', 'b', 'old', false)]], ['c', [pod('pc', 'c', 'old', true)]]]);
  // b's old pod is unavailable anyway: replaced without using the budget; one more may go.
  assert.deepEqual(planRollingUpdate(d, nodeStates(d, nodes, byNode), 'new', undefined, now).delete.map((p) => p.metadata.name), ['pb', 'pa']);
  const s = ds({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } } });
  assert.deepEqual(planRollingUpdate(s, nodeStates(s, nodes, byNode), 'new', undefined, now), { delete: [], createOn: ['b', 'a'] });
  const surged = new Map([...byNode, ['a', [pod('pa', 'a', 'old', true), pod('na', 'a', 'new', true)]]]);
  assert.deepEqual(planRollingUpdate(s, nodeStates(s, nodes, surged), 'new', undefined, now).delete.map((p) => p.metadata.name), ['pa']);
});
