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
    findObject: async () => undefined,
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
    findObject: async () => undefined,
  });
  assert.equal((await authorize(node1, getConfigMap('cm-fresh')))?.allowed, true, 'bound in the store, not yet in the mirror');
  const refused = await authorize(node1, getConfigMap('cm-b'));
  assert.equal(refused?.allowed, false, 'the configmap of a pod on another node');
  assert.match(refused!.reason!, /no relationship found between node 'n1'/);
  assert.equal((await authorize(node1, token('other')))?.allowed, false, 'the service account of a pod on another node');
  assert.equal(storeReads, 3);
});

test('volumes: a node gets only the claims its pods use, their volumes, and its own attachments', async () => {
  const withClaims = (name: string, nodeName: string): ApiObject => ({
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
    spec: { nodeName, containers: [], volumes: [{ name: 'data', persistentVolumeClaim: { claimName: `claim-${name}` } }, { name: 'scratch', ephemeral: { volumeClaimTemplate: {} } }] },
  });
  const objects: Record<string, ApiObject> = {
    'persistentvolumes/pv-a': { metadata: { name: 'pv-a' }, spec: { claimRef: { namespace: 'default', name: 'claim-a' } } },
    'persistentvolumes/pv-b': { metadata: { name: 'pv-b' }, spec: { claimRef: { namespace: 'default', name: 'claim-b' } } },
    'volumeattachments/va-1': { metadata: { name: 'va-1' }, spec: { nodeName: 'n1' } },
    'volumeattachments/va-2': { metadata: { name: 'va-2' }, spec: { nodeName: 'n2' } },
  };
  const authorize = createNodeAuthorizer({
    listPods: async () => [withClaims('a', 'n1'), withClaims('b', 'n2')],
    findObject: async (_g, plural, _ns, name) => objects[`${plural}/${name}`],
  });
  const ask = async (a: Partial<RequestAttributes>): Promise<boolean | undefined> => (await authorize(node1, { verb: 'get', group: '', namespace: 'default', ...a } as RequestAttributes))?.allowed;
  assert.equal(await ask({ resource: 'persistentvolumeclaims', name: 'claim-a' }), true);
  assert.equal(await ask({ resource: 'persistentvolumeclaims', name: 'a-scratch' }), true, 'the claim of an ephemeral volume: <pod>-<volume>');
  assert.equal(await ask({ resource: 'persistentvolumeclaims', name: 'claim-b' }), false, 'a claim of a pod on another node');
  assert.equal(await ask({ resource: 'persistentvolumeclaims', verb: 'list' }), false, 'no listing');
  assert.equal(await ask({ resource: 'persistentvolumeclaims', subresource: 'status', verb: 'patch', name: 'claim-a' }), true);
  assert.equal(await ask({ resource: 'persistentvolumeclaims', subresource: 'status', verb: 'patch', name: 'claim-b' }), false, 'another node’s claim’s status');
  assert.equal(await ask({ resource: 'persistentvolumes', namespace: undefined, name: 'pv-a' }), true);
  assert.equal(await ask({ resource: 'persistentvolumes', namespace: undefined, name: 'pv-b' }), false);
  assert.equal(await ask({ resource: 'persistentvolumes', namespace: undefined, name: 'pv-none' }), false);
  assert.equal(await ask({ group: 'storage.k8s.io', resource: 'volumeattachments', namespace: undefined, name: 'va-1' }), true);
  assert.equal(await ask({ group: 'storage.k8s.io', resource: 'volumeattachments', namespace: undefined, name: 'va-2' }), false);
});

test('a node lists and watches NetworkPolicies (the agent enforces them) but cannot write them', async () => {
  const authorize = createNodeAuthorizer({ listPods: async () => [], cachedPods: () => [], findObject: async () => undefined });
  const np = (verb: string): RequestAttributes => ({ verb, group: 'networking.k8s.io', resource: 'networkpolicies' });
  assert.equal((await authorize(node1, np('list')))?.allowed, true);
  assert.equal((await authorize(node1, np('watch')))?.allowed, true);
  assert.equal((await authorize(node1, { ...np('create'), namespace: 'default' }))?.allowed, undefined, 'no opinion: RBAC decides (nothing binds nodes to write them)');
});

test('a node lists and watches one referenced configmap or secret by metadata.name, nothing wider', async () => {
  const withSecret: ApiObject = {
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 's', namespace: 'default' },
    spec: { nodeName: 'n1', containers: [{ name: 'c', envFrom: [{ secretRef: { name: 'creds' } }] }] },
  };
  const authorize = createNodeAuthorizer({ listPods: async () => [pod('a', 'n1'), pod('b', 'n2'), withSecret], findObject: async () => undefined });
  // The filter sets `name` from a `metadata.name=<name>` field selector of a list or watch (filters/authorization.ts).
  const ask = async (a: Partial<RequestAttributes>) => authorize(node1, { group: '', resource: 'configmaps', namespace: 'default', ...a } as RequestAttributes);
  assert.equal((await ask({ verb: 'watch', name: 'cm-a' }))?.allowed, true, 'the watch of a configmap its pod mounts');
  assert.equal((await ask({ verb: 'list', name: 'cm-a' }))?.allowed, true, 'the list of it (the informer lists before it watches)');
  assert.equal((await ask({ verb: 'watch', resource: 'secrets', name: 'creds' }))?.allowed, true, 'a secret its pod reads into env');
  const otherNode = await ask({ verb: 'watch', name: 'cm-b' });
  assert.equal(otherNode?.allowed, false, 'a configmap only a pod on another node uses');
  assert.match(otherNode!.reason!, /no relationship found between node 'n1'/);
  const unnamed = await ask({ verb: 'watch' });
  assert.deepEqual(unnamed, { allowed: false, reason: 'No Object name found' }, 'a watch without a metadata.name selector');
  assert.equal((await ask({ verb: 'list', resource: 'secrets' }))?.allowed, false, 'listing the namespace’s secrets');
  assert.equal((await ask({ verb: 'list', namespace: undefined }))?.reason, 'can only read namespaced object of this type', 'listing across namespaces');
  assert.equal((await ask({ verb: 'update', name: 'cm-a' }))?.reason, 'can only read resources of this type');
  assert.equal((await ask({ verb: 'delete', name: 'cm-a' }))?.allowed, false);
});
