// Bootstrap token → node credential exchange, and what a node identity may do (NodeRestriction).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { newBootstrapToken } from '@nodelet/api';
import { NODE_CREDENTIALS_PATH } from '@nodelet/control-plane';
import { kubectlUnavailableReason, startKubectlEnv, type KubectlEnv } from './kubectl-harness.js';

const json = 'application/json';
const node = (name: string): string => JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name }, status: { conditions: [{ type: 'Ready', status: 'True' }] } });
const pod = (name: string, nodeName: string): string =>
  JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { nodeName, containers: [{ name: 'c', image: 'busybox:1.36' }] } });
const request = (nodeName: string): string => JSON.stringify({ apiVersion: 'nodelet.io/v1', kind: 'NodeCredentialRequest', spec: { nodeName } });

describe('node credentials and NodeRestriction', () => {
  let env: KubectlEnv;
  /** A fresh bootstrap token (they are single-use: the exchange consumes them). */
  async function bootstrapToken(expiresAt = Date.now() + 3600_000): Promise<string> {
    const { token, secret } = newBootstrapToken(expiresAt);
    assert.equal((await env.api('POST', '/api/v1/namespaces/kube-system/secrets', { body: JSON.stringify(secret), contentType: json })).status, 201);
    return token;
  }
  before(async () => {
    env = await startKubectlEnv();
  });
  after(() => env?.close());

  it('a bootstrap token can only exchange itself (once) for a node credential', async () => {
    const bootstrap = await bootstrapToken();
    assert.equal((await env.api('GET', '/api/v1/pods', { token: bootstrap })).status, 403);
    const bad = await env.api('POST', NODE_CREDENTIALS_PATH, { body: request('Not_A_Name'), contentType: json, token: bootstrap });
    assert.equal(bad.status, 422);
    const r = await env.api('POST', NODE_CREDENTIALS_PATH, { body: request('node-a'), contentType: json, token: bootstrap });
    assert.equal(r.status, 201, r.body);
    const status = r.json().status;
    assert.match(status.token, /^node\.[a-z0-9]{6}\.[a-z0-9]{32}$/);
    assert.equal(status.user, 'system:node:node-a');
    assert.match(Buffer.from(status.certificateAuthorityData, 'base64').toString(), /BEGIN CERTIFICATE/);
    assert.equal((await env.api('GET', '/api/v1/nodes', { token: status.token })).status, 200);
    assert.equal((await env.api('POST', NODE_CREDENTIALS_PATH, { body: request('node-a'), contentType: json, token: bootstrap })).status, 401);
    // Re-joining with a new bootstrap token rotates: the new credential works.
    const again = (await env.api('POST', NODE_CREDENTIALS_PATH, { body: request('node-a'), contentType: json, token: await bootstrapToken() })).json().status.token;
    assert.equal((await env.api('GET', '/api/v1/nodes', { token: again })).status, 200);
  });

  it('an expired bootstrap token is rejected', async () => {
    const token = await bootstrapToken(Date.now() - 1000);
    assert.equal((await env.api('POST', NODE_CREDENTIALS_PATH, { body: request('node-x'), contentType: json, token })).status, 401);
  });

  it('a node writes only its own Node, Lease and pod status; reads what it needs', async () => {
    const token = (await env.api('POST', NODE_CREDENTIALS_PATH, { body: request('node-b'), contentType: json, token: await bootstrapToken() })).json().status.token as string;
    const as = (method: string, path: string, body?: string, contentType = json) => env.api(method, path, { token, ...(body ? { body, contentType } : {}) });
    assert.equal((await as('POST', '/api/v1/nodes', node('node-b'))).status, 201);
    assert.equal((await as('POST', '/api/v1/nodes', node('node-c'))).status, 403);
    assert.equal((await env.api('POST', '/api/v1/nodes', { body: node('node-c'), contentType: json })).status, 201);
    const statusPatch = JSON.stringify({ status: { conditions: [{ type: 'Ready', status: 'False' }] } });
    assert.equal((await as('PATCH', '/api/v1/nodes/node-b/status', statusPatch, 'application/strategic-merge-patch+json')).status, 200);
    assert.equal((await as('PATCH', '/api/v1/nodes/node-c/status', statusPatch, 'application/strategic-merge-patch+json')).status, 403);
    const lease = (name: string) => JSON.stringify({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name }, spec: { holderIdentity: name, leaseDurationSeconds: 40 } });
    assert.equal((await as('POST', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', lease('node-b'))).status, 201);
    assert.equal((await as('POST', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', lease('node-c'))).status, 403);
    assert.equal((await as('POST', '/apis/coordination.k8s.io/v1/namespaces/default/leases', lease('node-b'))).status, 403);
    for (const [n, on] of [['mine', 'node-b'], ['theirs', 'node-c']]) {
      assert.equal((await env.api('POST', '/api/v1/namespaces/default/pods', { body: pod(n!, on!), contentType: json })).status, 201);
    }
    assert.equal((await as('GET', '/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-b')).json().items.length, 1);
    const running = JSON.stringify({ status: { phase: 'Running' } });
    assert.equal((await as('PATCH', '/api/v1/namespaces/default/pods/mine/status', running, 'application/merge-patch+json')).status, 200);
    assert.equal((await as('PATCH', '/api/v1/namespaces/default/pods/theirs/status', running, 'application/merge-patch+json')).status, 403);
    assert.equal((await as('PATCH', '/api/v1/namespaces/default/pods/mine', '{"metadata":{"labels":{"a":"b"}}}', 'application/merge-patch+json')).status, 403);
    assert.equal((await as('DELETE', '/api/v1/namespaces/default/pods/theirs', '{"gracePeriodSeconds":0}')).status, 403);
    assert.equal((await as('DELETE', '/api/v1/namespaces/default/pods/mine', '{"gracePeriodSeconds":0}')).status, 200);
    const event = JSON.stringify({ apiVersion: 'v1', kind: 'Event', metadata: { name: 'e1' }, involvedObject: { kind: 'Node', name: 'node-b' }, reason: 'Starting', type: 'Normal' });
    assert.equal((await as('POST', '/api/v1/namespaces/default/events', event)).status, 201);
    assert.equal((await as('POST', '/api/v1/namespaces/default/configmaps', JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }))).status, 403);
    // The agent authenticates bearer tokens on its node API with a TokenReview.
    const review = await as('POST', '/apis/authentication.k8s.io/v1/tokenreviews', JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: env.cp.adminToken } }));
    assert.equal(review.status, 201, review.body);
    assert.deepEqual(review.json().status.user, { username: 'system:admin', groups: ['system:masters', 'system:authenticated'] });
    if (!kubectlUnavailableReason()) {
      // kubectl auth can-i sends a protobuf SelfSubjectAccessReview.
      const k = await env.newKubectl({ token });
      const can = async (...args: string[]) => (await k(['auth', 'can-i', ...args])).stdout.trim();
      assert.equal(await can('patch', 'nodes/node-b'), 'yes');
      // As upstream: the Node authorizer lets a node patch nodes; which node is NodeRestriction's
      // call, at admission (the patch of node-c above was 403) — can-i only asks the authorizer.
      assert.equal(await can('patch', 'nodes/node-c'), 'yes');
      assert.match(await can('get', 'secrets/anything', '-n', 'default'), /^no - no relationship found between node 'node-b' and this object/);
      assert.match(await can('create', 'configmaps'), /^no\b/);
      const admin = await env.newKubectl();
      assert.equal((await admin(['auth', 'can-i', 'delete', 'nodes'])).stdout.trim(), 'yes');
    }
    const forbidden = (await as('DELETE', '/api/v1/nodes/node-c')).json();
    assert.equal(forbidden.reason, 'Forbidden');
    assert.match(forbidden.message, /User "system:node:node-b" cannot delete resource "nodes"/);
  });

  it('a node lists and watches one ConfigMap its pods use by metadata.name, and nothing wider', async () => {
    const token = (await env.api('POST', NODE_CREDENTIALS_PATH, { body: request('node-d'), contentType: json, token: await bootstrapToken() })).json().status.token as string;
    const as = (path: string) => env.api('GET', path, { token });
    const usesConfigMap = (name: string, nodeName: string, cm: string): string => JSON.stringify({
      apiVersion: 'v1', kind: 'Pod', metadata: { name },
      spec: { nodeName, containers: [{ name: 'c', image: 'busybox:1.36' }], volumes: [{ name: 'v', configMap: { name: cm } }] },
    });
    for (const [pod, on, cm] of [['d-mine', 'node-d', 'cm-d'], ['d-theirs', 'node-e', 'cm-e']]) {
      assert.equal((await env.api('POST', '/api/v1/namespaces/default/configmaps', { body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: cm }, data: { k: 'v' } }), contentType: json })).status, 201);
      assert.equal((await env.api('POST', '/api/v1/namespaces/default/pods', { body: usesConfigMap(pod!, on!, cm!), contentType: json })).status, 201);
    }
    const list = await as('/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Dcm-d');
    assert.equal(list.status, 200, list.body);
    assert.deepEqual(list.json().items.map((i: { metadata: { name: string } }) => i.metadata.name), ['cm-d']);
    const watch = await as('/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1&fieldSelector=metadata.name%3Dcm-d');
    assert.equal(watch.status, 200, watch.body);
    assert.equal((await as('/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Dcm-e')).status, 403, 'a ConfigMap of another node’s pod');
    assert.equal((await as('/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1&fieldSelector=metadata.name%3Dcm-e')).status, 403);
    const unnamed = await as('/api/v1/namespaces/default/configmaps');
    assert.equal(unnamed.status, 403, 'a list without a metadata.name selector');
    assert.match(unnamed.json().message, /No Object name found/);
  });
});
