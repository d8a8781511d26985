import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiVersionOf, DEPLOYMENTS, findResourceByKind, findResourceByPlural, LEASES, NAMESPACES, NODES, PODS, RESOURCES, resourcePath } from './resources.js';

test('resourcePath builds core, group, namespaced, cluster and subresource paths', () => {
  assert.equal(resourcePath({ ...PODS }), '/api/v1/pods');
  assert.equal(resourcePath({ ...PODS, namespace: 'default' }), '/api/v1/namespaces/default/pods');
  assert.equal(resourcePath({ ...PODS, namespace: 'default', name: 'web', subresource: 'status' }), '/api/v1/namespaces/default/pods/web/status');
  assert.equal(resourcePath({ ...NODES, name: 'n1', subresource: 'status' }), '/api/v1/nodes/n1/status');
  assert.equal(resourcePath({ ...NAMESPACES, name: 'kube-system' }), '/api/v1/namespaces/kube-system');
  assert.equal(resourcePath({ ...DEPLOYMENTS, namespace: 'team', name: 'web', subresource: 'scale' }), '/apis/apps/v1/namespaces/team/deployments/web/scale');
  assert.equal(resourcePath({ ...LEASES, namespace: 'kube-node-lease', name: 'n1' }), '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1');
  assert.equal(resourcePath({ ...PODS, namespace: 'default', name: 'a b/c' }), '/api/v1/namespaces/default/pods/a%20b%2Fc');
  assert.throws(() => resourcePath({ ...PODS, subresource: 'status' }), /needs an object name/);
  assert.throws(() => resourcePath({ ...PODS, name: '..' }), /invalid path segment/);
});

test('registry lookups and apiVersion', () => {
  assert.equal(apiVersionOf(PODS), 'v1');
  assert.equal(apiVersionOf(DEPLOYMENTS), 'apps/v1');
  assert.equal(findResourceByKind('apps/v1', 'ReplicaSet')?.plural, 'replicasets');
  assert.equal(findResourceByKind('v1', 'Deployment'), undefined);
  assert.equal(findResourceByPlural('coordination.k8s.io', 'leases'), LEASES);
  const keys = RESOURCES.map((r) => `${r.group}/${r.plural}`);
  assert.equal(new Set(keys).size, keys.length, 'no duplicate resources');
  for (const r of RESOURCES) assert.ok(Object.isFrozen(r), `${r.plural} frozen`);
});
