// The registry's images at /nodelet/registry/catalog through the real API machinery (plain HTTP,
// port 0, SQLite in a temp dir): pull references read from the store per request, RBAC deciding
// who reads them (cluster-admin, or a ClusterRole granting the URL), 404 without a registry.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MediaType, tagImage } from '@nodelet/oci';
import { tinyImageStore } from '@nodelet/oci/testing';
import { IMAGE_CATALOGUE_PATH } from './image-catalogue.js';
import { startTestApiServer, TEST_ADMIN_TOKEN as ADMIN, type TestApiServer } from './testing/test-server.js';

const USER = 'user-token';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';

describe('the image catalogue endpoint', () => {
  let srv: TestApiServer;
  let bare: TestApiServer;
  let store: Awaited<ReturnType<typeof tinyImageStore>>;

  before(async () => {
    store = await tinyImageStore('lab/web', 'v1');
    srv = await startTestApiServer({ tokens: new Map([[USER, { name: 'alice', groups: ['system:authenticated'] }]]), imageCatalogue: () => ({ registry: '127.0.0.1:5999', root: store.dir }) });
    bare = await startTestApiServer({});
  });
  after(async () => {
    await srv?.close();
    await bare?.close();
    await store?.remove();
  });

  it('lists the store as pull references through the registry, read per request', async () => {
    const first = await srv.call('GET', IMAGE_CATALOGUE_PATH, undefined, { token: ADMIN });
    assert.equal(first.status, 200);
    assert.deepEqual(first.json, { registry: '127.0.0.1:5999', images: ['127.0.0.1:5999/lab/web:v1'] });
    // A tag added to the store shows without a restart (`nodelet image import` on a running lab).
    await tagImage(store.dir, 'busybox', 'latest', { mediaType: MediaType.ociManifest, digest: store.manifestDigest, size: 1 });
    assert.deepEqual((await srv.call('GET', IMAGE_CATALOGUE_PATH, undefined, { token: ADMIN })).json.images, ['127.0.0.1:5999/busybox:latest', '127.0.0.1:5999/lab/web:v1']);
  });

  it('RBAC decides: 403 in upstream wording without a grant, 200 with a ClusterRole naming the URL', async () => {
    const denied = await srv.call('GET', IMAGE_CATALOGUE_PATH, undefined, { token: USER });
    assert.equal(denied.status, 403);
    assert.equal(denied.json.message, `forbidden: User "alice" cannot get path "${IMAGE_CATALOGUE_PATH}"`);
    const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'image-catalogue' }, rules: [{ verbs: ['get'], nonResourceURLs: [IMAGE_CATALOGUE_PATH] }] };
    assert.equal((await srv.call('POST', `${RBAC}/clusterroles`, role, { token: ADMIN })).status, 201);
    const binding = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'alice-images' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'image-catalogue' }, subjects: [{ kind: 'User', name: 'alice' }] };
    assert.equal((await srv.call('POST', `${RBAC}/clusterrolebindings`, binding, { token: ADMIN })).status, 201);
    const allowed = await srv.call('GET', IMAGE_CATALOGUE_PATH, undefined, { token: USER });
    assert.equal(allowed.status, 200);
    assert.ok(allowed.json.images.includes('127.0.0.1:5999/lab/web:v1'));
  });

  it('a server running no registry answers 404 with why', async () => {
    const none = await bare.call('GET', IMAGE_CATALOGUE_PATH, undefined, { token: ADMIN });
    assert.equal(none.status, 404);
    assert.equal(none.json.message, 'this server runs no image registry');
  });
});
