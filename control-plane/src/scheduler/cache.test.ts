import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasCode } from '@nodelet/base';
import { FakeClock } from '@nodelet/base/testing';
import { SchedulerCache } from './cache.js';
import { newPodInfo } from './pod-info.js';
import { makeNode, makePod } from './testing/objects.js';

function cache(ttlMs = 30_000): { c: SchedulerCache; clock: FakeClock } {
  const clock = new FakeClock();
  return { c: new SchedulerCache({ clock, assumedPodTtlMs: ttlMs }), clock };
}

const info = (name: string, o: Parameters<typeof makePod>[1] = {}) => newPodInfo(makePod(name, o));

test('assume counts the pod on its node at once; the informer confirming it keeps it counted once', () => {
  const { c } = cache();
  c.addOrUpdateNode(makeNode('n1'));
  c.assume(info('p', { cpu: '500m', memory: '1Gi' }), 'n1');
  const n1 = c.get('n1')!;
  assert.deepEqual([n1.podCount, n1.requested.milliCPU, n1.requested.memory], [1, 500, 1 << 30]);
  assert.equal(c.isAssumed('default/p'), true);
  // A second assume of the same pod is a bug in the caller: refused, nothing counted twice.
  assert.throws(() => c.assume(info('p', { cpu: '500m' }), 'n1'), (e: unknown) => hasCode(e, 'ERR_CONFLICT'));

  c.addOrUpdatePod(info('p', { cpu: '500m', memory: '1Gi', node: 'n1' }));
  assert.equal(c.isAssumed('default/p'), false);
  assert.deepEqual([n1.podCount, n1.requested.milliCPU], [1, 500]);
  // Confirmed pods are not forgotten by a late binding failure.
  assert.equal(c.forget('default/p'), false);
  assert.equal(n1.podCount, 1);
  c.removePod('default/p');
  assert.deepEqual([n1.podCount, n1.requested.milliCPU, n1.requested.memory, n1.nonZeroRequested.milliCPU], [0, 0, 0, 0]);
});

test('forget frees what an assumed pod held (binding failed)', () => {
  const { c } = cache();
  c.addOrUpdateNode(makeNode('n1'));
  c.assume(info('p', { cpu: '1', containers: [{ name: 'c', image: 'x', ports: [{ containerPort: 80, hostPort: 8080 }] }] }), 'n1');
  assert.equal(c.get('n1')!.usedPorts.conflicts({ hostIP: '0.0.0.0', protocol: 'TCP', port: 8080 }), true);
  assert.equal(c.forget('default/p'), true);
  const n1 = c.get('n1')!;
  assert.deepEqual([n1.podCount, n1.requested.milliCPU, n1.usedPorts.size], [0, 0, 0]);
  assert.equal(c.assumedCount, 0);
});

test('an assumed pod expires only after its binding finished and the TTL passed unconfirmed', () => {
  const { c, clock } = cache(30_000);
  c.addOrUpdateNode(makeNode('n1'));
  c.assume(info('slow'), 'n1');
  c.assume(info('done'), 'n1');
  c.assume(info('confirmed'), 'n1');
  clock.advance(60_000);
  // Still binding: never expires mid-binding.
  assert.deepEqual(c.cleanupExpired(), []);
  c.finishBinding('default/done');
  c.finishBinding('default/confirmed');
  c.addOrUpdatePod(info('confirmed', { node: 'n1' }));
  clock.advance(29_999);
  assert.deepEqual(c.cleanupExpired(), []);
  clock.advance(1);
  assert.deepEqual(c.cleanupExpired(), ['default/done']);
  assert.deepEqual([...c.get('n1')!.pods()].map((p) => p.key).sort(), ['default/confirmed', 'default/slow']);
});

test('a pod confirmed on another node than assumed moves there', () => {
  const { c } = cache();
  c.addOrUpdateNode(makeNode('n1'));
  c.addOrUpdateNode(makeNode('n2'));
  c.assume(info('p', { cpu: '1' }), 'n1');
  c.addOrUpdatePod(info('p', { cpu: '1', node: 'n2' }));
  assert.deepEqual([c.get('n1')!.requested.milliCPU, c.get('n2')!.requested.milliCPU], [0, 1000]);
  assert.equal(c.nodeOf('default/p'), 'n2');
});

test('node list stays consistent across removals; a deleted node keeps its pods until it comes back', () => {
  const { c } = cache();
  for (const n of ['a', 'b', 'c', 'd']) c.addOrUpdateNode(makeNode(n));
  c.addOrUpdatePod(info('on-b', { cpu: '2', node: 'b' }));
  c.removeNode('b');
  assert.equal(c.nodeCount, 3);
  assert.equal(c.get('b'), undefined);
  assert.deepEqual(new Set(c.list.map((n) => n.name)), new Set(['a', 'c', 'd']));
  for (const n of c.list) assert.equal(c.get(n.name), n);
  // Same name again: the pod that was still there counts on it.
  c.addOrUpdateNode(makeNode('b'));
  assert.deepEqual([c.nodeCount, c.get('b')!.podCount, c.get('b')!.requested.milliCPU], [4, 1, 2000]);
  // A pod of a node the scheduler has not seen yet is held, not listed.
  c.addOrUpdatePod(info('early', { node: 'later' }));
  assert.equal(c.nodeCount, 4);
  c.addOrUpdateNode(makeNode('later'));
  assert.equal(c.get('later')!.podCount, 1);
  c.removeNode('a');
  c.removeNode('a');
  assert.deepEqual(new Set(c.list.map((n) => n.name)), new Set(['b', 'c', 'd', 'later']));
});

test('a node update keeps its pods and takes the new allocatable', () => {
  const { c } = cache();
  c.addOrUpdateNode(makeNode('n1', { cpu: '4' }));
  c.addOrUpdatePod(info('p', { cpu: '1', node: 'n1' }));
  c.addOrUpdateNode(makeNode('n1', { cpu: '8' }));
  const n1 = c.get('n1')!;
  assert.deepEqual([n1.allocatable.milliCPU, n1.requested.milliCPU, n1.podCount], [8000, 1000, 1]);
});

test('affinity terms of counted pods are grouped per distinct term with per-node counts; match counts follow pods', () => {
  const { c } = cache();
  c.addOrUpdateNode(makeNode('n1'));
  c.addOrUpdateNode(makeNode('n2'));
  const anti = { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'web' } }, topologyKey: 'kubernetes.io/hostname' }] } } };
  const web = (name: string, node: string) => info(name, { node, labels: { app: 'web' }, spec: anti });
  c.addOrUpdatePod(web('a', 'n1'));
  c.addOrUpdatePod(web('b', 'n1'));
  c.assume(info('c', { labels: { app: 'web' }, spec: anti }), 'n2');
  const groups = () => [...c.terms.groups('requiredAntiAffinity')].map((g) => Object.fromEntries(g.perNode));
  assert.deepEqual(groups(), [{ n1: 2, n2: 1 }], 'three replicas, one group');
  const pred = { key: 'web', matches: (p: { labels: Readonly<Record<string, string>> }) => p.labels['app'] === 'web' };
  assert.deepEqual(Object.fromEntries(c.matches.counts(pred)), { n1: 2, n2: 1 }, 'first ask walks the cached pods');
  c.removePod('default/a');
  c.forget('default/c');
  assert.deepEqual(groups(), [{ n1: 1 }]);
  assert.deepEqual(Object.fromEntries(c.matches.counts(pred)), { n1: 1 }, 'kept up to date without another walk');
  c.removePod('default/b');
  assert.deepEqual(groups(), []);
  assert.deepEqual(Object.fromEntries(c.matches.counts(pred)), {});
});
