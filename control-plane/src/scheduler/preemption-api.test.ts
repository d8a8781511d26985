// Preemption against the real API server (startControlPlane on a loopback port, SQLite in a temp
// dir), the scheduler as system:kube-scheduler, agent-less nodes played by fake agents (bound pods
// run; a deleted pod goes once its finalizers are gone): what a user sees on the victim and the preemptor.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EVENTS, PODDISRUPTIONBUDGETS, PODS, PRIORITYCLASSES, type ApiClient, type Node, type Pod } from '@nodelet/api';
import { pollUntil } from '@nodelet/base';
import { createNodes, fakeNode, startFakeAgents, type FakeAgents } from '../controllers/testing/fake-agents.js';
import { startRealCluster, type RealCluster } from '../controllers/testing/real-cluster.js';

const POLL = { timeoutMs: 15_000, intervalMs: 25 };
const HOLD = 'example.com/hold';

function oneCpuNode(name: string): Node {
  const n = fakeNode(name);
  const r = { cpu: '1', memory: '8Gi', pods: '110', 'ephemeral-storage': '50Gi' };
  return { ...n, status: { ...n.status, allocatable: r, capacity: r } };
}

/** The classes the tests use; Priority admission turns `priorityClassName` into spec.priority and preemptionPolicy. */
async function createClasses(client: ApiClient): Promise<void> {
  const classes = client.resource(PRIORITYCLASSES);
  await classes.create({ apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'mid' }, value: 5 });
  await classes.create({ apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'high' }, value: 1000 });
  await classes.create({ apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'polite' }, value: 2000, preemptionPolicy: 'Never' });
}

/** A pod asking for one cpu; without a class its priority is 0. */
function pod(name: string, priorityClassName?: string, o: { labels?: Record<string, string>; spec?: Partial<NonNullable<Pod['spec']>>; finalizers?: string[] } = {}): Pod {
  return {
    metadata: { name, namespace: 'default', labels: o.labels ?? { app: name }, ...(o.finalizers ? { finalizers: o.finalizers } : {}) },
    spec: { ...(priorityClassName ? { priorityClassName } : {}), containers: [{ name: 'c', image: 'busybox:1', resources: { requests: { cpu: '1' } } }], ...o.spec },
  };
}

describe('scheduler: preemption on the real API server', () => {
  let c: RealCluster;
  let agents: FakeAgents;
  before(async () => {
    c = await startRealCluster();
    await createClasses(c.admin);
    agents = startFakeAgents(c.admin);
  });
  after(async () => {
    await agents.stop();
    await c.close();
  });

  it('a high-priority pod preempts the low-priority pod of a full node: DisruptionTarget, graceful deletion, nomination, binding', async () => {
    await createNodes(c.admin, [oneCpuNode('full')]);
    await c.scheduler();
    const pods = c.admin.resource(PODS, 'default');
    // The finalizer keeps the victim visible while it terminates, so its condition can be read.
    await pods.create(pod('low', undefined, { finalizers: [HOLD] }));
    // Running first: the fake agent's one status write replaces the whole condition list.
    await pollUntil('low running', async () => ((await pods.get('low')).status?.phase === 'Running' ? true : undefined), POLL);

    const high = await pods.create(pod('high', 'high'));
    const victim = await pollUntil('victim terminating', async () => {
      const p = await pods.get('low');
      return p.metadata.deletionTimestamp ? p : undefined;
    }, POLL);
    const cond = victim.status?.conditions?.find((x) => x.type === 'DisruptionTarget');
    assert.deepEqual(
      [cond?.status, cond?.reason, cond?.message],
      ['True', 'PreemptionByScheduler', 'default-scheduler: preempting to accommodate a higher priority pod'],
    );
    const nominated = await pollUntil('preemptor nominated', async () => {
      const p = await pods.get('high');
      return p.status?.nominatedNodeName ? p : undefined;
    }, POLL);
    assert.equal(nominated.status?.nominatedNodeName, 'full');
    assert.equal(nominated.spec?.nodeName, undefined, 'not bound while the victim terminates');
    const preempted = await pollUntil('Preempted event', async () =>
      (await c.admin.resource(EVENTS, 'default').list()).items.find((e) => e.reason === 'Preempted' && e.involvedObject.name === 'low'), POLL);
    assert.equal(preempted.type, 'Normal');
    assert.equal(preempted.message, `Preempted by pod ${high.metadata.uid} on node full`);

    // The victim's containers stopped: it goes, and the preemptor takes the node.
    await pods.patch('low', { metadata: { finalizers: null } }, { type: 'merge' });
    const node = await pollUntil('high bound', async () => (await pods.get('high')).spec?.nodeName || undefined, POLL);
    assert.equal(node, 'full');
    await pollUntil('low gone', async () => ((await pods.list()).items.some((p) => p.metadata.name === 'low') ? undefined : true), POLL);
  });

  it('a pod with preemptionPolicy Never waits and evicts nobody', async () => {
    const pods = c.admin.resource(PODS, 'default');
    await pods.create(pod('polite', 'polite'));
    const ev = await pollUntil('FailedScheduling', async () =>
      (await c.admin.resource(EVENTS, 'default').list()).items.find((e) => e.reason === 'FailedScheduling' && e.involvedObject.name === 'polite'), POLL);
    assert.equal(ev.message, '0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.');
    const still = await pods.get('high');
    assert.equal(still.metadata.deletionTimestamp, undefined);
    assert.equal((await pods.get('polite')).status?.nominatedNodeName, undefined);
    await pods.delete('polite', { gracePeriodSeconds: 0 });
  });

  it('a nominated pod that binds to another node has its nominatedNodeName cleared', async () => {
    const pods = c.admin.resource(PODS, 'default');
    // Gated while the nomination is written, so the scheduler sees it nominated from its first attempt.
    await pods.create(pod('wanderer', undefined, { spec: { schedulingGates: [{ name: HOLD }] } }));
    await pods.patchStatus('wanderer', { status: { nominatedNodeName: 'full' } }, { type: 'merge' });
    await createNodes(c.admin, [oneCpuNode('spare')]);
    await pods.patch('wanderer', { spec: { schedulingGates: null } }, { type: 'merge' });
    const bound = await pollUntil('wanderer bound, nomination cleared', async () => {
      const p = await pods.get('wanderer');
      return p.spec?.nodeName && !p.status?.nominatedNodeName ? p : undefined;
    }, POLL);
    assert.equal(bound.spec?.nodeName, 'spare');
  });
});

describe('scheduler: preemption avoids a PodDisruptionBudget when another node has an unprotected victim', () => {
  let c: RealCluster;
  let agents: FakeAgents;
  before(async () => {
    c = await startRealCluster();
    await createClasses(c.admin);
    agents = startFakeAgents(c.admin);
  });
  after(async () => {
    await agents.stop();
    await c.close();
  });

  it('the victim is the unprotected pod, though the protected one has the lower priority', async () => {
    // No disruption controller runs: the budget's status allows no disruption, as a fresh budget does upstream.
    await c.admin.resource(PODDISRUPTIONBUDGETS, 'default').create({ metadata: { name: 'db', namespace: 'default' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'db' } } } });
    await createNodes(c.admin, [oneCpuNode('n1'), oneCpuNode('n2')]);
    await c.scheduler();
    const pods = c.admin.resource(PODS, 'default');
    // Pin each low pod to its node, so which victim sits where does not depend on scoring.
    const on = (node: string) => ({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In' as const, values: [node] }] }] } } } });
    await pods.create(pod('db', undefined, { labels: { app: 'db' }, spec: on('n1') }));
    // Without the budget, the lower-priority db would be the victim (lowest highest-victim priority).
    await pods.create(pod('web', 'mid', { labels: { app: 'web' }, spec: on('n2') }));
    await pollUntil('both bound', async () => ((await pods.list()).items.filter((p) => p.spec?.nodeName).length === 2 ? true : undefined), POLL);

    await pods.create(pod('high', 'high'));
    const node = await pollUntil('high bound', async () => (await pods.get('high')).spec?.nodeName || undefined, POLL);
    assert.equal(node, 'n2');
    const left = (await pods.list()).items.map((p) => p.metadata.name).sort();
    assert.deepEqual(left, ['db', 'high']);
  });
});
