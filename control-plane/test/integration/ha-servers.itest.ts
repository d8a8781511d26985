// Two `nodelet server` processes on one etcd (docs/ha.md): exactly one scheduler and one
// controller manager lead; a list on one server and a watch on the other from its
// resourceVersion see exactly the later changes; SIGKILL of the leader → the other server takes
// both Leases within 20 s (kube's defaults: 15 s lease) and schedules a new Deployment's pods.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ApiClient, loadKubeconfig, CONFIGMAPS, DEPLOYMENTS, ENDPOINTS, LEASES, NAMESPACES, NODES, PODS, type Lease } from '@nodelet/api';
import { pollUntil } from '@nodelet/base';
import { cleanups, copyClusterSecrets, freePort, startServerProcess, type ServerProcess } from '@nodelet/base/testing';
import { fakeNode } from '../../src/controllers/testing/fake-agents.js';
import { etcdUnavailableReason, startTestEtcd } from '../../src/storage/testing/etcd.js';

const skip = etcdUnavailableReason() ?? false;

test('two servers on one etcd: one leader per lease, cross-server watch, fail-over after SIGKILL', { skip, timeout: 240_000 }, async (t) => {
  const cleanup = cleanups(t);
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-ha-'));
  cleanup(() => rm(dir, { recursive: true, force: true }));
  const etcd = await startTestEtcd();
  cleanup(() => etcd.stop());
  // Same port on two loopback addresses, as servers on two machines (the kubernetes endpoints need one port).
  const port = await freePort();
  const server = (name: string, bindAddress: string): Promise<ServerProcess> => startServerProcess({
    dataDir: join(dir, name), bindAddress, port, datastore: `etcd://${etcd.endpoint.replace('http://', '')}`, args: ['--node-monitor-grace-period', '5m'],
  });
  const a = await server('a', '127.0.0.1');
  cleanup(() => a.stop());
  // a's admin.kubeconfig (a client certificate of the shared CA) is the admin on both servers.
  const admin = await loadKubeconfig(join(dir, 'a', 'admin.kubeconfig'));
  const clientA = new ApiClient({ ...admin, server: a.url, servers: [] });
  cleanup(() => clientA.close());
  const holders = async (client: ApiClient): Promise<Record<string, Lease['spec']>> => {
    const out: Record<string, Lease['spec']> = {};
    // The scheduled snapshots (docs/backup.md) campaign for a Lease of their own, like the other two.
    for (const name of ['kube-scheduler', 'kube-controller-manager', 'nodelet-snapshot']) {
      out[name] = await client.get<Lease>(LEASES, name, { namespace: 'kube-system' }).then((l) => l.spec, () => undefined);
    }
    return out;
  };
  await pollUntil('a leads all three', async () => Object.values(await holders(clientA)).every((s) => s?.holderIdentity === a.leaderIdentity), { timeoutMs: 20_000 });

  await copyClusterSecrets(join(dir, 'a'), join(dir, 'b'));
  const b: ServerProcess = await server('b', '127.0.0.2');
  cleanup(() => b.stop());
  const clientB = new ApiClient({ ...admin, server: b.url, servers: [] });
  cleanup(() => clientB.close());

  // 1. One leader per lease: b stands by (it never logs an acquisition) while a renews.
  const renewed = (await holders(clientB))['kube-scheduler']!.renewTime;
  await pollUntil('a renews', async () => (await holders(clientB))['kube-scheduler']!.renewTime !== renewed, { timeoutMs: 10_000 });
  assert.equal(b.records('Successfully acquired lease').length, 0, 'b stands by');
  // Three leases: the scheduler's, the controller manager's and the scheduled snapshots' (docs/backup.md).
  assert.deepEqual(a.records('Successfully acquired lease').map((l) => l.lease).sort(), ['kube-system/kube-controller-manager', 'kube-system/kube-scheduler', 'kube-system/nodelet-snapshot'], 'a acquired each lease once');
  assert.ok(b.records('Attempting to acquire leader lease').length >= 3, 'b campaigns for all three');
  assert.ok(a.leaderIdentity !== b.leaderIdentity && /_[0-9a-f-]{36}$/.test(b.leaderIdentity));

  // 2. Resource versions are etcd's: list on a, watch on b from that version → exactly the later changes.
  await clientA.create(NAMESPACES, { metadata: { name: 'ha' } });
  // Labelled, so the root CA publisher's kube-root-ca.crt stays out of the list and the watch.
  const cm = (name: string) => ({ metadata: { name, namespace: 'ha', labels: { ha: 'rv' } } });
  for (const n of ['before-1', 'before-2']) await clientA.create(CONFIGMAPS, cm(n));
  const listed = await clientA.list(CONFIGMAPS, { namespace: 'ha', labelSelector: 'ha=rv' });
  assert.deepEqual(listed.items.map((c) => c.metadata.name), ['before-1', 'before-2']);
  await clientB.create(CONFIGMAPS, cm('after-b'));
  await clientA.create(CONFIGMAPS, cm('after-a'));
  await clientB.delete(CONFIGMAPS, 'before-1', { namespace: 'ha' });
  const seen: string[] = [];
  const stopWatch = new AbortController();
  for await (const e of clientB.watch(CONFIGMAPS, { namespace: 'ha', labelSelector: 'ha=rv', resourceVersion: listed.metadata.resourceVersion, signal: stopWatch.signal, timeoutSeconds: 30 })) {
    seen.push(`${e.type} ${(e.object.metadata as { name?: string } | undefined)?.name}`);
    if (seen.length === 3) break;
  }
  stopWatch.abort();
  assert.deepEqual(seen, ['ADDED after-b', 'ADDED after-a', 'DELETED before-1']);

  // 3. Both servers are in the kubernetes endpoints.
  await pollUntil('both endpoints', async () => {
    const ep = await clientB.get(ENDPOINTS, 'kubernetes', { namespace: 'default' });
    return JSON.stringify(ep.subsets?.[0]?.addresses?.map((x) => x.ip)) === '["127.0.0.1","127.0.0.2"]';
  }, { timeoutMs: 20_000 });

  // 4. SIGKILL the leader: b takes the three leases within 20 s and acts (a Deployment's pods are scheduled).
  await clientB.create(NODES, fakeNode('ha-node'));
  await a.kill();
  const killedAt = Date.now();
  await pollUntil('b leads all three', async () => Object.values(await holders(clientB)).every((s) => s?.holderIdentity === b.leaderIdentity), { timeoutMs: 25_000, intervalMs: 200 });
  const takeoverMs = Date.now() - killedAt;
  assert.ok(takeoverMs < 20_000, `took over in ${takeoverMs} ms`);
  const after = await holders(clientB);
  assert.equal(after['kube-scheduler']!.leaseTransitions, 1);
  assert.equal(after['kube-controller-manager']!.leaseTransitions, 1);
  await clientB.create(DEPLOYMENTS, {
    metadata: { name: 'web', namespace: 'default' },
    spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } },
  });
  await pollUntil('pods scheduled', async () => {
    const pods = (await clientB.list(PODS, { namespace: 'default', labelSelector: 'app=web' })).items;
    return pods.length === 2 && pods.every((p) => p.spec?.nodeName === 'ha-node');
  }, { timeoutMs: 30_000 });
  t.diagnostic(`fail-over: leases taken ${takeoverMs} ms after SIGKILL`);
});
