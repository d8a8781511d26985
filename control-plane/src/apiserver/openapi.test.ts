// The /openapi/v3 documents built from @nodelet/api's schemas, and the strategic-merge list rules
// read from the same schemas.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { REF_PREFIX, schemaNameOfKind } from '@nodelet/api';
import { RESOURCE_DEFS, groupVersions } from './resources.js';
import { openApiDocument, openApiIndex } from './openapi.js';
import { listStrategy } from './patch/merge-keys.js';

type Doc = { paths: Record<string, Record<string, any>>; components: { schemas: Record<string, any> } }; // eslint-disable-line @typescript-eslint/no-explicit-any

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

/** Connect subresources take their options as query parameters; upstream's documents have no schema for them either. */
const CONNECT = new Set(['exec', 'attach', 'portforward', 'proxy']);

test('every served kind, and every subresource kind, has a schema', () => {
  for (const d of RESOURCE_DEFS) {
    assert.ok(schemaNameOfKind(d.group, d.version, d.kind), `${d.group}/${d.version} ${d.kind}`);
    for (const s of d.subresources) if (s.kind && !CONNECT.has(s.name)) assert.ok(schemaNameOfKind(s.kind.group, s.kind.version, s.kind.kind), `${d.plural}/${s.name}: ${s.kind.kind}`);
  }
});

test('each group-version document is self-contained and tags its operations and schemas with group/version/kind', () => {
  for (const gv of groupVersions()) {
    const doc = openApiDocument(gv.group, gv.version) as unknown as Doc;
    const schemas = doc.components.schemas;
    for (const r of refs(doc)) assert.ok(schemas[r.slice(REF_PREFIX.length)], `${gv.group}/${gv.version}: ${r} resolves`);
    const base = gv.group ? `/apis/${gv.group}/${gv.version}` : `/api/${gv.version}`;
    for (const d of gv.resources) {
      const gvk = { group: d.group, version: d.version, kind: d.kind };
      const schema = schemas[schemaNameOfKind(d.group, d.version, d.kind)!];
      assert.deepEqual(schema['x-kubernetes-group-version-kind'], [{ group: d.group, kind: d.kind, version: d.version }]);
      const collection = doc.paths[`${base}${d.namespaced ? '/namespaces/{namespace}' : ''}/${d.plural}`];
      assert.ok(collection, `${d.plural} collection path`);
      if (d.ephemeral) {
        assert.deepEqual(collection.post['x-kubernetes-group-version-kind'], gvk);
        continue;
      }
      // kubectl explain finds the kind from the list operation of the collection path.
      assert.deepEqual(collection.get['x-kubernetes-group-version-kind'], gvk, `${d.plural} list`);
      assert.equal(collection.get['x-kubernetes-action'], 'list');
      assert.ok(schemas[`${schemaNameOfKind(d.group, d.version, d.kind)}List`], `${d.kind}List`);
      // kubectl sends fieldValidation only when the patch operation lists it.
      const patch = doc.paths[`${base}${d.namespaced ? '/namespaces/{namespace}' : ''}/${d.plural}/{name}`]!.patch;
      assert.deepEqual(patch['x-kubernetes-group-version-kind'], gvk);
      assert.ok(patch.parameters.some((p: { name: string }) => p.name === 'fieldValidation'), `${d.plural} patch takes fieldValidation`);
    }
  }
  const core = openApiDocument('', 'v1') as unknown as Doc;
  assert.equal(core.paths['/api/v1/namespaces/{namespace}/pods/{name}/eviction']!.post['x-kubernetes-group-version-kind'].kind, 'Eviction');
  assert.ok(core.components.schemas['io.k8s.api.policy.v1.Eviction']);
  const apps = openApiDocument('apps', 'v1') as unknown as Doc;
  assert.equal(apps.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale']!.put['x-kubernetes-group-version-kind'].kind, 'Scale');
  assert.equal(openApiDocument('apps', 'v9'), undefined);
});

test('the index names every group-version with a content hash', () => {
  const index = openApiIndex() as { paths: Record<string, { serverRelativeURL: string }> };
  assert.equal(Object.keys(index.paths).length, groupVersions().length);
  assert.match(index.paths['api/v1']!.serverRelativeURL, /^\/openapi\/v3\/api\/v1\?hash=[0-9A-F]{128}$/);
  assert.match(index.paths['apis/policy/v1']!.serverRelativeURL, /^\/openapi\/v3\/apis\/policy\/v1\?hash=/);
});

test('strategic merge list rules come from the schemas (as kubectl computes its patches), names elsewhere', () => {
  assert.deepEqual(listStrategy('Deployment', ['spec', 'template', 'spec', 'containers']), { kind: 'merge', key: 'name' });
  assert.deepEqual(listStrategy('Deployment', ['spec', 'template', 'spec', 'containers', '[]', 'ports']), { kind: 'merge', key: 'containerPort' });
  assert.deepEqual(listStrategy('Service', ['spec', 'ports']), { kind: 'merge', key: 'port' });
  assert.deepEqual(listStrategy('Node', ['status', 'addresses']), { kind: 'merge', key: 'type' });
  assert.deepEqual(listStrategy('Pod', ['metadata', 'finalizers']), { kind: 'set' });
  assert.deepEqual(listStrategy('PodDisruptionBudget', ['status', 'conditions']), { kind: 'merge', key: 'type' });
  // Lists upstream does not merge are atomic even where a field name suggests otherwise.
  assert.deepEqual(listStrategy('CertificateSigningRequest', ['status', 'conditions']), { kind: 'atomic' });
  assert.deepEqual(listStrategy('Pod', ['spec', 'tolerations']), { kind: 'atomic' });
  // A path no schema describes uses the field-name rules.
  assert.deepEqual(listStrategy('Unknown', ['spec', 'containers']), { kind: 'merge', key: 'name' });
});
