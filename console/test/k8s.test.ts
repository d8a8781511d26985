// The console's pure helpers: quantities, `kubectl top node`'s figures, kubectl's AGE, the virtual
// table's visible range, and Apply's document splitting and URLs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { age, parseQuantity, topFigures } from '../src/k8s.js';
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
