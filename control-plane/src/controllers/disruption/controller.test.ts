// The disruption controller against the real API server, with the Deployment and ReplicaSet
// controllers, the scheduler and a played agent: budget status from the Deployment's scale,
// evictions taking and refusing disruptions, the fail-safe, and the stale-condition cleanup.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DEPLOYMENTS, PODDISRUPTIONBUDGETS, PODS, statusOf, type ApiClient, type Deployment, type Eviction, type Pod, type PodDisruptionBudget } from '@nodelet/api';
import { hasCode, pollUntil } from '@nodelet/base';
import { startRealCluster, type RealCluster } from '../testing/real-cluster.js';
import { JumpClock } from '../testing/jump-clock.js';
import { createNodes, fakeNode, startFakeAgents, type FakeAgents } from '../testing/fake-agents.js';

const until = <T>(what: string, fn: () => Promise<T | undefined>): Promise<T> => pollUntil(what, fn, { timeoutMs: 10_000, intervalMs: 25 });

const deployment = (name: string, replicas: number): Deployment => ({
  metadata: { name, namespace: 'default' },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: 'busybox:1.36' }] } },
  },
});
const isReady = (p: Pod): boolean => !p.metadata.deletionTimestamp && !!p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
const readyPods = async (client: ApiClient, app: string): Promise<Pod[]> => (await client.resource(PODS, 'default').list({ labelSelector: `app=${app}` })).items.filter(isReady);
const evict = (client: ApiClient, name: string): Promise<unknown> =>
  client.create(PODS, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: 'default' } } as Eviction as never, { namespace: 'default', name, subresource: 'eviction' });

describe('disruption controller on the real API server', () => {
  let c: RealCluster;
  let agents: FakeAgents | undefined;
  const clock = new JumpClock();
  before(async () => {
    c = await startRealCluster();
    await createNodes(c.admin, [fakeNode('n1')]);
    await c.controllers(['deployment', 'replicaset', 'disruption'], { clock });
    await c.scheduler();
    agents = startFakeAgents(c.admin);
  });
  after(async () => {
    await agents?.stop();
    await c.close();
  });
  const budgets = (): ReturnType<ApiClient['resource']> => c.admin.resource(PODDISRUPTIONBUDGETS, 'default');
  const status = async (name: string, want: (p: PodDisruptionBudget) => boolean, what: string): Promise<PodDisruptionBudget> =>
    until(what, async () => {
      const p = (await budgets().get(name)) as PodDisruptionBudget;
      return want(p) ? p : undefined;
    });

  it('keeps status from the Deployment’s scale; an eviction takes the one allowed disruption, the next is refused until the replacement is ready', async () => {
    await c.admin.resource(DEPLOYMENTS, 'default').create(deployment('web', 3));
    await until('3 ready pods', async () => ((await readyPods(c.admin, 'web')).length === 3 ? true : undefined));
    await budgets().create({ metadata: { name: 'web', namespace: 'default' }, spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'web' } } } } as PodDisruptionBudget);
    const first = await status('web', (p) => p.status?.disruptionsAllowed === 1, 'one disruption allowed');
    const st = first.status!;
    assert.deepEqual([st.expectedPods, st.desiredHealthy, st.currentHealthy, st.observedGeneration], [3, 2, 3, 1]);
    assert.deepEqual(st.conditions?.map((x) => [x.type, x.status, x.reason]), [['DisruptionAllowed', 'True', 'SufficientPods']]);

    // Hold the played agent so the evicted pod stays terminating and its replacement unready.
    await agents!.stop();
    agents = undefined;
    const [a, b] = await readyPods(c.admin, 'web');
    await evict(c.admin, a!.metadata.name!);
    const after1 = await status('web', (p) => p.status?.currentHealthy === 2 && !p.status.disruptedPods, 'the evicted pod no longer healthy');
    assert.equal(after1.status!.disruptionsAllowed, 0);
    assert.deepEqual(after1.status!.conditions?.map((x) => [x.status, x.reason]), [['False', 'InsufficientPods']]);
    await assert.rejects(evict(c.admin, b!.metadata.name!), (err) => hasCode(err, 'ERR_UNAVAILABLE') && statusOf(err)?.code === 429 && statusOf(err)?.reason === 'TooManyRequests');
    assert.equal((await c.admin.resource(PODS, 'default').get(b!.metadata.name!)).metadata.deletionTimestamp, undefined);

    agents = startFakeAgents(c.admin);
    await status('web', (p) => p.status?.disruptionsAllowed === 1 && p.status.currentHealthy === 3, 'the replacement ready');
    await evict(c.admin, b!.metadata.name!);

    // maxUnavailable follows the Deployment's replicas, not the pods that happen to exist.
    await c.admin.resource(DEPLOYMENTS, 'default').patch('web', { spec: { replicas: 5 } }, { type: 'merge' });
    await status('web', (p) => p.status?.expectedPods === 5 && p.status.desiredHealthy === 4, 'expected 5');
  });

  it('fails safe when a selected pod’s controller cannot be found', async () => {
    const pods = c.admin.resource(PODS, 'default');
    await pods.create({
      metadata: { name: 'orphan', namespace: 'default', labels: { app: 'orphan' }, ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'gone', uid: '0a0a0a0a-0000-4000-8000-000000000000', controller: true }] },
      spec: { containers: [{ name: 'main', image: 'busybox:1.36' }] },
    } as Pod);
    await budgets().create({ metadata: { name: 'orphan', namespace: 'default' }, spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'orphan' } } } } as PodDisruptionBudget);
    const failed = await status('orphan', (p) => !!p.status?.conditions?.some((x) => x.reason === 'SyncFailed'), 'SyncFailed');
    assert.equal(failed.status!.disruptionsAllowed, 0);
    assert.deepEqual(failed.status!.conditions!.map((x) => [x.status, x.message]), [['False', 'found no controllers for pod "orphan"']]);
  });

  it('resets a DisruptionTarget condition left on a pod that was not deleted, 2 minutes after it was set', async () => {
    const pods = c.admin.resource(PODS, 'default');
    await pods.create({ metadata: { name: 'kept', namespace: 'default' }, spec: { containers: [{ name: 'main', image: 'busybox:1.36' }] } } as Pod);
    await until('running', async () => ((await pods.get('kept')).status?.phase === 'Running' ? true : undefined));
    const at = new Date(clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
    await pods.patchStatus('kept', { status: { conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI', lastTransitionTime: at }] } }, { type: 'strategic' });
    const stillTrue = (await pods.get('kept')).status?.conditions?.find((x) => x.type === 'DisruptionTarget');
    assert.equal(stillTrue?.status, 'True');
    clock.jump(121_000);
    await until('condition reset', async () => ((await pods.get('kept')).status?.conditions?.find((x) => x.type === 'DisruptionTarget')?.status === 'False' ? true : undefined));
  });
});
