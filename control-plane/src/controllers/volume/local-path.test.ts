// StatefulSet claims through the scheduler's volume binding, the PV binder and the local-path
// provisioner, against the real API server with two agent-less nodes.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EVENTS, NODES, PERSISTENTVOLUMECLAIMS, PERSISTENTVOLUMES, PODS, STATEFULSETS, STORAGECLASSES, type Pod, type StatefulSet } from '@nodelet/api';
import { startRealCluster, type RealCluster } from '../testing/real-cluster.js';
import { createNodes, fakeNode, startFakeAgents, type FakeAgents } from '../testing/fake-agents.js';
import { pollUntil } from '@nodelet/base';

const web: StatefulSet = {
  metadata: { name: 'web', namespace: 'default' },
  spec: {
    replicas: 2,
    serviceName: 'nginx',
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'busybox:1', volumeMounts: [{ name: 'www', mountPath: '/data' }] }] } },
    volumeClaimTemplates: [{ metadata: { name: 'www' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
  },
};

describe('local-path volumes on the real API server', () => {
  let c: RealCluster;
  let agents: FakeAgents;
  before(async () => {
    c = await startRealCluster();
    await createNodes(c.admin, [
      fakeNode('n1', { metadata: { name: 'n1', labels: { 'kubernetes.io/hostname': 'n1' }, annotations: { 'nodelet.io/local-path-dir': '/srv/n1/local-path' } } }),
      fakeNode('n2', { metadata: { name: 'n2', labels: { 'kubernetes.io/hostname': 'n2' }, annotations: { 'nodelet.io/local-path-dir': '/srv/n2/local-path' } } }),
    ]);
    await c.scheduler();
    await c.controllers(['statefulset', 'persistentvolume-binder', 'local-path-provisioner']);
    agents = startFakeAgents(c.admin);
  });
  after(async () => {
    await agents.stop();
    await c.close();
  });

  it('claims www-web-N get the default class, wait for their pod, are provisioned on its node and bound', async () => {
    const sc = await c.admin.resource(STORAGECLASSES).get('local-path');
    assert.deepEqual([sc.provisioner, sc.volumeBindingMode, sc.reclaimPolicy, sc.metadata.annotations?.['storageclass.kubernetes.io/is-default-class']], ['nodelet.io/local-path', 'WaitForFirstConsumer', 'Delete', 'true']);
    await c.admin.resource(STATEFULSETS, 'default').create(web);
    const pods = await pollUntil('2 running pods', async () => {
      const ps = (await c.admin.resource(PODS, 'default').list({ labelSelector: 'app=web' })).items;
      return ps.length === 2 && ps.every((p) => p.status?.phase === 'Running') ? ps : undefined;
    }, { timeoutMs: 15_000, intervalMs: 25 });
    for (const p of pods) {
      const claimName = `www-${p.metadata.name}`;
      assert.deepEqual(p.spec?.volumes?.find((v) => v.name === 'www')?.persistentVolumeClaim, { claimName });
      const pvc = await c.admin.resource(PERSISTENTVOLUMECLAIMS, 'default').get(claimName);
      assert.equal(pvc.spec?.storageClassName, 'local-path');
      assert.equal(pvc.status?.phase, 'Bound');
      assert.equal(pvc.metadata.annotations?.['volume.kubernetes.io/selected-node'], p.spec?.nodeName);
      assert.equal(pvc.metadata.annotations?.['pv.kubernetes.io/bind-completed'], 'yes');
      assert.equal(pvc.metadata.labels?.app, 'web');
      const pv = await c.admin.resource(PERSISTENTVOLUMES).get(pvc.spec!.volumeName!);
      assert.equal(pv.metadata.name, `pvc-${pvc.metadata.uid}`);
      assert.deepEqual(pv.spec?.hostPath, { path: `/srv/${p.spec?.nodeName}/local-path/${pv.metadata.name}`, type: 'DirectoryOrCreate' });
      assert.deepEqual(pv.spec?.nodeAffinity?.required?.nodeSelectorTerms, [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [p.spec!.nodeName!] }] }]);
      assert.deepEqual([pv.status?.phase, pv.spec?.claimRef?.uid, pv.spec?.persistentVolumeReclaimPolicy], ['Bound', pvc.metadata.uid, 'Delete']);
    }
    const events = (await c.admin.resource(EVENTS, 'default').list()).items.filter((e) => e.involvedObject?.name === 'www-web-0').map((e) => e.reason);
    for (const r of ['WaitForFirstConsumer', 'ExternalProvisioning', 'ProvisioningSucceeded']) assert.ok(events.includes(r), `${r} in ${events.join(',')}`);
  });

  it('a pod using a bound local volume only fits the volume node; a replacement of web-1 goes back there', async () => {
    const pvc = await c.admin.resource(PERSISTENTVOLUMECLAIMS, 'default').get('www-web-1');
    const home = pvc.metadata.annotations!['volume.kubernetes.io/selected-node']!;
    const other = home === 'n1' ? 'n2' : 'n1';
    const stray: Pod = {
      metadata: { name: 'stray', namespace: 'default' },
      spec: { nodeSelector: { 'kubernetes.io/hostname': other }, containers: [{ name: 'c', image: 'busybox:1' }], volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'www-web-1' } }] },
    };
    await c.admin.resource(PODS, 'default').create(stray);
    const msg = await pollUntil('FailedScheduling', async () => (await c.admin.resource(PODS, 'default').get('stray')).status?.conditions?.find((x) => x.type === 'PodScheduled')?.message, { timeoutMs: 8000, intervalMs: 25 });
    assert.match(msg, /^0\/2 nodes are available: 1 node\(s\) didn't match Pod's node affinity\/selector, 1 node\(s\) had volume node affinity conflict\./);
    await c.admin.resource(PODS, 'default').delete('stray', { gracePeriodSeconds: 0 });
    // A PreferNoSchedule taint on the volume's node: a fresh pod would rather go elsewhere, web-1 cannot.
    await c.admin.resource(NODES).patch(home, { spec: { taints: [{ key: 'maintenance', effect: 'PreferNoSchedule' }] } }, { type: 'merge' });
    const old = await c.admin.resource(PODS, 'default').get('web-1');
    await c.admin.resource(PODS, 'default').delete('web-1');
    const back = await pollUntil('web-1 recreated and running', async () => {
      const p = await c.admin.resource(PODS, 'default').get('web-1').catch(() => undefined);
      return p && p.metadata.uid !== old.metadata.uid && p.status?.phase === 'Running' ? p : undefined;
    }, { timeoutMs: 15_000, intervalMs: 25 });
    assert.equal(back.spec?.nodeName, home);
    assert.equal((await c.admin.resource(PERSISTENTVOLUMECLAIMS, 'default').get('www-web-1')).metadata.uid, pvc.metadata.uid, 'same claim, same data');
  });

  it('deleting a claim releases its volume, which the provisioner deletes (reclaimPolicy Delete)', async () => {
    await c.admin.resource(STATEFULSETS, 'default').patch('web', { spec: { replicas: 1 } }, { type: 'merge' });
    await pollUntil('web-1 gone', async () => ((await c.admin.resource(PODS, 'default').list({ labelSelector: 'app=web' })).items.length === 1 ? true : undefined), { timeoutMs: 8000, intervalMs: 25 });
    const pvc = await c.admin.resource(PERSISTENTVOLUMECLAIMS, 'default').get('www-web-1');
    await c.admin.resource(PERSISTENTVOLUMECLAIMS, 'default').delete('www-web-1');
    await pollUntil('volume deleted', async () => ((await c.admin.resource(PERSISTENTVOLUMES).list()).items.some((v) => v.metadata.name === pvc.spec?.volumeName) ? undefined : true), { timeoutMs: 8000, intervalMs: 25 });
  });
});
