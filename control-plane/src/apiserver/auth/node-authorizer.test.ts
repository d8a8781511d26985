import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ApiObject } from '../object.js';
import { createNodeAuthorizer } from './node-authorizer.js';
import type { RequestAttributes } from './types.js';

const node1 = { name: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };
const pod = (name: string, nodeName: string, sa = 'default'): ApiObject => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
  spec: { nodeName, serviceAccountName: sa, containers: [], volumes: [{ name: 'v', configMap: { name: `cm-${name}` } }] },
});
const getConfigMap = (name: string): RequestAttributes => ({ verb: 'get', group: '', resource: 'configmaps', namespace: 'default', name });
const token = (sa: string): RequestAttributes => ({ verb: 'create', group: '', resource: 'serviceaccounts', subresource: 'token', namespace: 'default', name: sa });

test('a relationship the pod mirror shows is allowed without reading the store', async () => {
  let storeReads = 0;
  const authorize = createNodeAuthorizer({
    listPods: async () => (storeReads++, []),
    cachedPods: () => [pod('a', 'n1', 'builder'), pod('b', 'n2')],
  });
  assert.equal((await authorize(node1, getConfigMap('cm-a')))?.allowed, true);
  assert.equal((await authorize(node1, token('builder')))?.allowed, true);
  assert.equal(storeReads, 0);
});

test('when the mirror shows no relationship the store decides: a pod bound a moment ago is allowed, another node’s pod is not', async () => {
  let storeReads = 0;
  const authorize = createNodeAuthorizer({
    listPods: async () => (storeReads++, [pod('fresh', 'n1'), pod('b', 'n2', 'other')]),
    cachedPods: () => [pod('b', 'n2', 'other')],
  });
  assert.equal((await authorize(node1, getConfigMap('cm-fresh')))?.allowed, true, 'bound in the store, not yet in the mirror');
  const refused = await authorize(node1, getConfigMap('cm-b'));
  assert.equal(refused?.allowed, false, 'the configmap of a pod on another node');
  assert.match(refused!.reason!, /no relationship found between node 'n1'/);
  assert.equal((await authorize(node1, token('other')))?.allowed, false, 'the service account of a pod on another node');
  assert.equal(storeReads, 3);
});
