// CustomResourceDefinitions against the real API machinery (SQLite in a temp dir): a CRD is
// Established and its versions served; objects are pruned, defaulted and validated by the
// schema; status and scale subresources, printer columns, discovery; deleting the CRD deletes
// its objects.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pollUntil } from '@nodelet/base';
import { startTestApiServer, type TestApiServer } from '../testing/test-server.js';
import { widgetCrd, WIDGET_GROUP } from './testing/fixtures.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const W1 = `/apis/${WIDGET_GROUP}/v1/namespaces/default/widgets`;
const W1B = `/apis/${WIDGET_GROUP}/v1beta1/namespaces/default/widgets`;
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';

describe('CustomResourceDefinitions', () => {
  let srv: TestApiServer;
  const established = async (name: string): Promise<any> => // eslint-disable-line @typescript-eslint/no-explicit-any
    pollUntil(`CRD ${name} established`, async () => {
      const r = await srv.call('GET', `${CRDS}/${name}`);
      return r.json.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Established' && c.status === 'True') ? r.json : undefined;
    }, { timeoutMs: 10_000 });

  before(async () => {
    srv = await startTestApiServer();
    const r = await srv.call('POST', CRDS, widgetCrd());
    assert.equal(r.status, 201, JSON.stringify(r.json));
    assert.deepEqual(r.json.metadata.finalizers, ['customresourcecleanup.apiextensions.k8s.io']);
    await established(`widgets.${WIDGET_GROUP}`);
  });
  after(() => srv?.close());

  it('sets NamesAccepted and Established, and lists the kind in discovery', async () => {
    const crd = await established(`widgets.${WIDGET_GROUP}`);
    const names = crd.status.conditions.find((c: { type: string }) => c.type === 'NamesAccepted');
    assert.equal(names.status, 'True');
    assert.equal(crd.status.acceptedNames.kind, 'Widget');
    assert.deepEqual(crd.status.storedVersions, ['v1']);
    const list = await srv.call('GET', `/apis/${WIDGET_GROUP}/v1`);
    assert.equal(list.status, 200);
    const names2 = list.json.resources.map((r: { name: string }) => r.name).sort();
    assert.deepEqual(names2, ['widgets', 'widgets/scale', 'widgets/status']);
    const w = list.json.resources.find((r: { name: string }) => r.name === 'widgets');
    assert.deepEqual([w.kind, w.namespaced, w.shortNames, w.categories], ['Widget', true, ['wd'], ['all']]);
    const agg = await srv.call('GET', '/apis', undefined, { headers: { Accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' } });
    const group = agg.json.items.find((g: { metadata: { name: string } }) => g.metadata.name === WIDGET_GROUP);
    assert.deepEqual(group.versions.map((v: { version: string }) => v.version), ['v1', 'v1beta1']);
  });

  it('refuses a second CRD whose kind clashes: NamesAccepted False', async () => {
    const other = widgetCrd() as any; // eslint-disable-line @typescript-eslint/no-explicit-any
    other.metadata.name = `gadgets.${WIDGET_GROUP}`;
    other.spec.names = { plural: 'gadgets', kind: 'Widget' };
    assert.equal((await srv.call('POST', CRDS, other)).status, 201);
    const crd = await pollUntil('gadgets conditions', async () => {
      const r = await srv.call('GET', `${CRDS}/gadgets.${WIDGET_GROUP}`);
      return r.json.status?.conditions?.length ? r.json : undefined;
    }, { timeoutMs: 10_000 });
    const byType = Object.fromEntries(crd.status.conditions.map((c: { type: string }) => [c.type, c]));
    assert.equal(byType.NamesAccepted.status, 'False');
    assert.equal(byType.NamesAccepted.reason, 'NameConflict');
    assert.equal(byType.Established.status, 'False');
    assert.equal((await srv.call('GET', `/apis/${WIDGET_GROUP}/v1/gadgets`)).status, 404);
  });

  it('refuses x-kubernetes-validations (CEL) when the CRD is written', async () => {
    const cel = widgetCrd() as any; // eslint-disable-line @typescript-eslint/no-explicit-any
    cel.metadata.name = `cels.${WIDGET_GROUP}`;
    cel.spec.names = { plural: 'cels', kind: 'Cel' };
    cel.spec.versions[0].schema.openAPIV3Schema.properties.spec['x-kubernetes-validations'] = [{ rule: 'self.replicas < 5' }];
    const r = await srv.call('POST', CRDS, cel);
    assert.equal(r.status, 422);
    const cause = r.json.details.causes[0];
    assert.equal(cause.field, 'spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations');
    assert.match(cause.message, /not supported by this server/);
  });

  it('needs the approval annotation in kube\'s own groups, and keeps group, plural and scope', async () => {
    const crd = widgetCrd() as any; // eslint-disable-line @typescript-eslint/no-explicit-any
    crd.spec.group = 'things.k8s.io';
    crd.metadata.name = 'widgets.things.k8s.io';
    const r = await srv.call('POST', CRDS, crd);
    assert.equal(r.status, 422);
    assert.equal(r.json.details.causes[0].field, 'metadata.annotations[api-approved.kubernetes.io]');
    const cur = (await srv.call('GET', `${CRDS}/widgets.${WIDGET_GROUP}`)).json;
    const u = await srv.call('PUT', `${CRDS}/widgets.${WIDGET_GROUP}`, { ...cur, spec: { ...cur.spec, scope: 'Cluster' } });
    assert.equal(u.status, 422);
    assert.deepEqual(u.json.details.causes.map((c: { field: string; message: string }) => `${c.field}: ${c.message}`), ['spec.scope: Invalid value: "Cluster": field is immutable']);
  });

  it('checks printer columns and selectable fields', async () => {
    const crd = widgetCrd() as any; // eslint-disable-line @typescript-eslint/no-explicit-any
    crd.metadata.name = `cols.${WIDGET_GROUP}`;
    crd.spec.names = { plural: 'cols', kind: 'Col' };
    crd.spec.versions[0].additionalPrinterColumns = [{ name: 'X', type: 'text', jsonPath: 'spec.x', priority: -1 }];
    crd.spec.versions[0].selectableFields = [{ jsonPath: 'spec.mode' }];
    const r = await srv.call('POST', CRDS, crd);
    assert.equal(r.status, 422);
    assert.deepEqual(r.json.details.causes.map((c: { field: string }) => c.field), [
      'spec.versions[0].additionalPrinterColumns[0].type', 'spec.versions[0].additionalPrinterColumns[0].jsonPath',
      'spec.versions[0].additionalPrinterColumns[0].priority', 'spec.versions[0].selectableFields[0].jsonPath',
    ]);
  });

  it('refuses preserveUnknownFields, bad kind and version names', async () => {
    const crd = widgetCrd() as any; // eslint-disable-line @typescript-eslint/no-explicit-any
    crd.metadata.name = `bads.${WIDGET_GROUP}`;
    crd.spec.names = { plural: 'bads', kind: 'bad' };
    crd.spec.preserveUnknownFields = true;
    crd.spec.versions[1].name = 'V2';
    const r = await srv.call('POST', CRDS, crd);
    assert.equal(r.status, 422);
    assert.deepEqual(r.json.details.causes.map((c: { field: string }) => c.field), ['spec.preserveUnknownFields', 'spec.names.kind', 'spec.versions[1].name']);
  });

  it('warns on every request to a deprecated version', async () => {
    const crd = widgetCrd() as any; // eslint-disable-line @typescript-eslint/no-explicit-any
    crd.metadata.name = `olds.${WIDGET_GROUP}`;
    crd.spec.names = { plural: 'olds', kind: 'Old' };
    crd.spec.versions[1].deprecated = true;
    assert.equal((await srv.call('POST', CRDS, crd)).status, 201);
    await established(`olds.${WIDGET_GROUP}`);
    const beta = await srv.call('GET', `/apis/${WIDGET_GROUP}/v1beta1/olds`);
    assert.equal(beta.headers.get('warning'), `299 - "${WIDGET_GROUP}/v1beta1 Old is deprecated; use ${WIDGET_GROUP}/v1 Old"`);
    assert.equal((await srv.call('GET', `/apis/${WIDGET_GROUP}/v1/olds`)).headers.get('warning'), null);
  });

  it('refuses patterns RE2 (upstream) would not compile', async () => {
    for (const pattern of ['^(?=a)', '(a)\\1', '[']) {
      const crd = widgetCrd() as any; // eslint-disable-line @typescript-eslint/no-explicit-any
      crd.metadata.name = `res.${WIDGET_GROUP}`;
      crd.spec.names = { plural: 'res', kind: 'Re' };
      crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.image.pattern = pattern;
      const r = await srv.call('POST', CRDS, crd);
      assert.equal(r.status, 422, pattern);
      assert.equal(r.json.details.causes[0].field, 'spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[image].pattern');
      assert.match(r.json.details.causes[0].message, /must be a valid regular expression, but isn't/);
    }
  });

  it('prunes unknown fields, applies defaults, and validates with field paths', async () => {
    const c = await srv.call('POST', W1, { apiVersion: `${WIDGET_GROUP}/v1`, kind: 'Widget', metadata: { name: 'a' }, spec: { image: 'nginx:1.27', bogus: 1, extra: { kept: true } }, junk: 'x' });
    assert.equal(c.status, 201, JSON.stringify(c.json));
    assert.deepEqual(c.json.spec, { image: 'nginx:1.27', replicas: 1, mode: 'safe', extra: { kept: true } });
    assert.equal(c.json.junk, undefined);
    const bad = await srv.call('POST', W1, { metadata: { name: 'b' }, spec: { image: 'Not An Image', replicas: 11, mode: 'slow', port: 1.5 } });
    assert.equal(bad.status, 422, JSON.stringify(bad.json));
    const byField = Object.fromEntries(bad.json.details.causes.map((x: { field: string; message: string }) => [x.field, x.message]));
    assert.equal(byField['spec.image'], 'Invalid value: "Not An Image": spec.image in body should match \'^[a-z0-9./-]+(:[A-Za-z0-9._-]+)?$\'');
    assert.equal(byField['spec.replicas'], 'Invalid value: 11: spec.replicas in body should be less than or equal to 10');
    assert.equal(byField['spec.mode'], 'Unsupported value: "slow": supported values: "fast", "safe"');
    assert.equal(byField['spec.port'], 'Invalid value: "number": spec.port in body must be of type integer,string: "number"');
    const missing = await srv.call('POST', W1, { metadata: { name: 'c' }, spec: {} });
    assert.equal(missing.status, 422);
    assert.equal(missing.json.details.causes[0].field, 'spec.image');
    assert.equal(missing.json.details.causes[0].message, 'Required value');
  });

  it('serves every version from one storage (conversion None rewrites apiVersion)', async () => {
    const r = await srv.call('GET', `${W1B}/a`);
    assert.equal(r.status, 200);
    assert.equal(r.json.apiVersion, `${WIDGET_GROUP}/v1beta1`);
    const c = await srv.call('POST', W1B, { metadata: { name: 'beta', labels: { tier: 'x' } }, spec: { image: 'busybox' } });
    assert.equal(c.status, 201, JSON.stringify(c.json));
    const v1 = await srv.call('GET', `${W1}?labelSelector=tier%3Dx`);
    assert.deepEqual(v1.json.items.map((o: { metadata: { name: string } }) => o.metadata.name), ['beta']);
    assert.equal(v1.json.items[0].apiVersion, `${WIDGET_GROUP}/v1`);
    assert.equal(v1.json.kind, 'WidgetList');
    const byName = await srv.call('GET', `${W1}?fieldSelector=metadata.name%3Da`);
    assert.deepEqual(byName.json.items.map((o: { metadata: { name: string } }) => o.metadata.name), ['a']);
    const byMode = await srv.call('GET', `${W1}?fieldSelector=spec.mode%3Dsafe`);
    assert.equal(byMode.status, 200, JSON.stringify(byMode.json));
    assert.deepEqual(byMode.json.items.map((o: { metadata: { name: string } }) => o.metadata.name).sort(), ['a', 'beta']);
    assert.equal((await srv.call('GET', `${W1}?fieldSelector=spec.image%3Dx`)).status, 400);
  });

  it('splits status from spec and scales through /scale', async () => {
    const cur = (await srv.call('GET', `${W1}/a`)).json;
    const s = await srv.call('PUT', `${W1}/a/status`, { ...cur, spec: { ...cur.spec, replicas: 7 }, status: { replicas: 1, phase: 'Running' } });
    assert.equal(s.status, 200, JSON.stringify(s.json));
    assert.equal(s.json.spec.replicas, 1, 'the status subresource ignores spec');
    assert.equal(s.json.status.phase, 'Running');
    const m = await srv.call('PUT', `${W1}/a`, { ...s.json, spec: { ...s.json.spec, replicas: 2 }, status: { phase: 'Ignored' } });
    assert.equal(m.json.status.phase, 'Running', 'the main resource ignores status');
    assert.equal(m.json.metadata.generation, 2);
    await srv.call('PATCH', `${W1}/a`, { spec: { selector: 'app=a' } }, { contentType: 'application/merge-patch+json' });
    const scale = await srv.call('GET', `${W1}/a/scale`);
    assert.deepEqual([scale.json.kind, scale.json.spec, scale.json.status], ['Scale', { replicas: 2 }, { replicas: 1, selector: 'app=a' }]);
    const up = await srv.call('PATCH', `${W1}/a/scale`, { spec: { replicas: 4 } }, { contentType: 'application/merge-patch+json' });
    assert.equal(up.status, 200, JSON.stringify(up.json));
    assert.equal((await srv.call('GET', `${W1}/a`)).json.spec.replicas, 4);
  });

  it('prints the additionalPrinterColumns in Table output', async () => {
    const t = await srv.call('GET', W1, undefined, { headers: { Accept: TABLE } });
    assert.deepEqual(t.json.columnDefinitions.map((c: { name: string }) => c.name), ['Name', 'Image', 'Replicas', 'Phase', 'Age']);
    const row = t.json.rows.find((r: { cells: unknown[] }) => r.cells[0] === 'a');
    assert.deepEqual(row.cells.slice(0, 4), ['a', 'nginx:1.27', 4, 'Running']);
  });

  it('a watch outlives a change to the CRD that leaves its spec alone', async () => {
    const rv = (await srv.call('GET', W1)).json.metadata.resourceVersion;
    const ac = new AbortController();
    const res = await fetch(`${srv.url}${W1}?watch=true&resourceVersion=${rv}`, { headers: { Authorization: `Bearer ${srv.token}` }, signal: ac.signal });
    const reader = res.body!.getReader();
    let text = '';
    const read = (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        text += Buffer.from(value).toString();
      }
    })().catch(() => undefined);
    try {
      const label = await srv.call('PATCH', `${CRDS}/widgets.${WIDGET_GROUP}`, { metadata: { labels: { touched: 'yes' } } }, { contentType: 'application/merge-patch+json' });
      assert.equal(label.status, 200);
      await srv.call('POST', W1, { metadata: { name: 'watched' }, spec: { image: 'busybox' } });
      await pollUntil('the ADDED event', () => text.includes('"type":"ADDED"') && text.includes('"watched"'), { timeoutMs: 5000 });
    } finally {
      ac.abort();
      await read;
    }
  });

  it('counts generations of custom objects without a status subresource too', async () => {
    const crd = widgetCrd() as any; // eslint-disable-line @typescript-eslint/no-explicit-any
    crd.metadata.name = `plains.${WIDGET_GROUP}`;
    crd.spec.names = { plural: 'plains', kind: 'Plain' };
    for (const v of crd.spec.versions) v.subresources = {};
    assert.equal((await srv.call('POST', CRDS, crd)).status, 201);
    await established(`plains.${WIDGET_GROUP}`);
    const path = `/apis/${WIDGET_GROUP}/v1/namespaces/default/plains`;
    const c = await srv.call('POST', path, { metadata: { name: 'p' }, spec: { image: 'busybox' }, status: { phase: 'kept' } });
    assert.equal(c.status, 201, JSON.stringify(c.json));
    assert.deepEqual([c.json.metadata.generation, c.json.status], [1, { phase: 'kept' }]);
    const label = await srv.call('PATCH', `${path}/p`, { metadata: { labels: { a: 'b' } } }, { contentType: 'application/merge-patch+json' });
    assert.equal(label.json.metadata.generation, 1, 'a metadata change is not a new generation');
    const st = await srv.call('PATCH', `${path}/p`, { status: { phase: 'changed' } }, { contentType: 'application/merge-patch+json' });
    assert.equal(st.json.metadata.generation, 2);
    assert.equal((await srv.call('GET', `${path}/p/status`)).status, 404);
  });

  it('serves cluster-scoped kinds, and server-side apply of custom objects', async () => {
    const crd = widgetCrd() as any; // eslint-disable-line @typescript-eslint/no-explicit-any
    crd.metadata.name = `realms.${WIDGET_GROUP}`;
    crd.spec.scope = 'Cluster';
    crd.spec.names = { plural: 'realms', kind: 'Realm' };
    assert.equal((await srv.call('POST', CRDS, crd)).status, 201);
    await established(`realms.${WIDGET_GROUP}`);
    const path = `/apis/${WIDGET_GROUP}/v1/realms`;
    const applied = await srv.call('PATCH', `${path}/r1?fieldManager=test`, { apiVersion: `${WIDGET_GROUP}/v1`, kind: 'Realm', metadata: { name: 'r1' }, spec: { image: 'busybox' } }, { contentType: 'application/apply-patch+yaml' });
    assert.equal(applied.status, 201, JSON.stringify(applied.json));
    assert.equal(applied.json.metadata.namespace, undefined);
    assert.equal(applied.json.spec.replicas, 1);
    const undeclared = await srv.call('PATCH', `${path}/r1?fieldManager=test`, { apiVersion: `${WIDGET_GROUP}/v1`, kind: 'Realm', metadata: { name: 'r1' }, spec: { image: 'busybox', nope: 1 } }, { contentType: 'application/apply-patch+yaml' });
    assert.equal(undeclared.status, 400);
    assert.match(undeclared.json.message, /\.spec\.nope: field not declared in schema/);
    assert.equal((await srv.call('GET', `/apis/${WIDGET_GROUP}/v1/namespaces/default/realms`)).status, 404);
    assert.deepEqual((await srv.call('GET', path)).json.items.map((o: { metadata: { name: string } }) => o.metadata.name), ['r1']);
  });

  it('deleting the CRD deletes its objects (honouring their finalizers), then the CRD, and stops serving it', async () => {
    await srv.call('PATCH', `${W1}/a`, { metadata: { finalizers: ['test.nodelet.io/hold'] } }, { contentType: 'application/merge-patch+json' });
    assert.equal((await srv.call('DELETE', `${CRDS}/widgets.${WIDGET_GROUP}`)).status, 200);
    const terminating = await pollUntil('Terminating condition', async () => {
      const crd = (await srv.call('GET', `${CRDS}/widgets.${WIDGET_GROUP}`)).json;
      return crd.status?.conditions?.find((c: { type: string; status: string }) => c.type === 'Terminating' && c.status === 'True');
    }, { timeoutMs: 10_000 });
    assert.equal(terminating.reason, 'InstanceDeletionInProgress');
    await pollUntil('only the held object is left', async () => (await srv.call('GET', W1)).json.items?.length === 1, { timeoutMs: 10_000 });
    const held = (await srv.call('GET', `${W1}/a`)).json;
    assert.ok(held.metadata.deletionTimestamp, 'the held object is marked for deletion');
    assert.equal((await srv.call('GET', `${CRDS}/widgets.${WIDGET_GROUP}`)).status, 200, 'the CRD waits for it');
    const late = await srv.call('POST', W1, { metadata: { name: 'late' }, spec: { image: 'busybox' } });
    assert.deepEqual([late.status, late.json.message], [405, 'create not allowed while custom resource definition is terminating']);
    await srv.call('PATCH', `${W1}/a`, { metadata: { finalizers: null } }, { contentType: 'application/merge-patch+json' });
    await pollUntil('CRD gone', async () => (await srv.call('GET', `${CRDS}/widgets.${WIDGET_GROUP}`)).status === 404, { timeoutMs: 15_000 });
    assert.equal((await srv.call('GET', W1)).status, 404);
    const keys = await srv.store.list(`/registry/${WIDGET_GROUP}/widgets/`);
    assert.equal(keys.items.length, 0, "no stored widget is left");
  });
});
