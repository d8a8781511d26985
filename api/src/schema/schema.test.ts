import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RESOURCES, apiVersionOf } from '../types/resources.js';
import { API_SCHEMAS, REF_PREFIX, applyFieldErrorsOfKind, schemaClosure, schemaNameOfKind, unknownFieldsOfKind, type JsonSchema } from './index.js';

/** Every `$ref` anywhere under `v`. */
function refs(v: unknown, out: string[] = []): string[] {
  if (Array.isArray(v)) v.forEach((x) => refs(x, out));
  else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (k === '$ref') out.push(x as string);
      else refs(x, out);
    }
  }
  return out;
}

test('every reference names a definition, and every definition has a description', () => {
  for (const [name, def] of Object.entries(API_SCHEMAS)) {
    assert.ok(def.description, `${name} has a description`);
    for (const r of refs(def)) {
      assert.ok(r.startsWith(REF_PREFIX), `${name}: ${r}`);
      assert.ok(API_SCHEMAS[r.slice(REF_PREFIX.length)], `${name} refers to missing ${r}`);
    }
  }
});

test('every field of every struct has a description and a type, a reference or alternatives', () => {
  for (const [name, def] of Object.entries(API_SCHEMAS)) {
    for (const [field, s] of Object.entries(def.properties ?? {})) {
      assert.ok(s.description, `${name}.${field} has a description`);
      assert.ok(s.type || s.allOf || s.$ref || s.oneOf, `${name}.${field} has a type`);
      for (const req of def.required ?? []) assert.ok(def.properties?.[req], `${name}: required ${req} is a property`);
    }
  }
});

test('each kind the client knows has a schema tagged with its group/version/kind', () => {
  for (const r of RESOURCES) {
    const name = schemaNameOfKind(r.group, r.version, r.kind);
    assert.ok(name, `${apiVersionOf(r)} ${r.kind} has a schema`);
    const def = API_SCHEMAS[name]!;
    assert.deepEqual(def['x-kubernetes-group-version-kind'], [{ group: r.group, kind: r.kind, version: r.version }]);
    for (const f of ['apiVersion', 'kind', 'metadata']) assert.ok(def.properties?.[f], `${r.kind}.${f}`);
  }
  assert.equal(schemaNameOfKind('apps', 'v1', 'Deployment'), 'io.k8s.api.apps.v1.Deployment');
  assert.equal(schemaNameOfKind('', 'v1', 'Pod'), 'io.k8s.api.core.v1.Pod');
  assert.equal(schemaNameOfKind('apps', 'v1', 'Nope'), undefined);
});

test('the closure of a kind holds what it refers to, transitively', () => {
  const names = schemaClosure(['io.k8s.api.apps.v1.Deployment']);
  for (const n of ['io.k8s.api.apps.v1.DeploymentSpec', 'io.k8s.api.core.v1.PodSpec', 'io.k8s.api.core.v1.Container', 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta', 'io.k8s.apimachinery.pkg.util.intstr.IntOrString']) {
    assert.ok(names.includes(n), n);
  }
  assert.ok(!names.includes('io.k8s.api.batch.v1.Job'));
});

test('lists carry upstream’s merge keys and list types; int-or-string and quantities have no type of their own', () => {
  const at = (def: string, field: string): JsonSchema => API_SCHEMAS[def]!.properties![field]!;
  const containers = at('io.k8s.api.core.v1.PodSpec', 'containers');
  assert.deepEqual([containers['x-kubernetes-patch-strategy'], containers['x-kubernetes-patch-merge-key'], containers['x-kubernetes-list-type'], containers['x-kubernetes-list-map-keys']], ['merge', 'name', 'map', ['name']]);
  assert.equal(at('io.k8s.api.core.v1.PodSpec', 'volumes')['x-kubernetes-patch-strategy'], 'merge,retainKeys');
  assert.equal(at('io.k8s.api.core.v1.Container', 'ports')['x-kubernetes-patch-merge-key'], 'containerPort');
  assert.equal(at('io.k8s.api.core.v1.ServiceSpec', 'ports')['x-kubernetes-patch-merge-key'], 'port');
  assert.equal(at('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta', 'finalizers')['x-kubernetes-list-type'], 'set');
  assert.equal(at('io.k8s.api.apps.v1.DeploymentSpec', 'strategy')['x-kubernetes-patch-strategy'], 'retainKeys');
  assert.deepEqual(at('io.k8s.api.apps.v1.DeploymentStrategy', 'type').enum, ['Recreate', 'RollingUpdate']);
  assert.equal(API_SCHEMAS['io.k8s.apimachinery.pkg.util.intstr.IntOrString']!.type, undefined);
  assert.equal(API_SCHEMAS['io.k8s.apimachinery.pkg.api.resource.Quantity']!.type, undefined);
});

test('unknown fields are found at every depth, with Go’s path form', () => {
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', labels: { 'any-key': 'x' }, lables: {} },
    spec: {
      foo: 1,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'a', image: 'x' }, { name: 'b', image: 'y', imagePullPolice: 'Always', resources: { limits: { cpu: '1' } } }] },
      },
      strategy: { rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } },
    },
    status: { replicas: 1, bogus: true },
  };
  assert.deepEqual(unknownFieldsOfKind('apps', 'v1', 'Deployment', deployment), ['metadata.lables', 'spec.foo', 'spec.template.spec.containers[1].imagePullPolice', 'status.bogus']);
  // Free-form parts (managedFields' fieldsV1, a ControllerRevision's data) are not checked.
  const revision = { metadata: { name: 'r', managedFields: [{ manager: 'm', fieldsV1: { 'f:spec': { 'f:anything': {} } } }] }, data: { spec: { whatever: 1 } }, revision: 1 };
  assert.deepEqual(unknownFieldsOfKind('apps', 'v1', 'ControllerRevision', revision), []);
  // Values of the wrong type are another validation's business.
  assert.deepEqual(unknownFieldsOfKind('', 'v1', 'ConfigMap', { metadata: 'oops', data: ['x'] }), []);
  assert.deepEqual(unknownFieldsOfKind('nope', 'v1', 'Thing', { a: 1 }), []);
});

test('patches: directives and deletions are not unknown fields', () => {
  const patch = {
    metadata: { labels: { a: null } },
    spec: {
      template: { spec: { $setElementOrder_containers: [], containers: [{ name: 'a', $patch: 'delete' }] } },
      '$setElementOrder/volumes': [{ name: 'v' }],
      strategy: { $retainKeys: ['type'], type: 'Recreate', rollingUpdate: null },
      removedField: null,
      typo: 1,
    },
  };
  assert.deepEqual(unknownFieldsOfKind('apps', 'v1', 'Deployment', patch, { patch: true }), ['spec.typo']);
  assert.deepEqual(unknownFieldsOfKind('apps', 'v1', 'Deployment', { spec: { removedField: null } }), ['spec.removedField'], 'a full object with a null unknown field is still refused');
});

test('server-side apply errors name list items by their keys', () => {
  const applied = { spec: { template: { spec: { containers: [{ name: 'web', image: 'x', imagePullPolice: 'Always', ports: [{ containerPort: 80, bogus: 1 }] }] } }, foo: 1 } };
  assert.deepEqual(applyFieldErrorsOfKind('apps', 'v1', 'Deployment', applied), [
    '.spec.template.spec.containers[name="web"].imagePullPolice: field not declared in schema',
    '.spec.template.spec.containers[name="web"].ports[containerPort=80].bogus: field not declared in schema',
    '.spec.foo: field not declared in schema',
  ]);
});

test('pruning drops each unknown field in place and names it by its path through lists', () => {
  const pod = { metadata: { name: 'p', bogus: 1 }, spec: { containers: [{ name: 'a', image: 'x' }, { name: 'b', image: 'y', env: [{ name: 'E', value: 'v', typo: 1 }] }], nodeSelector: { a: 'b' } } };
  assert.deepEqual(unknownFieldsOfKind('', 'v1', 'Pod', pod, { prune: true }), ['metadata.bogus', 'spec.containers[1].env[0].typo']);
  assert.deepEqual(pod, { metadata: { name: 'p' }, spec: { containers: [{ name: 'a', image: 'x' }, { name: 'b', image: 'y', env: [{ name: 'E', value: 'v' }] }], nodeSelector: { a: 'b' } } });
});
