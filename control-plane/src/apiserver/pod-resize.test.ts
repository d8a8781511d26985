// pods/resize (kubectl patch --subresource resize): refused with a clear 405, since the agent
// does not apply new resources to running containers; a plain update of resources stays 422.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer, type TestApiServer } from './testing/test-server.js';

describe('pods/resize', () => {
  let srv: TestApiServer;
  const pod = { metadata: { name: 'r' }, spec: { containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '100m' }, limits: { cpu: '200m' } } }] } };
  const patch = { spec: { containers: [{ name: 'c', resources: { requests: { cpu: '150m' }, limits: { cpu: '200m' } } }] } };

  before(async () => {
    srv = await startTestApiServer();
    assert.equal((await srv.call('POST', '/api/v1/namespaces/default/pods', pod)).status, 201);
  });
  after(async () => {
    await srv?.close();
  });

  it('every method on the subresource is 405 and says why; the pod is unchanged', async () => {
    for (const [method, body] of [['PATCH', patch], ['PUT', pod], ['GET', undefined]] as const) {
      const r = await srv.call(method, '/api/v1/namespaces/default/pods/r/resize', body, { contentType: method === 'PATCH' ? 'application/strategic-merge-patch+json' : undefined });
      assert.equal(r.status, 405, method);
      assert.equal(r.json.reason, 'MethodNotAllowed');
      assert.match(r.json.message, /in-place pod resize \(pods\/resize\) is not supported/);
    }
    const got = await srv.call('GET', '/api/v1/namespaces/default/pods/r');
    assert.equal(got.json.spec.containers[0].resources.requests.cpu, '100m');
  });

  it('is not advertised in discovery', async () => {
    const list = await srv.call('GET', '/api/v1');
    assert.ok(!list.json.resources.some((r: { name: string }) => r.name === 'pods/resize'));
  });

  it('a plain patch of container resources stays refused by pod update validation', async () => {
    const r = await srv.call('PATCH', '/api/v1/namespaces/default/pods/r', patch, { contentType: 'application/strategic-merge-patch+json' });
    assert.equal(r.status, 422);
  });
});
