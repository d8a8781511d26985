import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, Pod, Toleration } from '@nodelet/api';
import { planEvictions, reconcileTaints, unknownConditions } from './health.js';

const NOW = '2026-01-01T00:10:00Z';
const NOW_MS = Date.parse(NOW);

function node(ready: 'True' | 'False' | 'Unknown' | undefined, taints: Node['spec'] extends infer S ? (S extends { taints?: infer T } ? T : never) : never = []): Node {
  return {
    metadata: { name: 'n1' },
    spec: { taints },
    status: { conditions: ready ? [{ type: 'Ready', status: ready, reason: 'KubeletReady', lastHeartbeatTime: '2026-01-01T00:00:00Z' }, { type: 'MemoryPressure', status: 'False' }] : [] },
  };
}

function pod(name: string, tolerations?: Toleration[]): Pod {
  return { metadata: { name, namespace: 'default' }, spec: { containers: [], nodeName: 'n1', tolerations } };
}

test('unknownConditions marks every monitored condition Unknown with upstream reasons', () => {
  const conds = unknownConditions(node('True'), NOW)!;
  const ready = conds.find((c) => c.type === 'Ready')!;
  assert.deepEqual([ready.status, ready.reason, ready.message, ready.lastTransitionTime, ready.lastHeartbeatTime], ['Unknown', 'NodeStatusUnknown', 'Kubelet stopped posting node status.', NOW, '2026-01-01T00:00:00Z']);
  assert.equal(conds.find((c) => c.type === 'DiskPressure')?.reason, 'NodeStatusNeverUpdated');
  assert.equal(unknownConditions({ ...node('True'), status: { conditions: conds } }, NOW), undefined);
});

test('taints follow the Ready condition and keep user taints', () => {
  const cases: Array<[Node, string[] | undefined]> = [
    [node('Unknown'), ['node.kubernetes.io/unreachable:NoSchedule', 'node.kubernetes.io/unreachable:NoExecute']],
    [node('False'), ['node.kubernetes.io/not-ready:NoSchedule', 'node.kubernetes.io/not-ready:NoExecute']],
    [node('True'), undefined],
    [node('True', [{ key: 'user', effect: 'NoSchedule' }, { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }]), ['user:NoSchedule']],
    [node('Unknown', [{ key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' }, { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }]), undefined],
  ];
  for (const [n, want] of cases) assert.deepEqual(reconcileTaints(n, NOW)?.map((t) => `${t.key}:${t.effect}`), want, JSON.stringify(n.spec?.taints));
  assert.equal(reconcileTaints(node('Unknown'), NOW)?.[1]?.timeAdded, NOW);
});

test('NoExecute eviction honours tolerationSeconds, forever-tolerations and the 300 s default', () => {
  const added = Date.parse('2026-01-01T00:00:00Z');
  const n = node('Unknown', [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: '2026-01-01T00:00:00Z' }]);
  const pods = [
    pod('short', [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 }]),
    pod('forever', [{ operator: 'Exists' }]),
    pod('default'), // no tolerations at all: treated as the default 300 s
  ];
  const at1min = planEvictions(n, pods, added + 61_000);
  assert.deepEqual(at1min.evict.map((p) => p.metadata.name), ['short']);
  assert.equal(at1min.nextAt, added + 300_000);
  assert.deepEqual(planEvictions(n, pods, added + 300_000).evict.map((p) => p.metadata.name), ['short', 'default']);
  const userTaint = node('True', [{ key: 'dedicated', effect: 'NoExecute', timeAdded: NOW }]);
  assert.deepEqual(planEvictions(userTaint, [pod('x')], NOW_MS).evict.map((p) => p.metadata.name), ['x']);
  assert.deepEqual(planEvictions(node('True'), [pod('x')], NOW_MS), { evict: [] });
});

test('pressure conditions add their NoSchedule taints and remove them when they clear (taint-by-condition)', () => {
  const withConds = (conds: Array<[string, 'True' | 'False']>, taints: Array<{ key: string; effect: 'NoSchedule' | 'NoExecute' }> = []): Node => ({
    metadata: { name: 'n1' },
    spec: { taints },
    status: { conditions: [{ type: 'Ready', status: 'True' }, ...conds.map(([type, status]) => ({ type, status }))] },
  });
  const keys = (n: Node): string[] | undefined => reconcileTaints(n, NOW)?.map((t) => `${t.key}:${t.effect}`);
  assert.deepEqual(keys(withConds([['MemoryPressure', 'True'], ['DiskPressure', 'False']])), ['node.kubernetes.io/memory-pressure:NoSchedule']);
  assert.deepEqual(keys(withConds([['DiskPressure', 'True'], ['PIDPressure', 'True']])), ['node.kubernetes.io/disk-pressure:NoSchedule', 'node.kubernetes.io/pid-pressure:NoSchedule']);
  assert.equal(keys(withConds([['MemoryPressure', 'True']], [{ key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule' }])), undefined, 'already there');
  assert.deepEqual(keys(withConds([['MemoryPressure', 'False']], [{ key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule' }, { key: 'user', effect: 'NoSchedule' }])), ['user:NoSchedule']);
  // A pressure taint is NoSchedule only: it never evicts running pods.
  const tainted = withConds([['MemoryPressure', 'True']], [{ key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule' }]);
  assert.deepEqual(planEvictions(tainted, [pod('a')], NOW_MS).evict, []);
});
