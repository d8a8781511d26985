// The scheduler with pod anti-affinity, topology spread and scheduling gates, against the real API
// server (startControlPlane on a loopback port, SQLite in a temp dir) as system:kube-scheduler,
// with agent-less nodes: what a user sees in events and conditions.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EVENTS, PODS, REPLICASETS, type Node, type Pod, type ReplicaSet } from '@nodelet/api';
import { pollUntil } from '@nodelet/base';
import { createNodes, fakeNode } from '../controllers/testing/fake-agents.js';
import { startRealCluster, type RealCluster } from '../controllers/testing/real-cluster.js';

const POLL = { timeoutMs: 10_000, intervalMs: 25 };

function bigNode(name: string): Node {
  const n = fakeNode(name);
  const r = { cpu: '64', memory: '256Gi', pods: '110', 'ephemeral-storage': '500Gi' };
  return { ...n, status: { ...n.status, allocatable: r, capacity: r } };
}

describe('scheduler: required anti-affinity on a one-node cluster', () => {
  let c: RealCluster;
  before(async () => {
    c = await startRealCluster();
    await createNodes(c.admin, [fakeNode('solo')]);
    await c.scheduler();
    await c.controllers(['replicaset']);
  });
  after(() => c.close());

  it('two replicas: one binds, the other stays Pending with the scheduler’s reason', async () => {
    const rs: ReplicaSet = {
      metadata: { name: 'web', namespace: 'default' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: {
            containers: [{ name: 'c', image: 'busybox:1' }],
            affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'web' } }, topologyKey: 'kubernetes.io/hostname' }] } },
          },
        },
      },
    };
    await c.admin.resource(REPLICASETS, 'default').create(rs);
    const pods = c.admin.resource(PODS, 'default');
    const pending = await pollUntil('one bound, one Unschedulable', async () => {
      const l = (await pods.list({ labelSelector: 'app=web' })).items;
      const bound = l.filter((p) => p.spec?.nodeName);
      const waiting = l.find((p) => p.status?.conditions?.some((x) => x.type === 'PodScheduled' && x.reason === 'Unschedulable'));
      return l.length === 2 && bound.length === 1 && waiting ? waiting : undefined;
    }, POLL);
    assert.equal(pending.spec?.nodeName, undefined);
    const ev = await pollUntil('FailedScheduling', async () =>
      (await c.admin.resource(EVENTS, 'default').list()).items.find((e) => e.reason === 'FailedScheduling' && e.involvedObject.name === pending.metadata.name), POLL);
    assert.equal(
      ev.message,
      "0/1 nodes are available: 1 node(s) didn't match pod anti-affinity rules. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
    );
    const cond = pending.status?.conditions?.find((x) => x.type === 'PodScheduled');
    assert.equal(cond?.status, 'False');
    assert.equal(cond?.message, ev.message);
  });
});

describe('scheduler: topology spread and scheduling gates on two nodes', () => {
  let c: RealCluster;
  before(async () => {
    c = await startRealCluster();
    // "big" is far emptier, so without the spread constraint resource scoring would put every pod there.
    await createNodes(c.admin, [bigNode('big'), fakeNode('small')]);
    await c.scheduler();
  });
  after(() => c.close());

  const pod = (name: string, labels: Record<string, string>, spec: Partial<NonNullable<Pod['spec']>> = {}): Pod => ({
    metadata: { name, namespace: 'default', labels },
    spec: { containers: [{ name: 'c', image: 'busybox:1', resources: { requests: { cpu: '100m', memory: '64Mi' } } }], ...spec },
  });

  it('maxSkew 1 over kubernetes.io/hostname balances four pods 2/2', async () => {
    const spread = { topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule' as const, labelSelector: { matchLabels: { app: 'spread' } } }] };
    const pods = c.admin.resource(PODS, 'default');
    for (let i = 0; i < 4; i++) await pods.create(pod(`spread-${i}`, { app: 'spread' }, spread));
    const bound = await pollUntil('4 bound', async () => {
      const l = (await pods.list({ labelSelector: 'app=spread' })).items;
      return l.length === 4 && l.every((p) => p.spec?.nodeName) ? l : undefined;
    }, POLL);
    const per = new Map<string, number>();
    for (const p of bound) per.set(p.spec!.nodeName!, (per.get(p.spec!.nodeName!) ?? 0) + 1);
    assert.deepEqual(Object.fromEntries(per), { big: 2, small: 2 });
  });

  it('a pod waiting for required affinity is retried when a matching pod lands, and joins it', async () => {
    const pods = c.admin.resource(PODS, 'default');
    const follow = { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'leader' } }, topologyKey: 'kubernetes.io/hostname' }] } } };
    await pods.create(pod('follower', { app: 'follower' }, follow));
    const ev = await pollUntil('FailedScheduling', async () =>
      (await c.admin.resource(EVENTS, 'default').list()).items.find((e) => e.reason === 'FailedScheduling' && e.involvedObject.name === 'follower'), POLL);
    assert.equal(ev.message, "0/2 nodes are available: 2 node(s) didn't match pod affinity rules. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.");
    await pods.create(pod('leader', { app: 'leader' }));
    const leaderNode = await pollUntil('leader bound', async () => (await pods.get('leader')).spec?.nodeName || undefined, POLL);
    // Well before the 5-minute flush of unschedulable pods: the leader's binding re-queued it.
    const followerNode = await pollUntil('follower bound', async () => (await pods.get('follower')).spec?.nodeName || undefined, POLL);
    assert.equal(followerNode, leaderNode);
  });

  it('a gated pod is not scheduled until its gates are removed', async () => {
    const pods = c.admin.resource(PODS, 'default');
    await pods.create(pod('gated', { app: 'gated' }, { schedulingGates: [{ name: 'example.com/hold' }] }));
    // A pod created after it binds: the scheduler is running and passed the gated one by.
    await pods.create(pod('marker', { app: 'marker' }));
    await pollUntil('marker bound', async () => (await pods.get('marker')).spec?.nodeName || undefined, POLL);
    const held = await pods.get('gated');
    assert.equal(held.spec?.nodeName, undefined);
    const cond = held.status?.conditions?.find((x) => x.type === 'PodScheduled');
    assert.deepEqual([cond?.status, cond?.reason], ['False', 'SchedulingGated']);
    const events = (await c.admin.resource(EVENTS, 'default').list()).items.filter((e) => e.involvedObject.name === 'gated');
    assert.deepEqual(events, [], 'no scheduling attempt, so no event');

    await pods.patch('gated', { spec: { schedulingGates: null } }, { type: 'merge' });
    const node = await pollUntil('gated bound', async () => (await pods.get('gated')).spec?.nodeName || undefined, POLL);
    assert.ok(node === 'big' || node === 'small');
  });
});
