// The Node authorizer and NodeRestriction through the real API machinery, for two node
// identities: each may change only what belongs to it, with upstream's messages.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startAuthTestServer, type AuthTestServer } from '../auth/testing/auth-server.js';

const mergePatch = { 'Content-Type': 'application/merge-patch+json' };

describe('Node authorizer + NodeRestriction', () => {
  let t: AuthTestServer;
  let node1Uid = '';
  const patch = (who: 'node1' | 'node2' | 'admin', path: string, body: unknown) =>
    t.call(who, 'PATCH', path, body, mergePatch);

  before(async () => {
    t = await startAuthTestServer();
    for (const n of ['node-1', 'node-2']) {
      const r = await t.call('admin', 'POST', '/api/v1/nodes', { metadata: { name: n, labels: { 'kubernetes.io/hostname': n } }, spec: { taints: [{ key: 'dedicated', value: 'x', effect: 'NoSchedule' }] } });
      assert.equal(r.status, 201);
      if (n === 'node-1') node1Uid = r.json.metadata.uid;
    }
    await t.call('admin', 'POST', '/api/v1/namespaces/default/secrets', { metadata: { name: 'app-secret' }, stringData: { k: 'v' } });
    await t.call('admin', 'POST', '/api/v1/namespaces/default/secrets', { metadata: { name: 'other-secret' }, stringData: { k: 'v' } });
    for (const [name, node] of [['on-1', 'node-1'], ['on-2', 'node-2']]) {
      const r = await t.call('admin', 'POST', '/api/v1/namespaces/default/pods', {
        metadata: { name, labels: { app: 'web' } },
        spec: { nodeName: node, containers: [{ name: 'c', image: 'busybox', env: [{ name: 'S', valueFrom: { secretKeyRef: { name: node === 'node-1' ? 'app-secret' : 'other-secret', key: 'k' } } }] }] },
      });
      assert.equal(r.status, 201, JSON.stringify(r.json));
    }
  });
  after(() => t.close());

  it('a node may not give itself restricted labels, drop its taints, set its podCIDR, or touch another node', async () => {
    const role = await patch('node1', '/api/v1/nodes/node-1', { metadata: { labels: { 'node-role.kubernetes.io/control-plane': '' } } });
    assert.equal(role.status, 403);
    assert.equal(role.json.message, 'nodes "node-1" is forbidden: is not allowed to modify labels: node-role.kubernetes.io/control-plane');
    assert.equal((await patch('node1', '/api/v1/nodes/node-1', { metadata: { labels: { 'node-restriction.kubernetes.io/trusted': 'yes' } } })).status, 403);
    const taints = await patch('node1', '/api/v1/nodes/node-1', { spec: { taints: null } });
    assert.equal(taints.status, 403);
    assert.equal(taints.json.message, 'nodes "node-1" is forbidden: node "node-1" is not allowed to modify taints');
    const cidr = await patch('node1', '/api/v1/nodes/node-1', { spec: { podCIDR: '10.244.9.0/24', podCIDRs: ['10.244.9.0/24'] } });
    assert.equal(cidr.status, 403);
    assert.match(cidr.json.message, /not allowed to modify spec.podCIDR/);
    const other = await patch('node1', '/api/v1/nodes/node-2', { metadata: { labels: { x: 'y' } } });
    assert.equal(other.status, 403);
    assert.equal(other.json.message, 'nodes "node-2" is forbidden: node "node-1" is not allowed to modify node "node-2"');
    // What a kubelet does set is fine.
    assert.equal((await patch('node1', '/api/v1/nodes/node-1', { metadata: { labels: { 'topology.kubernetes.io/zone': 'a', 'example.com/rack': 'r1' } } })).status, 200);
    assert.equal((await patch('node1', '/api/v1/nodes/node-1/status', { status: { conditions: [{ type: 'Ready', status: 'True' }] } })).status, 200);
  });

  it('a node may not register with restricted labels or a podCIDR', async () => {
    const r = await t.call('node1', 'POST', '/api/v1/nodes', { metadata: { name: 'node-1x', labels: { 'node-role.kubernetes.io/master': '' } } });
    assert.equal(r.status, 403);
    const own = await t.call({ token: 'tok-node1' }, 'POST', '/api/v1/nodes', { metadata: { name: 'node-2' } });
    assert.equal(own.status, 403, 'only its own name');
  });

  it('pods/status: only bound pods, never their labels or annotations', async () => {
    assert.equal((await patch('node1', '/api/v1/namespaces/default/pods/on-1/status', { status: { phase: 'Running' } })).status, 200);
    const relabel = await patch('node1', '/api/v1/namespaces/default/pods/on-1/status', { metadata: { labels: { app: 'db' } }, status: { phase: 'Running' } });
    assert.equal(relabel.status, 403);
    assert.equal(relabel.json.message, 'pods "on-1" is forbidden: node "node-1" cannot update labels through pod status');
    const annotate = await patch('node1', '/api/v1/namespaces/default/pods/on-1/status', { metadata: { annotations: { a: 'b' } } });
    assert.equal(annotate.status, 403);
    const foreign = await patch('node1', '/api/v1/namespaces/default/pods/on-2/status', { status: { phase: 'Failed' } });
    assert.equal(foreign.status, 403);
    assert.match(foreign.json.message, /can only update pod status for pods with spec.nodeName set to itself/);
    const labels = (await t.call('admin', 'GET', '/api/v1/namespaces/default/pods/on-1')).json.metadata.labels;
    assert.deepEqual(labels, { app: 'web' });
  });

  it('pods: delete only bound ones, create only mirror pods owned by its Node', async () => {
    const del = await t.call('node1', 'DELETE', '/api/v1/namespaces/default/pods/on-2');
    assert.equal(del.status, 403);
    assert.match(del.json.message, /can only delete pods with spec.nodeName set to itself/);
    const plain = await t.call('node1', 'POST', '/api/v1/namespaces/default/pods', { metadata: { name: 'sneaky' }, spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'x' }] } });
    assert.equal(plain.status, 403);
    assert.match(plain.json.message, /can only create mirror pods/);
    const mirror = (extra: object) => ({
      metadata: { name: 'static-web', annotations: { 'kubernetes.io/config.mirror': 'h' }, ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'node-1', uid: node1Uid, controller: true }] },
      spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'x' }], ...extra },
    });
    const withSecret = await t.call('node1', 'POST', '/api/v1/namespaces/default/pods', mirror({ volumes: [{ name: 's', secret: { secretName: 'app-secret' } }] }));
    assert.equal(withSecret.status, 403);
    assert.match(withSecret.json.message, /can not create pods that reference secrets/);
    // An ephemeral volume's claim would be `static-web-data`: whatever claim has that name.
    const withEphemeral = await t.call('node1', 'POST', '/api/v1/namespaces/default/pods', mirror({ volumes: [{ name: 'data', ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } } } }] }));
    assert.equal(withEphemeral.status, 403, JSON.stringify(withEphemeral.json));
    assert.match(withEphemeral.json.message, /can not create pods that reference persistentvolumeclaims/);
    assert.equal((await t.call('node1', 'POST', '/api/v1/namespaces/default/pods', mirror({}))).status, 201);
  });

  it('secrets: only those a pod bound to the node references', async () => {
    assert.equal((await t.call('node1', 'GET', '/api/v1/namespaces/default/secrets/app-secret')).status, 200);
    const other = await t.call('node1', 'GET', '/api/v1/namespaces/default/secrets/other-secret');
    assert.equal(other.status, 403);
    assert.match(other.json.message, /no relationship found between node 'node-1' and this object/);
    assert.equal((await t.call('node1', 'GET', '/api/v1/namespaces/default/secrets')).status, 403, 'no listing');
  });

  it('persistentvolumeclaims: only those its pods use, and of their status only capacity and conditions', async () => {
    for (const [claim, node] of [['data-1', 'node-1'], ['data-2', 'node-2']]) {
      const pvc = await t.call('admin', 'POST', '/api/v1/namespaces/default/persistentvolumeclaims', {
        metadata: { name: claim }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'manual', volumeName: `pv-${claim}` },
      });
      assert.equal(pvc.status, 201, JSON.stringify(pvc.json));
      assert.equal((await t.call('admin', 'PATCH', `/api/v1/namespaces/default/persistentvolumeclaims/${claim}/status`, { status: { phase: 'Bound', capacity: { storage: '1Gi' } } }, mergePatch)).status, 200);
      const pod = await t.call('admin', 'POST', '/api/v1/namespaces/default/pods', {
        metadata: { name: `uses-${claim}` },
        spec: { nodeName: node, containers: [{ name: 'c', image: 'busybox' }], volumes: [{ name: 'd', persistentVolumeClaim: { claimName: claim } }] },
      });
      assert.equal(pod.status, 201, JSON.stringify(pod.json));
      const pv = await t.call('admin', 'POST', '/api/v1/persistentvolumes', {
        metadata: { name: `pv-${claim}` },
        spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], storageClassName: 'manual', hostPath: { path: `/tmp/${claim}` }, claimRef: { namespace: 'default', name: claim } },
      });
      assert.equal(pv.status, 201, JSON.stringify(pv.json));
    }
    assert.equal((await t.call('node1', 'GET', '/api/v1/namespaces/default/persistentvolumeclaims/data-1')).status, 200);
    assert.equal((await t.call('node1', 'GET', '/api/v1/persistentvolumes/pv-data-1')).status, 200);
    const foreignClaim = await t.call('node1', 'GET', '/api/v1/namespaces/default/persistentvolumeclaims/data-2');
    assert.equal(foreignClaim.status, 403);
    assert.match(foreignClaim.json.message, /no relationship found between node 'node-1' and this object/);
    assert.equal((await t.call('node1', 'GET', '/api/v1/persistentvolumes/pv-data-2')).status, 403);
    const foreignStatus = await patch('node1', '/api/v1/namespaces/default/persistentvolumeclaims/data-2/status', { status: { phase: 'Lost' } });
    assert.equal(foreignStatus.status, 403, 'another node’s pods’ claim');
    // A kubelet reports a resized filesystem: capacity and conditions.
    const resized = await patch('node1', '/api/v1/namespaces/default/persistentvolumeclaims/data-1/status', {
      status: { capacity: { storage: '2Gi' }, conditions: [{ type: 'FileSystemResizePending', status: 'False' }] },
    });
    assert.equal(resized.status, 200, JSON.stringify(resized.json));
    const lost = await patch('node1', '/api/v1/namespaces/default/persistentvolumeclaims/data-1/status', { status: { phase: 'Lost' } });
    assert.equal(lost.status, 403);
    assert.equal(lost.json.message, 'persistentvolumeclaims "data-1" is forbidden: node "node-1" is not allowed to update fields other than status.capacity and status.conditions: status.phase');
    const relabel = await patch('node1', '/api/v1/namespaces/default/persistentvolumeclaims/data-1/status', { metadata: { labels: { owner: 'node-1' } } });
    assert.equal(relabel.status, 403);
    assert.match(relabel.json.message, /metadata.labels/);
    const stored = (await t.call('admin', 'GET', '/api/v1/namespaces/default/persistentvolumeclaims/data-1')).json;
    assert.equal(stored.status.phase, 'Bound');
    assert.deepEqual(stored.status.capacity, { storage: '2Gi' });
  });

  it('leases: only its own, in kube-node-lease', async () => {
    const lease = (name: string) => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name }, spec: { holderIdentity: name } });
    const other = await t.call('node1', 'POST', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', lease('node-2'));
    assert.equal(other.status, 403);
    assert.match(other.json.message, /can only access node lease with the same name as the requesting node/);
    assert.equal((await t.call('node1', 'POST', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', lease('node-1'))).status, 201);
    assert.equal((await t.call('node1', 'GET', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler')).status, 403);
  });
});
