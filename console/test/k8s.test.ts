// The console's pure helpers: quantities, `kubectl top node`'s figures, kubectl's AGE, the virtual
// table's visible range, Apply's document splitting and URLs, and a Service's endpoints from its EndpointSlices.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { age, parseQuantity, serviceEndpoints, topFigures, type EndpointSlice } from '../src/k8s.js';
import { visibleRange } from '../src/virtual.js';
import { applyPath, resultName, splitDocuments } from '../src/apply.js';

test('quantities as the API writes them', () => {
  assert.equal(parseQuantity('250m'), 0.25);
  assert.equal(parseQuantity('123456789n'), 0.123456789);
  assert.equal(parseQuantity('2'), 2);
  assert.equal(parseQuantity('51200Ki'), 51200 * 1024);
  assert.equal(parseQuantity('1G'), 1e9);
  assert.equal(parseQuantity('1e3'), 1000);
  assert.ok(Number.isNaN(parseQuantity('12 Mi')));
  assert.ok(Number.isNaN(parseQuantity(undefined)));
});

test('top figures: millicores and Mi rounded down, percent of allocatable', () => {
  assert.deepEqual(topFigures({ cpu: '123456789n', memory: '524288Ki' }, { cpu: '2', memory: '2Gi' }), { cpu: '123m', cpuPercent: '6%', memory: '512Mi', memoryPercent: '25%' });
  assert.deepEqual(topFigures({ cpu: '250m' }, {}), { cpu: '250m', cpuPercent: '?', memory: '?', memoryPercent: '?' });
});

test("age as kubectl's AGE column", () => {
  const now = Date.parse('2026-01-10T12:00:00Z');
  const at = (s: number): string => age(new Date(now - s * 1000).toISOString(), now);
  assert.deepEqual([at(5), at(119), at(192), at(300), at(7500), at(5 * 3600 + 1200), at(30 * 3600), at(3 * 86400 + 4 * 3600), at(40 * 86400)], ['5s', '119s', '3m12s', '5m', '125m', '5h20m', '30h', '3d4h', '40d']);
  assert.equal(age(undefined, now), '?');
  assert.equal(at(-3), '0s');
});

test('the virtual table draws the rows in view and a few around them', () => {
  assert.deepEqual(visibleRange(3000, 30, 0, 450, 8), { start: 0, end: 24 });
  assert.deepEqual(visibleRange(3000, 30, 30 * 1000, 450, 8), { start: 992, end: 1024 });
  assert.deepEqual(visibleRange(3000, 30, 30 * 2985, 450, 8), { start: 2977, end: 3000 });
  assert.deepEqual(visibleRange(0, 30, 0, 30, 8), { start: 0, end: 0 });
});

test('apply: documents split, empty ones skipped, the identity checked', () => {
  const split = splitDocuments('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n---\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: prod\n');
  assert.ok('docs' in split);
  assert.deepEqual(split.docs.map((d) => [d.apiVersion, d.kind, d.name, d.namespace]), [['v1', 'ConfigMap', 'a', undefined], ['apps/v1', 'Deployment', 'web', 'prod']]);
  assert.deepEqual(split.docs[0]!.object, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { k: 'v' } });
  assert.deepEqual(splitDocuments('kind: ConfigMap\nmetadata: {}\n'), { error: 'document 1: apiVersion, metadata.name not set' });
  assert.deepEqual(splitDocuments('- a\n'), { error: 'document 1: not an object' });
  assert.match((splitDocuments('a: [\n') as { error: string }).error, /^document 1: /);
});

test('apply: the object URL with the field manager, and kubectl-style names', () => {
  const [cm, dep] = (splitDocuments('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: prod}\n') as { docs: Parameters<typeof applyPath>[0][] }).docs;
  assert.equal(applyPath(cm!, { name: 'configmaps', kind: 'ConfigMap', namespaced: true }, 'default'), '/api/v1/namespaces/default/configmaps/a?fieldManager=nodelet-console');
  assert.equal(applyPath(dep!, { name: 'deployments', kind: 'Deployment', namespaced: true }, 'default'), '/apis/apps/v1/namespaces/prod/deployments/web?fieldManager=nodelet-console');
  assert.equal(applyPath(cm!, { name: 'namespaces', kind: 'Namespace', namespaced: false }, 'default'), '/api/v1/namespaces/a?fieldManager=nodelet-console');
  assert.equal(resultName(dep!), 'deployment.apps/web');
  assert.equal(resultName(cm!), 'configmap/a');
});

test("a Service's endpoints as its EndpointSlices say: the slice's port, conditions marked, other Services' slices ignored", () => {
  const slice = (name: string, service: string, rest: Omit<EndpointSlice, 'metadata'>): EndpointSlice => ({ metadata: { name, labels: { 'kubernetes.io/service-name': service } }, ...rest });
  const slices = [
    slice('web-abcde', 'web', {
      addressType: 'IPv4',
      // targetPort resolved by the controller: the slice's port, not the Service's.
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      endpoints: [
        { addresses: ['10.244.0.10'], conditions: { ready: true, serving: true, terminating: false } },
        { addresses: ['10.244.0.9', '10.244.0.99'], conditions: {} },
        { addresses: ['10.244.0.3'], conditions: { ready: false, serving: false, terminating: false } },
        { addresses: ['10.244.0.4'], conditions: { ready: false, serving: true, terminating: true } },
        { addresses: ['10.244.0.5'], conditions: { ready: false, serving: false, terminating: true } },
      ],
    }),
    // The same endpoint in a second slice of the Service (the controller moving it): listed once.
    slice('web-fghij', 'web', { addressType: 'IPv4', ports: [{ name: 'http', port: 8080 }], endpoints: [{ addresses: ['10.244.0.9'], conditions: { ready: true } }] }),
    slice('other-xyz', 'other', { addressType: 'IPv4', ports: [{ port: 80 }], endpoints: [{ addresses: ['10.244.0.7'] }] }),
  ];
  assert.deepEqual(serviceEndpoints(slices, 'web'), [
    { text: '10.244.0.9:8080', ready: true, mark: undefined },
    { text: '10.244.0.10:8080', ready: true, mark: undefined },
    { text: '10.244.0.3:8080', ready: false, mark: 'not ready' },
    { text: '10.244.0.4:8080', ready: false, mark: 'terminating, serving' },
    { text: '10.244.0.5:8080', ready: false, mark: 'terminating' },
  ]);
  assert.deepEqual(serviceEndpoints(slices, 'none'), []);
});

test('endpoints: publishNotReadyAddresses (ready while terminating), IPv6, several ports, a port-less slice, an empty slice', () => {
  const labels = { 'kubernetes.io/service-name': 'db' };
  assert.deepEqual(
    serviceEndpoints(
      [
        { metadata: { name: 'db-1', labels }, addressType: 'IPv4', ports: [{ port: 5432 }], endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: true, serving: true, terminating: true } }] },
        { metadata: { name: 'db-2', labels }, addressType: 'IPv6', ports: [{ name: 'a', port: 5432 }, { name: 'b', port: 9187 }], endpoints: [{ addresses: ['fd00::2'], conditions: { ready: true } }] },
        // A hand-made slice for a selectorless Service with no ports: "all ports", the address alone.
        { metadata: { name: 'db-3', labels }, addressType: 'IPv4', ports: null, endpoints: [{ addresses: ['192.0.2.3'] }] },
        { metadata: { name: 'db-4', labels }, addressType: 'IPv4', ports: [{ port: null }], endpoints: [{ addresses: ['192.0.2.4'] }] },
        { metadata: { name: 'db-5', labels }, addressType: 'IPv4', endpoints: null },
      ],
      'db',
    ),
    [
      { text: '[fd00::2]:5432', ready: true, mark: undefined },
      { text: '[fd00::2]:9187', ready: true, mark: undefined },
      { text: '10.0.0.1:5432', ready: true, mark: 'terminating' },
      { text: '192.0.2.3', ready: true, mark: undefined },
      { text: '192.0.2.4', ready: true, mark: undefined },
    ],
  );
});
