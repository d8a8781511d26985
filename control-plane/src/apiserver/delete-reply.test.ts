// What a DELETE answers, as kube-apiserver's generic store does: the object for the stores with
// ReturnDeletedObject (pods, services, namespaces, service accounts, PVs, PVCs, storage classes),
// a Success Status naming the object for the others, and the marked object while a deletion waits.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer, type TestApiServer } from './testing/test-server.js';

describe('DELETE replies', () => {
  let srv: TestApiServer;
  before(async () => {
    srv = await startTestApiServer();
  });
  after(() => srv?.close());

  it('a config map removed at once: a Success Status with name, resource and uid (no group for core)', async () => {
    const created = await srv.call('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'gone' } });
    assert.equal(created.status, 201);
    const r = await srv.call('DELETE', '/api/v1/namespaces/default/configmaps/gone');
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: 'gone', kind: 'configmaps', uid: created.json.metadata.uid } });
  });

  it('a deployment: the Status names its group', async () => {
    const d = { metadata: { name: 'web' }, spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } } };
    assert.equal((await srv.call('POST', '/apis/apps/v1/namespaces/default/deployments', d)).status, 201);
    const r = await srv.call('DELETE', '/apis/apps/v1/namespaces/default/deployments/web');
    assert.equal(r.status, 200);
    assert.equal(r.json.kind, 'Status');
    assert.deepEqual([r.json.details.group, r.json.details.kind, r.json.details.name], ['apps', 'deployments', 'web']);
  });

  it('a dry-run delete answers the same Status and leaves the object', async () => {
    assert.equal((await srv.call('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'kept' } })).status, 201);
    const r = await srv.call('DELETE', '/api/v1/namespaces/default/configmaps/kept?dryRun=All');
    assert.deepEqual([r.status, r.json.kind, r.json.status], [200, 'Status', 'Success']);
    assert.equal((await srv.call('GET', '/api/v1/namespaces/default/configmaps/kept')).status, 200);
  });

  it('a service (ReturnDeletedObject): the deleted Service itself', async () => {
    const svc = { metadata: { name: 'front' }, spec: { ports: [{ port: 80 }] } };
    assert.equal((await srv.call('POST', '/api/v1/namespaces/default/services', svc)).status, 201);
    const r = await srv.call('DELETE', '/api/v1/namespaces/default/services/front');
    assert.deepEqual([r.status, r.json.kind, r.json.metadata.name], [200, 'Service', 'front']);
  });

  it('a deletion that waits for a finalizer answers with the marked object', async () => {
    assert.equal((await srv.call('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'held', finalizers: ['example.com/hold'] } })).status, 201);
    const r = await srv.call('DELETE', '/api/v1/namespaces/default/configmaps/held');
    assert.deepEqual([r.status, r.json.kind, typeof r.json.metadata.deletionTimestamp], [200, 'ConfigMap', 'string']);
    const released = await srv.call('PATCH', '/api/v1/namespaces/default/configmaps/held', { metadata: { finalizers: null } }, { contentType: 'application/merge-patch+json' });
    assert.equal(released.status, 200);
  });
});
