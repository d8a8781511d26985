// ApiClient and Informer against the real `nodelet server` (a separate process), over HTTPS with
// the admin kubeconfig it writes: CRUD, patch types, errors, watch, and an informer that survives
// a dropped watch (server restart) and a forced etcd compaction (410 → relist).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasCode, pollUntil } from '@nodelet/base';
import {
  ApiClient,
  CONFIGMAPS,
  Informer,
  LEASES,
  loadKubeconfig,
  NAMESPACES,
  NODES,
  objectKey,
  PODS,
  SERVICEACCOUNTS,
  statusOf,
  type ConfigMap,
  type KubeList,
  type KubeObject,
  type ListOptions,
  type Pod,
  type ResourceType,
  type WatchEvent,
} from '@nodelet/api';
import { startEtcd } from './processes.js';
import { etcdUnavailableReason, freePort, startServerProcess } from '@nodelet/base/testing';

async function tempDir(t: { after(fn: () => Promise<void>): void }, prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}


/** Counts full lists, so a test can tell a re-watch from a relist. */
class CountingClient extends ApiClient {
  lists = 0;
  override listAll<T extends KubeObject>(r: ResourceType<T>, o?: ListOptions): Promise<KubeList<T>> {
    this.lists++;
    return super.listAll(r, o);
  }
}

const cm = (name: string, labels: Record<string, string> = {}): ConfigMap => ({ metadata: { name, namespace: 'itest', labels }, data: { k: name } });

test('client against nodelet server: kubeconfig, CRUD, patch types, errors, watch', async (t) => {
  const dir = await tempDir(t, 'nodelet-api-it-');
  const server = await startServerProcess({ dataDir: dir, port: await freePort(), args: ['--disable-controllers'] });
  t.after(() => server.stop());
  const cfg = await loadKubeconfig(server.kubeconfig);
  assert.match(cfg.server, /^https:\/\/127\.0\.0\.1:\d+$/);
  assert.ok(cfg.ca && cfg.cert && cfg.key && !cfg.token, 'kubeconfig carries the CA and the admin client certificate');
  const client = new ApiClient(cfg);
  t.after(() => client.close());

  const version = JSON.parse((await client.getRaw('/version')).toString()) as { minor: string };
  assert.equal(version.minor, '32');

  await client.create(NAMESPACES, { metadata: { name: 'itest' } });
  const cms = client.resource(CONFIGMAPS, 'itest');
  const a = await cms.create(cm('a', { app: 'web' }));
  assert.ok(a.metadata.uid && a.metadata.resourceVersion);
  await assert.rejects(cms.create(cm('a')), (e) => hasCode(e, 'ERR_ALREADY_EXISTS') && statusOf(e)?.reason === 'AlreadyExists');
  const a2 = await cms.update({ ...a, data: { k: 'v2' } });
  await assert.rejects(cms.update({ ...a, data: { k: 'stale' } }), (e) => hasCode(e, 'ERR_CONFLICT') && statusOf(e)?.code === 409);
  await assert.rejects(cms.get('missing'), (e) => hasCode(e, 'ERR_NOT_FOUND'));

  assert.equal((await cms.patch('a', { data: { m: '1' } }, { type: 'merge' })).data?.m, '1');
  assert.equal((await cms.patch('a', { data: { s: '1' } }, { type: 'strategic' })).data?.s, '1');
  assert.equal((await cms.patch('a', [{ op: 'add', path: '/data/j', value: '1' }], { type: 'json' })).data?.j, '1');
  const applied = await cms.patch('applied', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied' }, data: { x: '1' } }, { type: 'apply', fieldManager: 'itest', force: true });
  assert.equal(applied.data?.x, '1');
  await assert.rejects(cms.patch('a', { metadata: { resourceVersion: a2.metadata.resourceVersion }, data: { k: 'late' } }, { type: 'merge' }), (e) => hasCode(e, 'ERR_CONFLICT'));

  for (const n of ['b', 'c', 'd']) await cms.create(cm(n, { app: 'db' }));
  assert.deepEqual((await cms.list({ labelSelector: 'app=db' })).items.map((x) => x.metadata.name), ['b', 'c', 'd']);
  assert.deepEqual((await cms.listAll({ limit: 2 })).items.map((x) => x.metadata.name), ['a', 'applied', 'b', 'c', 'd']);
  assert.deepEqual((await cms.list({ fieldSelector: 'metadata.name!=a', labelSelector: 'app' })).items.map((x) => x.metadata.name), ['b', 'c', 'd']);

  // What the agent does: a Node with status, a Lease, a pod status patch and the final delete.
  await client.create(NODES, { metadata: { name: 'it-node' } });
  const node = await client.resource(NODES).patchStatus('it-node', { status: { conditions: [{ type: 'Ready', status: 'True' }] } }, { type: 'strategic' });
  assert.equal(node.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
  const lease = await client.resource(LEASES, 'kube-node-lease').create({ metadata: { name: 'it-node' }, spec: { holderIdentity: 'it-node', leaseDurationSeconds: 40 } });
  await client.resource(LEASES, 'kube-node-lease').update({ ...lease, spec: { ...lease.spec, renewTime: new Date().toISOString().replace(/Z$/, '000Z') /* MicroTime */ } });
  // The server runs no controllers here: the account the ServiceAccount admission looks up is made by hand.
  await client.create(SERVICEACCOUNTS, { metadata: { name: 'default', namespace: 'itest' } });
  const pods = client.resource(PODS, 'itest');
  await pods.create({ metadata: { name: 'p' }, spec: { containers: [{ name: 'main', image: 'busybox' }], nodeName: 'it-node' } } as Pod);
  const running = await pods.patchStatus('p', { status: { phase: 'Running', podIP: '10.244.0.9' } }, { type: 'merge' });
  assert.equal(running.status?.phase, 'Running');

  // Watch from a list RV: the graceful delete is MODIFIED, the node's grace-0 delete is DELETED.
  const list = await pods.list();
  const seen: WatchEvent<Pod>[] = [];
  const ac = new AbortController();
  const watching = (async () => {
    for await (const e of pods.watch({ resourceVersion: list.metadata.resourceVersion, allowWatchBookmarks: true, timeoutSeconds: 30, signal: ac.signal })) {
      seen.push(e);
      if (e.type === 'DELETED') return;
    }
  })();
  const terminating = (await pods.delete('p')) as Pod;
  assert.ok(terminating.metadata.deletionTimestamp, 'pod on a node is deleted gracefully');
  await pods.delete('p', { gracePeriodSeconds: 0, preconditions: { uid: terminating.metadata.uid } });
  await watching;
  const types = seen.filter((e) => e.type !== 'BOOKMARK').map((e) => e.type);
  assert.deepEqual(types.slice(-1), ['DELETED']);
  assert.ok(types.includes('MODIFIED'));

  // Without the admin's client certificate (which would authenticate first), a wrong token is a 401.
  const intruder = new ApiClient({ server: cfg.server, ca: cfg.ca, token: 'not-the-token' });
  t.after(() => intruder.close());
  await assert.rejects(intruder.list(PODS), (e) => hasCode(e, 'ERR_UNAUTHENTICATED') && statusOf(e)?.code === 401);
});

test('informer survives a dropped watch and relists after a forced etcd compaction', { skip: etcdUnavailableReason() ?? false }, async (t) => {
  const dir = await tempDir(t, 'nodelet-api-it-');
  const etcd = await startEtcd(join(dir, 'etcd'));
  t.after(() => etcd.stop());
  const datastore = `etcd://${etcd.endpoint.replace('http://', '')}`;
  const dataDir = join(dir, 'server');
  const port = await freePort();
  let server = await startServerProcess({ dataDir, port, datastore, args: ['--disable-controllers'] });
  t.after(() => server.stop());
  const client = new CountingClient(await loadKubeconfig(server.kubeconfig));
  t.after(() => client.close());
  await client.create(NAMESPACES, { metadata: { name: 'itest' } });
  await client.create(CONFIGMAPS, cm('a'));
  await client.create(CONFIGMAPS, cm('b'));

  const events: string[] = [];
  const informer = new Informer<ConfigMap>({ client, resource: CONFIGMAPS, namespace: 'itest', backoff: { initialMs: 100, maxMs: 500 } });
  t.after(() => informer.close());
  informer.on({
    onAdd: (o) => events.push(`add ${o.metadata.name}`),
    onUpdate: (_o, n) => events.push(`update ${n.metadata.name}`),
    onDelete: (o) => events.push(`delete ${o.metadata.name}`),
  });
  informer.start();
  await informer.waitForSync(AbortSignal.timeout(10_000));
  assert.deepEqual(events, ['add a', 'add b']);

  // 1. Dropped watch: the server restarts on the same port and store; the informer re-watches
  //    from its last resourceVersion and does not relist.
  await server.stop();
  server = await startServerProcess({ dataDir, port, datastore, args: ['--disable-controllers'] });
  await client.create(CONFIGMAPS, cm('c'));
  await pollUntil('add c after re-watch', () => events.includes('add c'), { timeoutMs: 15_000, intervalMs: 20 });
  assert.deepEqual(events, ['add a', 'add b', 'add c'], 'no duplicates, no synthetic events');
  assert.equal(client.lists, 1, 're-watched without a relist');

  // 2. Forced compaction: while the informer cannot reach its server, a second server on the
  //    same etcd changes things, then etcd is compacted. The informer's resourceVersion is gone.
  await server.stop();
  const other = await startServerProcess({ dataDir, port: await freePort(), datastore, args: ['--disable-controllers'] });
  const otherClient = new ApiClient(await loadKubeconfig(other.kubeconfig));
  await otherClient.delete(CONFIGMAPS, 'a', { namespace: 'itest' });
  await otherClient.patch(CONFIGMAPS, 'b', { metadata: { labels: { v: '2' } } }, { type: 'merge', namespace: 'itest' });
  await otherClient.create(CONFIGMAPS, cm('d'));
  otherClient.close();
  await other.stop();
  const compactedTo = await etcd.compactAll();
  assert.ok(Number(informer.lastSyncResourceVersion) < compactedTo);
  server = await startServerProcess({ dataDir, port, datastore, args: ['--disable-controllers'] });
  await pollUntil('relist events', () => events.length === 6, { timeoutMs: 15_000, intervalMs: 20 });
  assert.deepEqual(events.slice(3).sort(), ['add d', 'delete a', 'update b']);
  assert.equal(client.lists, 2, 'relisted exactly once');
  assert.deepEqual(informer.list().map(objectKey).sort(), ['itest/b', 'itest/c', 'itest/d']);
  assert.equal(informer.get('itest/b')?.metadata.labels?.v, '2');

  // And it keeps watching after the relist.
  await client.create(CONFIGMAPS, cm('e'));
  await pollUntil('add e after relist', () => events.includes('add e'), { timeoutMs: 15_000, intervalMs: 20 });
});
