import { test } from 'node:test';
import assert from 'node:assert/strict';
import { schedulePod } from './algorithm.js';
import { formatFitError } from './fit-error.js';
import { newNodeInfo } from './node-info.js';
import { balancedAllocationScore, leastAllocatedScore, nodeAffinityScores, selectHost, selectorSpreadScores, taintTolerationScores } from './scores.js';
import { makeNode, makePod } from './testing/objects.js';

test('LeastAllocated: emptier nodes score higher; the pod itself counts', () => {
  const cases = [
    // 4 cpu, 8Gi; pod 1 cpu + 2Gi → cpu 75, mem 75
    { node: makeNode('n'), bound: [], pod: makePod('p', { cpu: '1', memory: '2Gi' }), score: 75 },
    // bound 2 cpu / 4Gi + pod 1 cpu / 2Gi → 25 each
    { node: makeNode('n'), bound: [makePod('a', { cpu: '2', memory: '4Gi', node: 'n' })], pod: makePod('p', { cpu: '1', memory: '2Gi' }), score: 25 },
    // no requests: scoring defaults 100m and 200Mi → cpu 97, mem 97
    { node: makeNode('n'), bound: [], pod: makePod('p'), score: 97 },
    // over capacity scores 0 for that resource: cpu 0, mem 75 → 37
    { node: makeNode('n', { cpu: '1' }), bound: [], pod: makePod('p', { cpu: '2', memory: '2Gi' }), score: 37 },
    { node: makeNode('n', { cpu: '0', memory: '0' }), bound: [], pod: makePod('p'), score: 0 },
  ];
  for (const c of cases) assert.equal(leastAllocatedScore(c.pod, newNodeInfo(c.node, c.bound)), c.score, JSON.stringify(c.pod.spec?.containers[0]?.resources));
});

test('SelectorSpread: fewer pods of the same controller scores higher; other owners do not count', () => {
  const n1 = newNodeInfo(makeNode('n1'), [makePod('a', { owner: 'rs1', node: 'n1' }), makePod('b', { owner: 'rs1', node: 'n1' })]);
  const n2 = newNodeInfo(makeNode('n2'), [makePod('c', { owner: 'rs1', node: 'n2' }), makePod('x', { owner: 'rs2', node: 'n2' })]);
  const n3 = newNodeInfo(makeNode('n3'), [makePod('y', { owner: 'rs2', node: 'n3' }), makePod('z', { owner: 'rs1', node: 'n3', namespace: 'other' })]);
  const scores = selectorSpreadScores(makePod('p', { owner: 'rs1' }), [n1, n2, n3]);
  assert.deepEqual(Object.fromEntries(scores), { n1: 0, n2: 50, n3: 100 });
  const noOwner = selectorSpreadScores(makePod('p'), [n1, n2]);
  assert.deepEqual(Object.fromEntries(noOwner), { n1: 100, n2: 100 });
});

test('selectHost picks the top score and breaks ties by reservoir sampling', () => {
  const scores = [
    { name: 'a', score: 5 },
    { name: 'b', score: 9 },
    { name: 'c', score: 9 },
  ];
  assert.equal(selectHost(scores, () => 0.99), 'b'); // second tie kept only when random*2 < 1
  assert.equal(selectHost(scores, () => 0.1), 'c');
  assert.equal(selectHost([], () => 0), undefined);
});

test('spreading: replicas of one owner go to different equal nodes', () => {
  const nodes = ['n1', 'n2', 'n3'].map((n) => makeNode(n));
  const bound: ReturnType<typeof makePod>[] = [];
  for (let i = 0; i < 3; i++) {
    const pod = makePod(`web-${i}`, { owner: 'rs' });
    const infos = nodes.map((n) => newNodeInfo(n, bound.filter((p) => p.spec?.nodeName === n.metadata.name)));
    const r = schedulePod(pod, infos, { random: () => 0.5 });
    assert.equal(r.ok, true);
    if (r.ok) bound.push({ ...pod, spec: { ...pod.spec!, nodeName: r.node } });
  }
  assert.deepEqual(new Set(bound.map((p) => p.spec?.nodeName)), new Set(['n1', 'n2', 'n3']));
});

test('FailedScheduling message matches kube-scheduler (sorting, preemption suffix)', () => {
  const nodes = [
    newNodeInfo(makeNode('n1', { cpu: '1' }), []),
    newNodeInfo(makeNode('n2', { taints: [{ key: 'key', value: 'value', effect: 'NoSchedule' }] }), []),
    newNodeInfo(makeNode('n3', { taints: [{ key: 'key', value: 'value', effect: 'NoExecute' }] }), []),
  ];
  const r = schedulePod(makePod('p', { cpu: '2' }), nodes);
  assert.equal(r.ok, false);
  if (!r.ok) {
    assert.equal(
      r.message,
      '0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint {key: value}. ' +
        'preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling.',
    );
  }
  const allTainted = schedulePod(makePod('p'), [nodes[1]!, nodes[2]!]);
  assert.equal(
    !allTainted.ok && allTainted.message,
    '0/2 nodes are available: 2 node(s) had untolerated taint {key: value}. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.',
  );
  const never = schedulePod(makePod('p', { cpu: '2', spec: { preemptionPolicy: 'Never' } as never }), [nodes[0]!]);
  assert.equal(!never.ok && never.message, '0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.');
  const none = schedulePod(makePod('p'), []);
  assert.equal(!none.ok && none.message, 'no nodes available to schedule pods');
});

test('fit error histogram sorts as strings, like Go sort.Strings', () => {
  const statuses = [...Array(10).fill({ reasons: ['Too many pods'] }), { reasons: ['Insufficient cpu'] }, { reasons: ['Insufficient cpu'] }];
  assert.equal(formatFitError(12, statuses), '0/12 nodes are available: 10 Too many pods, 2 Insufficient cpu.');
  // one node can contribute several reasons
  assert.equal(formatFitError(1, [{ reasons: ['Insufficient cpu', 'Insufficient memory'] }]), '0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory.');
});

test('TaintToleration score: untolerated PreferNoSchedule taints lower a node, tolerated ones do not', () => {
  const clean = newNodeInfo(makeNode('clean'), []);
  const one = newNodeInfo(makeNode('one', { taints: [{ key: 'a', effect: 'PreferNoSchedule' }] }), []);
  const two = newNodeInfo(makeNode('two', { taints: [{ key: 'a', effect: 'PreferNoSchedule' }, { key: 'b', effect: 'PreferNoSchedule' }] }), []);
  assert.deepEqual(Object.fromEntries(taintTolerationScores(makePod('p'), [clean, one, two])), { clean: 100, one: 50, two: 0 });
  const tolerant = makePod('p', { spec: { tolerations: [{ key: 'a', operator: 'Exists' }] } });
  assert.deepEqual(Object.fromEntries(taintTolerationScores(tolerant, [clean, one, two])), { clean: 100, one: 100, two: 0 });
  // PreferNoSchedule never filters: a pod still schedules when every node has one.
  assert.equal(schedulePod(makePod('p'), [one, two], { random: () => 0 }).ok, true);
  assert.equal(schedulePod(makePod('p'), [one, clean], { random: () => 0 }).ok && 'clean', 'clean');
});

test('NodeAffinity score: matching preferred terms add their weights', () => {
  const ssd = newNodeInfo(makeNode('ssd', { labels: { disk: 'ssd' } }), []);
  const hdd = newNodeInfo(makeNode('hdd', { labels: { disk: 'hdd' } }), []);
  const pod = makePod('p', {
    spec: { affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 80, preference: { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] } }] } } },
  });
  assert.deepEqual(Object.fromEntries(nodeAffinityScores(pod, [ssd, hdd])), { ssd: 100, hdd: 0 });
  const r = schedulePod(pod, [hdd, ssd], { random: () => 0 });
  assert.equal(r.ok && r.node, 'ssd');
  assert.deepEqual(Object.fromEntries(nodeAffinityScores(makePod('q'), [ssd, hdd])), { ssd: 0, hdd: 0 });
});

test('BalancedAllocation: equal cpu and memory fractions score 100', () => {
  const n = newNodeInfo(makeNode('n', { cpu: '4', memory: '4Gi' }), []);
  assert.equal(balancedAllocationScore(makePod('p', { cpu: '2', memory: '2Gi' }), n), 100);
  assert.equal(balancedAllocationScore(makePod('p', { cpu: '4', memory: '1Mi' }), n), 50);
});
