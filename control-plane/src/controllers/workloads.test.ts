// Deployment → ReplicaSet → Pods and the garbage collector against the real API server
// (controllers/testing/real-cluster.ts), each controller with its own identity and role. One
// server for the file: each test uses its own names.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DEPLOYMENTS, PODS, REPLICASETS, type ApiClient, type Deployment, type Pod } from '@nodelet/api';
import { pollUntil } from '@nodelet/base';
import { startRealCluster, type RealCluster } from './testing/real-cluster.js';

function deployment(name: string, replicas: number, image = 'busybox:1'): Deployment {
  return {
    metadata: { name, namespace: 'default' },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image }] } },
    },
  };
}

/** Plays the agent: every pod of `app` gets Running + Ready. */
async function markReady(client: ApiClient, app: string): Promise<void> {
  const pods = await client.resource(PODS, 'default').list({ labelSelector: `app=${app}` });
  for (const p of pods.items) {
    if (p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') || p.metadata.deletionTimestamp) continue;
    await client.resource(PODS, 'default').patchStatus(p.metadata.name!, { status: { phase: 'Running', podIP: '10.244.0.9', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date().toISOString() }] } }, { type: 'merge' });
  }
}

async function activePods(client: ApiClient, app: string): Promise<Pod[]> {
  return (await client.resource(PODS, 'default').list({ labelSelector: `app=${app}` })).items.filter((p) => !p.metadata.deletionTimestamp);
}

/**
 * The images of the live (not terminating) pods of `app` after each pod change, from a watch from the
 * list's resourceVersion: every change in order, so a short peak or overlap is not missed (a sampler
 * of lists could miss it, and a busy loop of requests slows the controllers under test). A test awaits
 * its end state in `snapshots` (a list may be ahead of the watch), then `stop` ends the watch.
 */
async function watchLive(client: ApiClient, app: string): Promise<{ snapshots: string[][]; stop(): Promise<string[][]> }> {
  const list = await client.resource(PODS, 'default').list({ labelSelector: `app=${app}` });
  const image = (p: Pod): string => p.spec?.containers[0]?.image ?? '';
  const live = new Map(list.items.filter((p) => !p.metadata.deletionTimestamp).map((p) => [p.metadata.uid!, image(p)]));
  const snapshots: string[][] = [];
  const watching = new AbortController();
  const watched = (async () => {
    try {
      for await (const e of client.resource(PODS, 'default').watch({ labelSelector: `app=${app}`, resourceVersion: list.metadata.resourceVersion, signal: watching.signal })) {
        if (e.type === 'BOOKMARK' || e.type === 'ERROR') continue;
        const p = e.object as Pod;
        if (e.type === 'DELETED' || p.metadata.deletionTimestamp) live.delete(p.metadata.uid!);
        else live.set(p.metadata.uid!, image(p));
        snapshots.push([...live.values()]);
      }
    } catch (err) {
      if (!watching.signal.aborted) throw err;
    }
  })();
  return {
    snapshots,
    stop: async () => {
      watching.abort();
      await watched;
      return snapshots;
    },
  };
}

describe('workload controllers on the real API server', () => {
  let c: RealCluster;
  before(async () => {
    c = await startRealCluster();
  });
  after(() => c.close());

  it('deployment: create → RS and pods, scale, rolling update with revisions, status, delete → GC', async (t) => {
    const client = c.admin;
    const cm = await c.controllers(['deployment', 'replicaset', 'garbagecollector']);
    t.after(() => cm.close());
    const deploys = client.resource(DEPLOYMENTS, 'default');

    await deploys.create(deployment('web', 3));
    const pods = await pollUntil('3 pods', async () => ((await activePods(client, 'web')).length === 3 ? activePods(client, 'web') : undefined), { timeoutMs: 8000, intervalMs: 25 });
    const rs = (await client.resource(REPLICASETS, 'default').list()).items;
    assert.equal(rs.length, 1);
    const rsName = rs[0]!.metadata.name!;
    assert.match(rsName, /^web-[bcdfghjklmnpqrstvwxz2456789]+$/);
    assert.equal(rs[0]!.metadata.annotations?.['deployment.kubernetes.io/revision'], '1');
    for (const p of pods) {
      assert.match(p.metadata.name!, new RegExp(`^${rsName}-[bcdfghjklmnpqrstvwxz2456789]{5}$`));
      assert.deepEqual(p.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.controller, r.blockOwnerDeletion]), [['ReplicaSet', rsName, true, true]]);
      assert.equal(p.metadata.labels?.['pod-template-hash'], rsName.slice(4));
    }

    await markReady(client, 'web');
    const settled = await pollUntil('available status', async () => {
      const d = await deploys.get('web');
      return d.status?.availableReplicas === 3 && d.status.observedGeneration === d.metadata.generation ? d : undefined;
    }, { timeoutMs: 8000, intervalMs: 25 });
    assert.equal(settled.metadata.annotations?.['deployment.kubernetes.io/revision'], '1');
    assert.deepEqual(settled.status?.conditions?.map((c) => [c.type, c.status, c.reason]).sort(), [
      ['Available', 'True', 'MinimumReplicasAvailable'],
      ['Progressing', 'True', 'NewReplicaSetAvailable'],
    ]);

    // Scale through the deployment: 3 → 5 → 2.
    await deploys.patch('web', { spec: { replicas: 5 } }, { type: 'merge' });
    await pollUntil('5 pods', async () => ((await activePods(client, 'web')).length === 5 ? true : undefined), { timeoutMs: 8000, intervalMs: 25 });
    await deploys.patch('web', { spec: { replicas: 2 } }, { type: 'merge' });
    await pollUntil('2 pods', async () => ((await activePods(client, 'web')).length === 2 ? true : undefined), { timeoutMs: 8000, intervalMs: 25 });
    await markReady(client, 'web');

    // Rolling update to a new image: a second RS at revision 2; never more than 2 + 1 pods alive.
    const alive = await watchLive(client, 'web');
    await deploys.patch('web', { spec: { template: { spec: { containers: [{ name: 'main', image: 'busybox:2' }] } } } }, { type: 'merge' });
    await pollUntil('rollout done', async () => {
      await markReady(client, 'web');
      const d = await deploys.get('web');
      const ok = d.status?.updatedReplicas === 2 && d.status.replicas === 2 && d.status.availableReplicas === 2 && d.status.observedGeneration === d.metadata.generation;
      return ok ? d : undefined;
    }, { timeoutMs: 8000, intervalMs: 25 });
    await pollUntil('the watch to see the two new pods alone', () => alive.snapshots.at(-1)?.join() === 'busybox:2,busybox:2', { timeoutMs: 8000, intervalMs: 25 });
    const seen = (await alive.stop()).map((images) => images.length);
    assert.ok(seen.some((n) => n === 3), `the surge pod was seen beside the two old ones: ${seen.join()}`);
    assert.ok(seen.every((n) => n <= 3), `saw ${Math.max(...seen)} pods alive, more than replicas + maxSurge: ${seen.join()}`);
    const sets = (await client.resource(REPLICASETS, 'default').list()).items;
    assert.deepEqual(sets.map((s) => [s.metadata.annotations?.['deployment.kubernetes.io/revision'], s.spec?.replicas]).sort(), [['1', 0], ['2', 2]]);
    assert.equal((await deploys.get('web')).metadata.annotations?.['deployment.kubernetes.io/revision'], '2');

    // Delete the deployment: the garbage collector removes its ReplicaSets, then their pods.
    await deploys.delete('web', { propagationPolicy: 'Background' });
    await pollUntil('ReplicaSets gone', async () => ((await client.resource(REPLICASETS, 'default').list()).items.length === 0 ? true : undefined), { timeoutMs: 8000, intervalMs: 25 });
    await pollUntil('pods deleting', async () => ((await activePods(client, 'web')).length === 0 ? true : undefined), { timeoutMs: 8000, intervalMs: 25 });
  });

  it('garbage collector: foreground waits for blocking dependents, orphan strips references', async (t) => {
    const client = c.admin;
    const cm = await c.controllers(['garbagecollector']);
    t.after(() => cm.close());
    const rsClient = client.resource(REPLICASETS, 'default');
    const pods = client.resource(PODS, 'default');
    t.after(async () => {
      for (const p of ['kept', 'shared']) await pods.delete(p, { gracePeriodSeconds: 0 }).catch(() => undefined);
      await rsClient.delete('live').catch(() => undefined);
    });
    const owner = await rsClient.create({ metadata: { name: 'owner', namespace: 'default', finalizers: ['foregroundDeletion'] }, spec: { replicas: 0, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } } });
    const ref = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'owner', uid: owner.metadata.uid!, controller: true, blockOwnerDeletion: true };
    await pods.create({ metadata: { name: 'dep', namespace: 'default', ownerReferences: [ref] }, spec: { containers: [{ name: 'c', image: 'x' }] } });
    await rsClient.delete('owner', { propagationPolicy: 'Foreground' });
    await pollUntil('dependent deleted', async () => (await pods.list()).items.length === 0 || undefined, { timeoutMs: 8000, intervalMs: 25 });
    await pollUntil('owner finalized', async () => (await rsClient.list()).items.length === 0 || undefined, { timeoutMs: 8000, intervalMs: 25 });

    const o2 = await rsClient.create({ metadata: { name: 'o2', namespace: 'default', finalizers: ['orphan'] }, spec: { replicas: 0, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } } });
    const keepRef = { ...ref, name: 'o2', uid: o2.metadata.uid! };
    await pods.create({ metadata: { name: 'kept', namespace: 'default', ownerReferences: [keepRef] }, spec: { containers: [{ name: 'c', image: 'x' }] } });
    await rsClient.delete('o2', { propagationPolicy: 'Orphan' });
    await pollUntil('orphan finalized', async () => (await rsClient.list()).items.length === 0 || undefined, { timeoutMs: 8000, intervalMs: 25 });
    const kept = await pods.get('kept');
    assert.equal(kept.metadata.ownerReferences?.length ?? 0, 0);

    // Background: a pod whose owner never existed is collected; one with a live second owner only loses the dead ref.
    const live = await rsClient.create({ metadata: { name: 'live', namespace: 'default' }, spec: { replicas: 0, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } } });
    const liveRef = { ...ref, name: 'live', uid: live.metadata.uid!, controller: false };
    const deadRef = { ...ref, name: 'ghost', uid: 'no-such-uid' };
    await pods.create({ metadata: { name: 'orphaned', namespace: 'default', ownerReferences: [deadRef] }, spec: { containers: [{ name: 'c', image: 'x' }] } });
    await pods.create({ metadata: { name: 'shared', namespace: 'default', ownerReferences: [deadRef, liveRef] }, spec: { containers: [{ name: 'c', image: 'x' }] } });
    await pollUntil('orphaned collected', async () => ((await pods.list()).items.some((p) => p.metadata.name === 'orphaned') ? undefined : true), { timeoutMs: 8000, intervalMs: 25 });
    await pollUntil('dead ref dropped', async () => ((await pods.get('shared')).metadata.ownerReferences?.length === 1 ? true : undefined), { timeoutMs: 8000, intervalMs: 25 });
  });

  it('replicaset adopts a matching orphan pod and releases a pod it no longer selects', async (t) => {
    const client = c.admin;
    const pods = client.resource(PODS, 'default');
    await pods.create({ metadata: { name: 'stray', namespace: 'default', labels: { app: 'adopt' } }, spec: { containers: [{ name: 'c', image: 'x' }] } });
    const cm = await c.controllers(['replicaset']);
    t.after(() => cm.close());
    const rs = await client.resource(REPLICASETS, 'default').create({
      metadata: { name: 'adopt', namespace: 'default' },
      spec: { replicas: 2, selector: { matchLabels: { app: 'adopt' } }, template: { metadata: { labels: { app: 'adopt' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } },
    });
    await pollUntil('2 pods owned', async () => {
      const l = (await pods.list()).items;
      return l.length === 2 && l.every((p) => p.metadata.ownerReferences?.[0]?.uid === rs.metadata.uid) ? true : undefined;
    }, { timeoutMs: 8000, intervalMs: 25 });
    assert.equal((await pods.get('stray')).metadata.ownerReferences?.[0]?.controller, true);

    await pods.patch('stray', { metadata: { labels: { app: 'elsewhere' } } }, { type: 'merge' });
    await pollUntil('stray released and replaced', async () => {
      const stray = await pods.get('stray');
      const owned = (await pods.list()).items.filter((p) => p.metadata.ownerReferences?.some((r) => r.uid === rs.metadata.uid));
      return !stray.metadata.ownerReferences?.length && owned.length === 2 ? true : undefined;
    }, { timeoutMs: 8000, intervalMs: 25 });
  });

  it('a pod released by one ReplicaSet is adopted by another and counts as that one\'s (the claim index follows its owner)', async (t) => {
    const client = c.admin;
    const pods = client.resource(PODS, 'default');
    const sets = client.resource(REPLICASETS, 'default');
    const cm = await c.controllers(['replicaset']);
    t.after(() => cm.close());
    const rs = (name: string, app: string, replicas: number) => sets.create({
      metadata: { name, namespace: 'default' },
      spec: { replicas, selector: { matchLabels: { app } }, template: { metadata: { labels: { app } }, spec: { containers: [{ name: 'c', image: 'x' }] } } },
    });
    const first = await rs('move-a', 'move-a', 1);
    const second = await rs('move-b', 'move-b', 1);
    const ownedBy = async (uid: string): Promise<Pod[]> => (await pods.list()).items.filter((p) => !p.metadata.deletionTimestamp && p.metadata.ownerReferences?.some((r) => r.uid === uid));
    await pollUntil('one pod each', async () => ((await ownedBy(first.metadata.uid!)).length === 1 && (await ownedBy(second.metadata.uid!)).length === 1 ? true : undefined), { timeoutMs: 8000, intervalMs: 25 });
    const moved = (await ownedBy(first.metadata.uid!))[0]!.metadata.name!;
    const extra = (await ownedBy(second.metadata.uid!))[0]!.metadata.name!;
    // Relabelled: move-a releases it, move-b adopts it, so move-b has one too many and deletes one.
    await pods.patch(moved, { metadata: { labels: { app: 'move-b' } } }, { type: 'merge' });
    await pollUntil('moved pod adopted by move-b, move-a replaced it, move-b back to 1', async () => {
      const m = await pods.get(moved).catch(() => undefined);
      // Adopted (and then kept or deleted as move-b's surplus): either way not move-a's nor an orphan.
      const adopted = !m || m.metadata.deletionTimestamp || m.metadata.ownerReferences?.some((r) => r.uid === second.metadata.uid);
      return adopted && (await ownedBy(second.metadata.uid!)).length === 1 && (await ownedBy(first.metadata.uid!)).length === 1 ? true : undefined;
    }, { timeoutMs: 8000, intervalMs: 25 });
    await pollUntil('move-b status says 1', async () => ((await sets.get('move-b')).status?.replicas === 1 ? true : undefined), { timeoutMs: 8000, intervalMs: 25 });
    assert.ok(!(await pods.list()).items.some((p) => p.metadata.name === extra && p.metadata.ownerReferences?.some((r) => r.uid === first.metadata.uid)), 'move-a never claimed move-b\'s pod');
  });

  it('Recreate: all old pods go before the new ReplicaSet gets any', async (t) => {
    const client = c.admin;
    const cm = await c.controllers(['deployment', 'replicaset']);
    t.after(() => cm.close());
    const deploys = client.resource(DEPLOYMENTS, 'default');
    const d = deployment('rec', 2);
    d.spec!.strategy = { type: 'Recreate' };
    await deploys.create(d);
    await pollUntil('2 pods', async () => ((await activePods(client, 'rec')).length === 2 ? true : undefined), { timeoutMs: 8000, intervalMs: 25 });
    // No new-template pod may exist while an old one does, after any pod change.
    const live = await watchLive(client, 'rec');
    await deploys.patch('rec', { spec: { template: { spec: { containers: [{ name: 'main', image: 'busybox:2' }] } } } }, { type: 'merge' });
    await pollUntil('2 new pods', async () => {
      const ps = await activePods(client, 'rec');
      return ps.length === 2 && ps.every((p) => p.spec?.containers[0]?.image === 'busybox:2') ? true : undefined;
    }, { timeoutMs: 8000, intervalMs: 25 });
    await pollUntil('the watch to see the two new pods alone', () => live.snapshots.at(-1)?.join() === 'busybox:2,busybox:2', { timeoutMs: 8000, intervalMs: 25 });
    const seen = (await live.stop()).map((images) => ({ old: images.filter((i) => i === 'busybox:1').length, new: images.filter((i) => i === 'busybox:2').length }));
    assert.ok(seen.some((s) => s.new === 2), `the watch saw the new pods: ${JSON.stringify(seen)}`);
    assert.ok(seen.every((s) => s.old === 0 || s.new === 0), `old and new pods overlapped: ${JSON.stringify(seen.filter((s) => s.old && s.new))}`);
  });
});
