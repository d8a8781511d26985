// The DaemonSet controller and the scheduler against the real API server, with agent-less nodes.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CONTROLLERREVISIONS, DAEMONSETS, NODES, PODS, type DaemonSet, type Pod } from '@nodelet/api';
import { startRealCluster, type RealCluster } from '../testing/real-cluster.js';
import { createNodes, fakeNode, startFakeAgents, type FakeAgents } from '../testing/fake-agents.js';
import { pollUntil } from '@nodelet/base';
import { quiesce } from '../testing/quiesce.js';
import type { ControllerManagerHandle } from '../index.js';

function daemonSet(name: string, image: string, spec: Partial<NonNullable<DaemonSet['spec']>> = {}): DaemonSet {
  return {
    metadata: { name, namespace: 'default' },
    spec: {
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image }] } },
      ...spec,
    },
  };
}

const live = (ps: Pod[]): Pod[] => ps.filter((p) => !p.metadata.deletionTimestamp);

describe('daemonset controller on the real API server', () => {
  let c: RealCluster;
  let cm: ControllerManagerHandle;
  let agents: FakeAgents;
  before(async () => {
    c = await startRealCluster();
    await createNodes(c.admin, [
      fakeNode('a'),
      fakeNode('b'),
      fakeNode('tainted', { spec: { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] } }),
      fakeNode('cordoned', { spec: { unschedulable: true } }),
      fakeNode('not-ready', { spec: { taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' }] } }),
    ]);
    await c.scheduler();
    cm = await c.controllers(['daemonset', 'garbagecollector']);
    agents = startFakeAgents(c.admin);
  });
  after(async () => {
    await agents.stop();
    await c.close();
  });

  const podsOf = async (app: string): Promise<Pod[]> => live((await c.admin.resource(PODS, 'default').list({ labelSelector: `app=${app}` })).items);

  it('one pod per eligible node, pinned by matchFields and bound by the scheduler; automatic tolerations; rolling update; undo', async () => {
    const dss = c.admin.resource(DAEMONSETS, 'default');
    const created = await dss.create(daemonSet('logs', 'busybox:1'));
    assert.equal(created.metadata.annotations?.['deprecated.daemonset.template.generation'], '1');
    assert.deepEqual(created.spec?.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } });
    const pods = await pollUntil('4 bound pods', async () => {
      const ps = await podsOf('logs');
      return ps.length === 4 && ps.every((p) => p.spec?.nodeName && p.status?.phase === 'Running') ? ps : undefined;
    }, { timeoutMs: 15_000, intervalMs: 25 });
    assert.deepEqual(pods.map((p) => p.spec?.nodeName).sort(), ['a', 'b', 'cordoned', 'not-ready']);
    for (const p of pods) {
      const terms = p.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
      assert.deepEqual(terms, [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [p.spec!.nodeName!] }] }]);
      assert.deepEqual(p.spec?.tolerations?.map((t) => `${t.key}:${t.effect}`), [
        'node.kubernetes.io/not-ready:NoExecute', 'node.kubernetes.io/unreachable:NoExecute', 'node.kubernetes.io/disk-pressure:NoSchedule',
        'node.kubernetes.io/memory-pressure:NoSchedule', 'node.kubernetes.io/pid-pressure:NoSchedule', 'node.kubernetes.io/unschedulable:NoSchedule',
      ]);
      assert.equal(p.metadata.labels?.['pod-template-generation'], '1');
    }
    const ready = await pollUntil('status', async () => {
      const ds = await dss.get('logs');
      return ds.status?.numberAvailable === 4 && ds.status.observedGeneration === ds.metadata.generation ? ds : undefined;
    }, { timeoutMs: 8000, intervalMs: 25 });
    assert.deepEqual(
      [ready.status?.desiredNumberScheduled, ready.status?.currentNumberScheduled, ready.status?.numberReady, ready.status?.updatedNumberScheduled, ready.status?.numberMisscheduled],
      [4, 4, 4, 4, 0],
    );
    const rev1 = (await c.admin.resource(CONTROLLERREVISIONS, 'default').list()).items.filter((r) => r.metadata.name?.startsWith('logs-'));
    assert.equal(rev1.length, 1);
    assert.equal(rev1[0]!.revision, 1);
    const hash1 = rev1[0]!.metadata.labels?.['controller-revision-hash'];
    assert.ok(pods.every((p) => p.metadata.labels?.['controller-revision-hash'] === hash1));

    // Rolling update, maxUnavailable 1: never more than one node without an available pod.
    let worst = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const ps = await podsOf('logs');
        const withReady = new Set(ps.filter((p) => p.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True')).map((p) => p.spec?.nodeName));
        worst = Math.max(worst, 4 - withReady.size);
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    await dss.patch('logs', { spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox:2' }] } } } }, { type: 'strategic' });
    const rolled = await pollUntil('rolled out', async () => {
      const ds = await dss.get('logs');
      const s = ds.status;
      return s?.updatedNumberScheduled === 4 && s.numberAvailable === 4 && s.observedGeneration === ds.metadata.generation ? ds : undefined;
    }, { timeoutMs: 20_000, intervalMs: 25 });
    sampling = false;
    await sampler;
    assert.ok(worst <= 1, `at most maxUnavailable nodes were without a ready pod, saw ${worst}`);
    assert.equal(rolled.metadata.annotations?.['deprecated.daemonset.template.generation'], '2');
    const after2 = await podsOf('logs');
    assert.ok(after2.every((p) => p.spec?.containers[0]?.image === 'busybox:2' && p.metadata.labels?.['pod-template-generation'] === '2'));

    // Undo (what `kubectl rollout undo` patches): revision 1's template returns as revision 3.
    const old = rev1[0]!.data as Record<string, unknown>;
    await dss.patch('logs', old, { type: 'strategic' });
    await pollUntil('revision 1 renumbered 3', async () => {
      const r = await c.admin.resource(CONTROLLERREVISIONS, 'default').get(rev1[0]!.metadata.name!);
      return r.revision === 3 ? true : undefined;
    }, { timeoutMs: 8000, intervalMs: 25 });
    await pollUntil('back on busybox:1', async () => {
      const ps = await podsOf('logs');
      return ps.length === 4 && ps.every((p) => p.spec?.containers[0]?.image === 'busybox:1' && p.metadata.labels?.['controller-revision-hash'] === hash1) ? true : undefined;
    }, { timeoutMs: 20_000, intervalMs: 25 });
  });

  it('a NoExecute taint the pod does not tolerate removes it; a new node gets one', async () => {
    await c.admin.resource(NODES).patch('a', { spec: { taints: [{ key: 'evict', value: 'now', effect: 'NoExecute' }] } }, { type: 'merge' });
    await pollUntil('pod gone from a', async () => ((await podsOf('logs')).some((p) => p.spec?.nodeName === 'a') ? undefined : true), { timeoutMs: 8000, intervalMs: 25 });
    await createNodes(c.admin, [fakeNode('late')]);
    await pollUntil('pod on late', async () => ((await podsOf('logs')).some((p) => p.spec?.nodeName === 'late') ? true : undefined), { timeoutMs: 15_000, intervalMs: 25 });
    const ds = await pollUntil('desired 4 again', async () => {
      const d = await c.admin.resource(DAEMONSETS, 'default').get('logs');
      return d.status?.desiredNumberScheduled === 4 && d.status.currentNumberScheduled === 4 ? d : undefined;
    }, { timeoutMs: 8000, intervalMs: 25 });
    assert.equal(ds.status?.numberMisscheduled, 0);
  });

  it('OnDelete: a template change replaces a pod only when it is deleted; maxSurge starts the new pod first', async () => {
    const dss = c.admin.resource(DAEMONSETS, 'default');
    await dss.create(daemonSet('manual', 'busybox:1', { updateStrategy: { type: 'OnDelete' }, template: { metadata: { labels: { app: 'manual' } }, spec: { containers: [{ name: 'c', image: 'busybox:1' }], nodeSelector: { 'kubernetes.io/hostname': 'b' } } } }));
    const first = await pollUntil('pod on b', async () => (await podsOf('manual')).find((p) => p.status?.phase === 'Running'), { timeoutMs: 8000, intervalMs: 25 });
    await dss.patch('manual', { spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox:2' }] } } } }, { type: 'strategic' });
    await quiesce(cm, c.admin);
    assert.equal((await podsOf('manual'))[0]?.metadata.uid, first.metadata.uid, 'OnDelete keeps the old pod');
    await c.admin.resource(PODS, 'default').delete(first.metadata.name!);
    await pollUntil('replaced with busybox:2', async () => ((await podsOf('manual')).find((p) => p.spec?.containers[0]?.image === 'busybox:2') ? true : undefined), { timeoutMs: 8000, intervalMs: 25 });

    await dss.create(daemonSet('surge', 'busybox:1', { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } }, template: { metadata: { labels: { app: 'surge' } }, spec: { containers: [{ name: 'c', image: 'busybox:1' }], nodeSelector: { 'kubernetes.io/hostname': 'b' } } } }));
    const old = await pollUntil('surge pod', async () => (await podsOf('surge')).find((p) => p.status?.phase === 'Running'), { timeoutMs: 8000, intervalMs: 25 });
    // The overlap lasts only until the new pod is available (tens of ms with agent-less nodes), so a
    // poll can miss it: the order is read from a watch, which sees every change in sequence.
    const list = await c.admin.resource(PODS, 'default').list({ labelSelector: 'app=surge' });
    const watching = new AbortController();
    const seen: Array<{ type: string; uid: string; image?: string; deleting: boolean }> = [];
    const watched = (async () => {
      try {
        for await (const e of c.admin.resource(PODS, 'default').watch({ labelSelector: 'app=surge', resourceVersion: list.metadata.resourceVersion, signal: watching.signal })) {
          if (e.type === 'BOOKMARK' || e.type === 'ERROR') continue;
          const p = e.object as Pod;
          seen.push({ type: e.type, uid: p.metadata.uid ?? '', image: p.spec?.containers[0]?.image, deleting: !!p.metadata.deletionTimestamp });
        }
      } catch (err) {
        if (!watching.signal.aborted) throw err;
      }
    })();
    await dss.patch('surge', { spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox:2' }] } } } }, { type: 'strategic' });
    await pollUntil('old pod gone once the new one is available', async () => {
      const ps = await podsOf('surge');
      return ps.length === 1 && ps[0]!.spec?.containers[0]?.image === 'busybox:2' ? true : undefined;
    }, { timeoutMs: 8000, intervalMs: 25 });
    // A list can be ahead of the watch: wait for the watch to see the old pod go too.
    await pollUntil('the watch to see the old pod deleted', () => seen.some((e) => e.uid === old.metadata.uid && e.type === 'DELETED'), { timeoutMs: 8000, intervalMs: 25 });
    watching.abort();
    await watched;
    const created = seen.findIndex((e) => e.type === 'ADDED' && e.image === 'busybox:2');
    const oldGoes = seen.findIndex((e) => e.uid === old.metadata.uid && (e.deleting || e.type === 'DELETED'));
    assert.ok(created >= 0 && oldGoes >= 0, `the new pod was created and the old one deleted: ${JSON.stringify(seen)}`);
    assert.ok(created < oldGoes, `the new pod started beside the old one before it was deleted: ${JSON.stringify(seen)}`);
  });
});
