// A CRD's served form: version order, printer columns, JSON paths.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareKubeVersions, customResourceDefs, readJsonPath, writeJsonPath } from './custom-defs.js';
import { widgetCrd } from './testing/fixtures.js';
import type { CrdSpec } from './types.js';

test('versions are listed in kube priority: GA, beta, alpha, higher first, others last', () => {
  const names = ['foo', 'v1alpha1', 'v2beta1', 'v1', 'v11alpha2', 'v2', 'v1beta1', 'v12alpha1', 'bar'];
  assert.deepEqual(names.sort(compareKubeVersions), ['v2', 'v1', 'v2beta1', 'v1beta1', 'v12alpha1', 'v11alpha2', 'v1alpha1', 'bar', 'foo']);
  const spec = (widgetCrd() as { spec: CrdSpec }).spec;
  spec.versions.reverse();
  assert.deepEqual(customResourceDefs(spec).map((d) => d.version), ['v1', 'v1beta1']);
});

test('printer columns: values by JSON path, dates as ages, objects as JSON, absent as null', () => {
  const spec = (widgetCrd() as { spec: CrdSpec }).spec;
  spec.versions[0]!.additionalPrinterColumns!.push({ name: 'Extra', type: 'string', jsonPath: '.spec.extra' }, { name: 'Seen', type: 'date', jsonPath: '.status.seen' });
  const def = customResourceDefs(spec).find((d) => d.version === 'v1')!;
  assert.deepEqual(def.table!.columns.map((c) => c.name), ['Name', 'Image', 'Replicas', 'Phase', 'Age', 'Extra', 'Seen']);
  const now = Date.parse('2026-01-01T00:10:00Z');
  const obj = { metadata: { name: 'w', creationTimestamp: '2026-01-01T00:00:00Z' }, spec: { image: 'i', replicas: 2, extra: { a: 1 } }, status: { seen: '2026-01-01T00:09:30Z' } };
  assert.deepEqual(def.table!.cells(obj, now), ['w', 'i', 2, null, '10m', '{"a":1}', '30s']);
});

test('JSON paths read and write nested fields and list items', () => {
  const o = { spec: { a: [{ b: 1 }] } };
  assert.equal(readJsonPath(o, '.spec.a[0].b'), 1);
  assert.equal(readJsonPath(o, '{.spec.a[1].b}'), undefined);
  writeJsonPath(o, '.spec.x.y', 3);
  assert.deepEqual(o, { spec: { a: [{ b: 1 }], x: { y: 3 } } });
});
