// Node lifecycle, IPAM, namespaces, service accounts, endpoints and pod GC against the real API
// server (controllers/testing/real-cluster.ts), each controller with its own identity and role;
// the test plays the agents (Node and pod status). One server for the file: each test uses its
// own names and removes what later tests would see.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ENDPOINTS, ENDPOINTSLICES, LEASES, NAMESPACES, NODES, PODS, SERVICEACCOUNTS, SERVICES, type ApiClient, type Node, type Pod } from '@nodelet/api';
import { pollUntil } from '@nodelet/base';
import { FakeClock } from '@nodelet/base/testing';
import { quiesce } from './testing/quiesce.js';
import { startRealCluster, type RealCluster } from './testing/real-cluster.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

function readyNode(name: string): Node {
  return {
    metadata: { name },
    spec: {},
    status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: iso(T0), lastTransitionTime: iso(T0) }] },
  };
}

/** Creates `p` (the server sets a new pod's status) and, playing its agent, reports its status. */
async function runningPod(client: ApiClient, p: Pod): Promise<void> {
  await client.resource(PODS, 'default').create({ metadata: p.metadata, spec: p.spec });
  await client.resource(PODS, 'default').patchStatus(p.metadata.name!, { status: p.status }, { type: 'merge' });
}

/** Stops the test's controllers, then removes the pods and nodes later tests in this file would see. */
async function cleanup(client: ApiClient, pods: string[], nodes: string[], cm: { close(): Promise<void> }): Promise<void> {
  await cm.close();
  for (const p of pods) await client.resource(PODS, 'default').delete(p, { gracePeriodSeconds: 0 }).catch(() => undefined);
  for (const n of nodes) await client.resource(NODES).delete(n).catch(() => undefined);
}

describe('cluster controllers on the real API server', () => {
  let c: RealCluster;
  before(async () => {
    c = await startRealCluster();
  });
  after(() => c.close());

  it('node lifecycle: silent lease → Unknown + unreachable taints → eviction after 300 s; recovery removes taints', async (t) => {
    const client = c.admin;
    const clock = new FakeClock(T0);
    await client.resource(NODES).create(readyNode('n1'));
    await client.resource(LEASES, 'kube-node-lease').create({ metadata: { name: 'n1', namespace: 'kube-node-lease' }, spec: { holderIdentity: 'n1', leaseDurationSeconds: 40, renewTime: '2026-01-01T00:00:00.000000Z' } });
    const tolerant: Pod = { metadata: { name: 'tolerant', namespace: 'default' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'x' }], tolerations: [{ operator: 'Exists' }] }, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } };
    const plain: Pod = { metadata: { name: 'plain', namespace: 'default' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'x' }] }, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } };
    for (const p of [tolerant, plain]) await runningPod(client, p);
    const cm = await c.controllers(['nodelifecycle', 'nodeipam'], { clock });
    t.after(() => cleanup(client, ['tolerant', 'plain'], ['n1'], cm));
    const nodes = client.resource(NODES);

    // IPAM runs too: the node gets the first /24.
    const withCidr = await pollUntil('pod CIDR', async () => (await nodes.get('n1')).spec?.podCIDR, { timeoutMs: 8000, intervalMs: 25 });
    assert.equal(withCidr, '10.244.0.0/24');

    // 40 s of silence is within the 50 s grace period.
    clock.advance(40_000);
    await quiesce(cm, client);
    assert.equal((await nodes.get('n1')).status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');

    clock.advance(15_000);
    const unknown = await pollUntil('Ready=Unknown and taints', async () => {
      const n = await nodes.get('n1');
      return n.spec?.taints?.length === 2 ? n : undefined;
    }, { timeoutMs: 8000, intervalMs: 25 });
    const ready = unknown.status?.conditions?.find((c) => c.type === 'Ready');
    assert.deepEqual([ready?.status, ready?.reason], ['Unknown', 'NodeStatusUnknown']);
    assert.deepEqual(unknown.spec?.taints?.map((x) => `${x.key}:${x.effect}`), ['node.kubernetes.io/unreachable:NoSchedule', 'node.kubernetes.io/unreachable:NoExecute']);
    await pollUntil('pods marked not ready', async () => ((await client.resource(PODS, 'default').get('plain')).status?.conditions?.find((c) => c.type === 'Ready')?.status === 'False' ? true : undefined), { timeoutMs: 8000, intervalMs: 25 });

    // 300 s after the taint: the pod without tolerations (default 300 s) goes, the tolerant one stays.
    const deleting = async (): Promise<string[]> => (await client.resource(PODS, 'default').list()).items.filter((p) => p.metadata.deletionTimestamp).map((p) => p.metadata.name!);
    clock.advance(290_000);
    await quiesce(cm, client);
    assert.deepEqual(await deleting(), []);
    clock.advance(15_000);
    await pollUntil('plain evicted', async () => ((await deleting()).join() === 'plain' ? true : undefined), { timeoutMs: 8000, intervalMs: 25 });

    // The agent comes back: Ready=True → the unreachable taints go.
    const cur = await nodes.get('n1');
    const back = iso(clock.now());
    await nodes.patchStatus('n1', { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: back, lastTransitionTime: back }, ...(cur.status?.conditions ?? []).filter((c) => c.type !== 'Ready')] } }, { type: 'merge' });
    await pollUntil('taints removed', async () => ((await nodes.get('n1')).spec?.taints?.length ? undefined : true), { timeoutMs: 8000, intervalMs: 25 });
  });

  it('IPAM releases the CIDR of a deleted node; namespaces get a default ServiceAccount and are emptied on delete', async (t) => {
    const client = c.admin;
    const cm = await c.controllers(['nodeipam', 'namespace', 'serviceaccount']);
    t.after(() => cleanup(client, [], ['b', 'c'], cm));
    const nodes = client.resource(NODES);
    await nodes.create(readyNode('a'));
    await pollUntil('a cidr', async () => (await nodes.get('a')).spec?.podCIDR, { timeoutMs: 8000, intervalMs: 25 });
    await nodes.create(readyNode('b'));
    assert.equal(await pollUntil('b cidr', async () => (await nodes.get('b')).spec?.podCIDR, { timeoutMs: 8000, intervalMs: 25 }), '10.244.1.0/24');
    await nodes.delete('a');
    await quiesce(cm, client); // IPAM has seen the deletion and released a's range
    await nodes.create(readyNode('c'));
    assert.equal(await pollUntil('c cidr', async () => (await nodes.get('c')).spec?.podCIDR, { timeoutMs: 8000, intervalMs: 25 }), '10.244.0.0/24');

    // A test hold (a metadata finalizer) keeps the namespace visible once the controller has finalized it.
    t.after(() => client.resource(NAMESPACES).patch('team', { metadata: { finalizers: null } }, { type: 'merge' }).catch(() => undefined));
    await client.resource(NAMESPACES).create({ metadata: { name: 'team', finalizers: ['nodelet.test/hold'] }, spec: { finalizers: ['kubernetes'] } });
    await pollUntil('default SA', async () => (await client.resource(SERVICEACCOUNTS, 'team').list()).items.find((s) => s.metadata.name === 'default'), { timeoutMs: 8000, intervalMs: 25 });
    await client.resource(SERVICES, 'team').create({ metadata: { name: 's', namespace: 'team' }, spec: { ports: [{ port: 80 }] } });
    await client.resource(NAMESPACES).delete('team');
    const finalized = await pollUntil('namespace finalized', async () => {
      const ns = await client.resource(NAMESPACES).get('team');
      return ns.spec?.finalizers?.length === 0 ? ns : undefined;
    }, { timeoutMs: 8000, intervalMs: 25 });
    assert.equal(finalized.status?.phase, 'Terminating');
    assert.equal((await client.resource(SERVICES, 'team').list()).items.length, 0);
    assert.equal((await client.resource(SERVICEACCOUNTS, 'team').list()).items.length, 0);
  });

  it('endpoints and slices follow ready pods of a service', async (t) => {
    const client = c.admin;
    const cm = await c.controllers(['endpoints', 'endpointslice']);
    t.after(() => cleanup(client, ['p1'], [], cm));
    await client.resource(SERVICES, 'default').create({ metadata: { name: 'web', namespace: 'default' }, spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } });
    const pods = client.resource(PODS, 'default');
    await pods.create({ metadata: { name: 'p1', namespace: 'default', labels: { app: 'web' } }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'x' }] } });
    await pods.patchStatus('p1', { status: { phase: 'Running', podIP: '10.244.0.5', conditions: [{ type: 'Ready', status: 'False' }] } }, { type: 'merge' });
    const notReady = await pollUntil('notReadyAddresses', async () => (await client.resource(ENDPOINTS, 'default').get('web')).subsets?.[0]?.notReadyAddresses, { timeoutMs: 8000, intervalMs: 25 });
    assert.equal(notReady[0]?.ip, '10.244.0.5');
    await pods.patchStatus('p1', { status: { conditions: [{ type: 'Ready', status: 'True' }] } }, { type: 'merge' });
    const ep = await pollUntil('ready address', async () => (await client.resource(ENDPOINTS, 'default').get('web')).subsets?.[0]?.addresses, { timeoutMs: 8000, intervalMs: 25 });
    assert.deepEqual(ep.map((a) => a.ip), ['10.244.0.5']);
    const slice = await pollUntil('slice', async () => (await client.resource(ENDPOINTSLICES, 'default').list({ labelSelector: 'kubernetes.io/service-name=web' })).items.find((s) => s.endpoints.length === 1 && s.endpoints[0]?.conditions?.ready), { timeoutMs: 8000, intervalMs: 25 });
    assert.equal(slice.metadata.labels?.['kubernetes.io/service-name'], 'web');
    assert.deepEqual(slice.ports, [{ name: 'http', port: 8080, protocol: 'TCP' }]);
    assert.equal(slice.metadata.ownerReferences?.[0]?.kind, 'Service');
    await pods.delete('p1', { gracePeriodSeconds: 0 });
    await pollUntil('endpoints emptied', async () => ((await client.resource(ENDPOINTS, 'default').get('web')).subsets?.length === 0 ? true : undefined), { timeoutMs: 8000, intervalMs: 25 });
  });

  it('pod GC force-deletes pods of a vanished node after the quarantine', async (t) => {
    const client = c.admin;
    const clock = new FakeClock(T0);
    await client.resource(NODES).create(readyNode('alive'));
    await client.resource(PODS, 'default').create({ metadata: { name: 'on-ghost', namespace: 'default' }, spec: { nodeName: 'ghost', containers: [{ name: 'c', image: 'x' }] } });
    await client.resource(PODS, 'default').create({ metadata: { name: 'on-alive', namespace: 'default' }, spec: { nodeName: 'alive', containers: [{ name: 'c', image: 'x' }] } });
    const cm = await c.controllers(['podgc'], { clock });
    t.after(() => cleanup(client, ['on-alive'], ['alive'], cm));
    await pollUntil('pod GC started (its timer is armed after the informers synced)', () => (clock.pendingTimers > 0 ? true : undefined), { timeoutMs: 8000, intervalMs: 25 });
    clock.advance(20_000); // first check: suspect, quarantined
    await quiesce(cm, client);
    assert.equal((await client.resource(PODS, 'default').list()).items.length, 2, JSON.stringify((await client.resource(PODS, 'default').list()).items.map((p) => [p.metadata.name, p.metadata.finalizers, p.metadata.deletionTimestamp])));
    clock.advance(40_000);
    await pollUntil('orphan removed', async () => ((await client.resource(PODS, 'default').list()).items.map((p) => p.metadata.name).join() === 'on-alive' ? true : undefined), { timeoutMs: 8000, intervalMs: 25 });
  });
});
