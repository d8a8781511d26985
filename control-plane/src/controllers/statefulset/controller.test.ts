// The StatefulSet controller against the real API server; the test plays the agents.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CONTROLLERREVISIONS, PERSISTENTVOLUMECLAIMS, PODS, STATEFULSETS, type Pod, type StatefulSet } from '@nodelet/api';
import { startRealCluster, type RealCluster } from '../testing/real-cluster.js';
import { createNodes, fakeNode, startFakeAgents, type FakeAgents } from '../testing/fake-agents.js';
import { pollUntil } from '@nodelet/base';
import { quiesce } from '../testing/quiesce.js';
import type { ControllerManagerHandle } from '../index.js';

function statefulSet(name: string, replicas: number, spec: Partial<NonNullable<StatefulSet['spec']>> = {}): StatefulSet {
  return {
    metadata: { name, namespace: 'default' },
    spec: {
      replicas,
      serviceName: 'nginx',
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'busybox:1' }] } },
      ...spec,
    },
  };
}

describe('statefulset controller on the real API server', () => {
  let c: RealCluster;
  let cm: ControllerManagerHandle;
  let agents: FakeAgents;
  /** Pod creations in order (names), as the informer-less test sees them appear. */
  before(async () => {
    c = await startRealCluster();
    await createNodes(c.admin, [fakeNode('a')]);
    await c.scheduler();
    cm = await c.controllers(['statefulset', 'garbagecollector']);
    agents = startFakeAgents(c.admin);
  });
  after(async () => {
    await agents.stop();
    await c.close();
  });

  const podsOf = async (app: string): Promise<Pod[]> => (await c.admin.resource(PODS, 'default').list({ labelSelector: `app=${app}` })).items;
  const names = (ps: Pod[]): string[] => ps.filter((p) => !p.metadata.deletionTimestamp).map((p) => p.metadata.name!).sort();

  it('OrderedReady: web-0, web-1, web-2 one after another, each only once the previous is ready; identity labels, hostname, subdomain', async () => {
    const sets = c.admin.resource(STATEFULSETS, 'default');
    const created = await sets.create(statefulSet('web', 3));
    assert.deepEqual([created.spec?.podManagementPolicy, created.spec?.updateStrategy?.type, created.spec?.updateStrategy?.rollingUpdate?.partition], ['OrderedReady', 'RollingUpdate', 0]);
    agents.holdBack.add('web-0');
    // Bound by the scheduler, web-0 changes no more (its agent holds it back): the controller's last word on it.
    const first = await pollUntil('web-0 scheduled', async () => (await podsOf('web')).find((p) => p.spec?.nodeName), { timeoutMs: 8000, intervalMs: 25 });
    await quiesce(cm, c.admin);
    assert.deepEqual(names(await podsOf('web')), ['web-0'], 'web-1 waits for web-0 to be ready');
    assert.deepEqual([first.spec?.hostname, first.spec?.subdomain], ['web-0', 'nginx']);
    assert.equal(first.metadata.labels?.['statefulset.kubernetes.io/pod-name'], 'web-0');
    assert.equal(first.metadata.labels?.['apps.kubernetes.io/pod-index'], '0');
    agents.holdBack.delete('web-0');
    const all = await pollUntil('3 ready', async () => {
      const s = await sets.get('web');
      return s.status?.readyReplicas === 3 ? s : undefined;
    }, { timeoutMs: 8000, intervalMs: 25 });
    assert.equal(all.status?.currentRevision, all.status?.updateRevision);
    const ps = await podsOf('web');
    const created0 = (n: string): number => Date.parse(ps.find((p) => p.metadata.name === n)!.metadata.creationTimestamp!);
    assert.ok(created0('web-0') <= created0('web-1') && created0('web-1') <= created0('web-2'));
    assert.ok(ps.every((p) => p.metadata.labels?.['controller-revision-hash'] === all.status?.updateRevision));
  });

  it('scale down removes the highest ordinal first, one at a time', async () => {
    const sets = c.admin.resource(STATEFULSETS, 'default');
    // The fake agents remove a terminating pod at once, so a poll can miss its deletion mark: the order
    // is read from a watch from the list's resourceVersion, which sees every change in sequence.
    const list = await c.admin.resource(PODS, 'default').list({ labelSelector: 'app=web' });
    const watching = new AbortController();
    const seen: string[] = [];
    const watched = (async () => {
      try {
        for await (const e of c.admin.resource(PODS, 'default').watch({ labelSelector: 'app=web', resourceVersion: list.metadata.resourceVersion, signal: watching.signal })) {
          if (e.type === 'BOOKMARK' || e.type === 'ERROR') continue;
          const p = e.object as Pod;
          if (e.type === 'DELETED') seen.push(`gone ${p.metadata.name}`);
          else if (p.metadata.deletionTimestamp && !seen.includes(`deleting ${p.metadata.name}`)) seen.push(`deleting ${p.metadata.name}`);
        }
      } catch (err) {
        if (!watching.signal.aborted) throw err;
      }
    })();
    await sets.patch('web', { spec: { replicas: 1 } }, { type: 'merge' });
    await pollUntil('1 left', async () => (names(await podsOf('web')).join() === 'web-0' && (await podsOf('web')).length === 1 ? true : undefined), { timeoutMs: 8000, intervalMs: 25 });
    // A list can be ahead of the watch: wait for the watch to see the end too.
    await pollUntil('the watch to see web-1 gone', () => seen.includes('gone web-1'), { timeoutMs: 8000, intervalMs: 25 });
    watching.abort();
    await watched;
    // Highest first, and web-1 only once web-2 is gone.
    assert.deepEqual(seen, ['deleting web-2', 'gone web-2', 'deleting web-1', 'gone web-1']);
    await sets.patch('web', { spec: { replicas: 3 } }, { type: 'merge' });
    await pollUntil('3 ready again', async () => ((await sets.get('web')).status?.readyReplicas === 3 ? true : undefined), { timeoutMs: 8000, intervalMs: 25 });
  });

  it('RollingUpdate from the highest ordinal, honouring the partition; undo renumbers the old revision', async () => {
    const sets = c.admin.resource(STATEFULSETS, 'default');
    const before = await sets.get('web');
    await sets.patch('web', { spec: { updateStrategy: { rollingUpdate: { partition: 1 } }, template: { spec: { containers: [{ name: 'c', image: 'busybox:2' }] } } } }, { type: 'strategic' });
    await pollUntil('web-1 and web-2 updated', async () => {
      const s = await sets.get('web');
      return s.status?.updatedReplicas === 2 && s.status.readyReplicas === 3 ? s : undefined;
    }, { timeoutMs: 15_000, intervalMs: 25 });
    const ps = await podsOf('web');
    const image = (n: string): string | undefined => ps.find((p) => p.metadata.name === n)?.spec?.containers[0]?.image;
    assert.deepEqual([image('web-0'), image('web-1'), image('web-2')], ['busybox:1', 'busybox:2', 'busybox:2']);
    const partial = await sets.get('web');
    assert.notEqual(partial.status?.currentRevision, partial.status?.updateRevision, 'partitioned: not complete');
    await sets.patch('web', { spec: { updateStrategy: { rollingUpdate: { partition: 0 } } } }, { type: 'merge' });
    const done = await pollUntil('all updated', async () => {
      const s = await sets.get('web');
      return s.status?.updatedReplicas === 3 && s.status?.currentRevision === s.status?.updateRevision && s.status?.readyReplicas === 3 ? s : undefined;
    }, { timeoutMs: 15_000, intervalMs: 25 });
    const revs = (await c.admin.resource(CONTROLLERREVISIONS, 'default').list()).items.filter((r) => r.metadata.name?.startsWith('web-'));
    assert.deepEqual(revs.map((r) => r.revision).sort(), [1, 2]);
    const old = revs.find((r) => r.metadata.name === before.status?.updateRevision)!;
    await sets.patch('web', old.data as Record<string, unknown>, { type: 'strategic' });
    await pollUntil('old revision is 3 and current again', async () => {
      const s = await sets.get('web');
      const r = await c.admin.resource(CONTROLLERREVISIONS, 'default').get(old.metadata.name!);
      return r.revision === 3 && s.status?.currentRevision === old.metadata.name && s.status?.readyReplicas === 3 ? true : undefined;
    }, { timeoutMs: 15_000, intervalMs: 25 });
    assert.ok(done);
  });

  it('Parallel creates every pod at once; an update of a forbidden field is refused', async () => {
    const sets = c.admin.resource(STATEFULSETS, 'default');
    // Held back before the set exists: par-0 is never ready, so par-1 and par-2 cannot have waited for it.
    agents.holdBack.add('par-0');
    await sets.create(statefulSet('par', 3, { podManagementPolicy: 'Parallel' }));
    await pollUntil('3 pods without waiting', async () => (names(await podsOf('par')).length === 3 ? true : undefined), { timeoutMs: 8000, intervalMs: 25 });
    agents.holdBack.delete('par-0');
    await assert.rejects(sets.patch('par', { spec: { serviceName: 'other' } }, { type: 'merge' }), (e: Error) => /updates to statefulset spec for fields other than/.test(e.message));
  });

  it('persistentVolumeClaimRetentionPolicy: claims of a scaled-down ordinal go with their pod (whenScaled: Delete), the rest with the set (whenDeleted: Delete); Retain keeps them', async () => {
    const sets = c.admin.resource(STATEFULSETS, 'default');
    const claims = c.admin.resource(PERSISTENTVOLUMECLAIMS, 'default');
    const withClaims = (name: string, policy: NonNullable<NonNullable<StatefulSet['spec']>['persistentVolumeClaimRetentionPolicy']>): StatefulSet => statefulSet(name, 3, {
      podManagementPolicy: 'Parallel',
      persistentVolumeClaimRetentionPolicy: policy,
      volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Mi' } } } }],
    });
    const claimNames = async (set: string): Promise<string[]> => (await claims.list()).items.filter((x) => x.metadata.name?.startsWith(`data-${set}-`) && !x.metadata.deletionTimestamp).map((x) => x.metadata.name!).sort();
    const del = await sets.create(withClaims('del', { whenDeleted: 'Delete', whenScaled: 'Delete' }));
    await sets.create(withClaims('keep', { whenDeleted: 'Retain', whenScaled: 'Retain' }));
    for (const set of ['del', 'keep']) {
      // Claims stay Pending here (no provisioner runs), so the pods are never scheduled: Parallel still makes all three.
      await pollUntil(`3 pods in ${set}`, async () => (names(await podsOf(set)).length === 3 ? true : undefined), { timeoutMs: 15_000, intervalMs: 25 });
    }
    await pollUntil('the del claims owned by their set', async () => {
      const cs = (await claims.list()).items.filter((x) => x.metadata.name?.startsWith('data-del-'));
      return cs.length === 3 && cs.every((x) => x.metadata.ownerReferences?.some((r) => r.kind === 'StatefulSet' && r.uid === del.metadata.uid)) ? true : undefined;
    }, { timeoutMs: 8000, intervalMs: 25 });
    for (const set of ['del', 'keep']) await sets.patch(set, { spec: { replicas: 1 } }, { type: 'merge' });
    await pollUntil('the claims of del-1 and del-2 collected with their pods', async () => ((await claimNames('del')).join() === 'data-del-0' ? true : undefined), { timeoutMs: 15_000, intervalMs: 50 });
    await pollUntil('keep down to one pod', async () => (names(await podsOf('keep')).join() === 'keep-0' ? true : undefined), { timeoutMs: 15_000, intervalMs: 50 });
    await quiesce(cm, c.admin);
    assert.deepEqual(await claimNames('keep'), ['data-keep-0', 'data-keep-1', 'data-keep-2'], 'Retain: scale-down keeps the claims');
    assert.ok((await claims.list()).items.filter((x) => x.metadata.name?.startsWith('data-keep-')).every((x) => !x.metadata.ownerReferences?.length), 'Retain: no owner on the claims');
    await sets.delete('del', { propagationPolicy: 'Background' });
    await pollUntil('data-del-0 collected with its set', async () => ((await claimNames('del')).length === 0 ? true : undefined), { timeoutMs: 15_000, intervalMs: 50 });
    await sets.delete('keep', { propagationPolicy: 'Background' });
    await pollUntil('keep pods gone', async () => ((await podsOf('keep')).length === 0 ? true : undefined), { timeoutMs: 15_000, intervalMs: 50 });
    await quiesce(cm, c.admin);
    assert.deepEqual(await claimNames('keep'), ['data-keep-0', 'data-keep-1', 'data-keep-2'], 'Retain: deleting the set keeps the claims');
  });
});
