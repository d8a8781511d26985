import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiObject, Json } from '../object.js';
import { StatusError } from '../status.js';
import { FieldSet, pathString } from './fieldset.js';
import { applyManagedFields, managerOf, updateManagedFields, type WriteContext } from './manager.js';
import { applyWithLastApplied, LAST_APPLIED } from './last-applied.js';
import { DEDUCED, applyConfigErrors, compare, merge, toFieldSet, typesOfDef, typesOfKind } from './typed.js';
import type { StructuralSchema } from '../apiextensions/schema.js';
import type { ResourceDef } from '../resource.js';

const deploy = typesOfKind('Deployment');
const ctx = (over: Partial<WriteContext> = {}): WriteContext => ({ types: deploy, apiVersion: 'apps/v1', subresource: '', statusSubresource: true, now: Date.UTC(2026, 0, 2, 3, 4, 5), ...over });

const config = (replicas?: number, extra: Json = {}): ApiObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', labels: { app: 'web' } },
  spec: {
    ...(replicas === undefined ? {} : { replicas }),
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx', args: ['a', 'b'], ports: [{ containerPort: 80 }], ...extra }] } },
  },
});

test('FieldsV1 of an applied Deployment: keyed containers and ports (protocol from its schema default), atomic lists and selector', () => {
  const fields = toFieldSet(deploy, config(2) as Json).toFieldsV1();
  assert.deepEqual(fields, {
    'f:apiVersion': {},
    'f:kind': {},
    'f:metadata': { 'f:labels': { 'f:app': {} }, 'f:name': {} },
    'f:spec': {
      'f:replicas': {},
      'f:selector': {},
      'f:template': {
        'f:metadata': { 'f:labels': { 'f:app': {} } },
        'f:spec': { 'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:args': {}, 'f:image': {}, 'f:name': {}, 'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } } } } },
      },
    },
  });
  assert.ok(FieldSet.fromFieldsV1(fields).equals(toFieldSet(deploy, config(2) as Json)), 'FieldsV1 round-trips');
});

test('path elements: sets by value, lists without keys by index, printed as upstream', () => {
  const pod = typesOfKind('Pod');
  const set = toFieldSet(pod, { metadata: { finalizers: ['x'] } });
  assert.deepEqual(set.toFieldsV1(), { 'f:metadata': { 'f:finalizers': { 'v:"x"': {} } } });
  const cases: Array<[string[], string]> = [
    [['f:spec', 'f:replicas'], '.spec.replicas'],
    [['f:spec', 'f:containers', 'k:{"name":"c"}', 'f:image'], '.spec.containers[name="c"].image'],
    [['f:spec', 'f:ports', 'k:{"port":80,"protocol":"TCP"}'], '.spec.ports[port=80,protocol="TCP"]'],
    [['f:metadata', 'f:finalizers', 'v:"x"'], '.metadata.finalizers[="x"]'],
    [['f:spec', 'f:args', 'i:0'], '.spec.args[0]'],
  ];
  for (const [path, want] of cases) assert.equal(pathString(path), want);
});

test('set operations: union, difference, recursive removal, intersection', () => {
  const a = FieldSet.of([['f:a'], ['f:b', 'f:c'], ['f:b', 'f:d']]);
  const b = FieldSet.of([['f:b', 'f:c'], ['f:e']]);
  assert.deepEqual([...a.union(b).paths()], [['f:a'], ['f:b', 'f:c'], ['f:b', 'f:d'], ['f:e']]);
  assert.deepEqual([...a.difference(b).paths()], [['f:a'], ['f:b', 'f:d']]);
  assert.deepEqual([...a.intersection(b).paths()], [['f:b', 'f:c']]);
  assert.deepEqual([...a.clone().removeRecursive(FieldSet.of([['f:b']])).paths()], [['f:a']]);
  assert.ok(a.hasPrefix(['f:b']) && !a.has(['f:b']));
  for (const bad of [{ 'k:notjson': {} }, { 'k:[1]': {} }, { 'i:x': {} }, { 'v:{': {} }, { 'x:y': {} }, { 'f:a': 1 }, []]) {
    assert.throws(() => FieldSet.fromFieldsV1(bad), /FieldsV1/, JSON.stringify(bad));
  }
});

test('unstructured objects are deduced: lists atomic, maps granular', () => {
  assert.deepEqual(toFieldSet(DEDUCED, { spec: { items: [{ a: 1 }], m: { k: 'v' } } }).toFieldsV1(), { 'f:spec': { 'f:items': {}, 'f:m': { 'f:k': {} } } });
  assert.deepEqual(merge(DEDUCED, { l: [1, 2], m: { a: 1 } }, { l: [3], m: { b: 2 } }), { l: [3], m: { a: 1, b: 2 } });
});

test('compare: added maps count themselves, removed items everything in them', () => {
  const d = compare(deploy, { metadata: { labels: { a: '1' } }, spec: { template: { spec: { containers: [{ name: 'c', image: 'x' }] } } } }, { metadata: { labels: { a: '2' }, annotations: { n: 'v' } }, spec: { template: { spec: { containers: [] } } } });
  assert.deepEqual(d.modified.toFieldsV1(), { 'f:metadata': { 'f:labels': { 'f:a': {} } } });
  assert.deepEqual(d.added.toFieldsV1(), { 'f:metadata': { 'f:annotations': { '.': {}, 'f:n': {} } } });
  assert.deepEqual(d.removed.toFieldsV1(), { 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:image': {}, 'f:name': {} } } } } } });
});

const entry = (o: ApiObject, manager: string, operation = 'Apply') => o.metadata.managedFields?.find((e) => e.manager === manager && e.operation === operation);

test('create (Update) records what the creator set; another Update takes the fields it changes', () => {
  const created = config(1) as ApiObject;
  created.metadata.managedFields = updateManagedFields(ctx(), undefined, created, 'kubectl-create');
  const e = entry(created, 'kubectl-create', 'Update')!;
  assert.deepEqual([e.apiVersion, e.fieldsType, e.time], ['apps/v1', 'FieldsV1', '2026-01-02T03:04:05Z']);
  assert.deepEqual((e.fieldsV1 as Json)['f:metadata'], { 'f:labels': { '.': {}, 'f:app': {} } });
  const edited = structuredClone(created);
  (edited.spec as Json).replicas = 3;
  edited.metadata.managedFields = updateManagedFields(ctx(), created, edited, 'kubectl-edit');
  assert.deepEqual(entry(edited, 'kubectl-edit', 'Update')!.fieldsV1, { 'f:spec': { 'f:replicas': {} } });
  assert.equal(((entry(edited, 'kubectl-create', 'Update')!.fieldsV1 as Json)['f:spec'] as Json)['f:replicas'], undefined);
});

test('apply: a field the manager stops applying is removed unless another manager owns it', () => {
  let live = applyManagedFields(ctx(), undefined, config(2, { env: [{ name: 'A', value: '1' }] }), 'ssa', false);
  live = applyManagedFields(ctx(), live, config(2), 'ssa', false);
  assert.equal(((live.spec as Json).template as any).spec.containers[0].env, undefined); // eslint-disable-line @typescript-eslint/no-explicit-any
  // Both appliers set replicas to 2: shared ownership, no conflict; dropping it from one keeps it.
  live = applyManagedFields(ctx(), live, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 2 } }, 'other', false);
  live = applyManagedFields(ctx(), live, config(), 'ssa', false);
  assert.equal((live.spec as Json).replicas, 2);
  assert.deepEqual(entry(live, 'other')!.fieldsV1, { 'f:spec': { 'f:replicas': {} } });
  // Once its last applier drops it, it goes.
  live = applyManagedFields(ctx(), live, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' } }, 'other', false);
  assert.equal((live.spec as Json).replicas, undefined);
  assert.equal(entry(live, 'other'), undefined);
});

test('apply conflicts: 409 with upstream’s message and causes; force moves ownership', () => {
  let live = applyManagedFields(ctx(), undefined, config(2), 'ssa', false);
  const scaled = structuredClone(live);
  (scaled.spec as Json).replicas = 5;
  scaled.metadata.managedFields = updateManagedFields(ctx({ subresource: 'scale' }), live, scaled, 'kubectl');
  live = scaled;
  const err = (() => {
    try {
      applyManagedFields(ctx(), live, config(3), 'ssa', false);
    } catch (e) {
      return e as StatusError;
    }
    assert.fail('no conflict');
  })();
  assert.equal(err.code, 409);
  assert.equal(err.reason, 'Conflict');
  assert.equal(err.message, 'Apply failed with 1 conflict: conflict with "kubectl" with subresource "scale" using apps/v1: .spec.replicas');
  assert.deepEqual(err.details?.causes, [{ reason: 'FieldManagerConflict', message: 'conflict with "kubectl" with subresource "scale" using apps/v1', field: '.spec.replicas' }]);
  const forced = applyManagedFields(ctx(), live, config(3), 'ssa', true);
  assert.equal((forced.spec as Json).replicas, 3);
  assert.equal(entry(forced, 'kubectl', 'Update'), undefined, 'the scaler lost its only field');
});

test('several conflicts are listed by manager', () => {
  let live = applyManagedFields(ctx(), undefined, config(2), 'a', false);
  live = applyManagedFields(ctx(), live, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', labels: { x: '1' } } }, 'b', false);
  const next = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', labels: { x: '2' } }, spec: { replicas: 9 } };
  assert.throws(() => applyManagedFields(ctx(), live, next, 'c', false), (e: StatusError) => e.message === 'Apply failed with 2 conflicts: conflict with "a":\n- .spec.replicas\nconflict with "b":\n- .metadata.labels.x');
});

test('a no-op apply keeps the entry’s time; the manager comes from fieldManager or the User-Agent', () => {
  const first = applyManagedFields(ctx(), undefined, config(2), 'ssa', false);
  const again = applyManagedFields(ctx({ now: Date.UTC(2027, 0, 1) }), first, config(2), 'ssa', false);
  assert.deepEqual(again.metadata.managedFields, first.metadata.managedFields);
  assert.equal(managerOf(undefined, 'kubectl/v1.32.0 (linux/amd64) kubernetes/abc'), 'kubectl');
  assert.equal(managerOf('mine', 'kubectl/v1.32.0'), 'mine');
  assert.equal(managerOf(undefined, 'x'.repeat(200)).length, 128);
});

test('kubectl’s upgrade from client-side apply: fields the annotation holds at their live values are no conflict; the annotation follows the apply', () => {
  const cm = (data: Json, annotation?: Json): ApiObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', ...(annotation ? { annotations: { [LAST_APPLIED]: JSON.stringify(annotation) } } : {}) }, data });
  const c = ctx({ types: typesOfKind('ConfigMap'), apiVersion: 'v1', statusSubresource: false });
  const live = cm({ a: '1', b: '2' }, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '1' } });
  live.metadata.managedFields = updateManagedFields(c, undefined, live, 'kubectl-client-side-apply');
  const out = applyWithLastApplied(c, live, cm({ a: '3' }), 'kubectl', false);
  assert.equal((out.data as Json).a, '3');
  assert.equal(out.metadata.annotations?.[LAST_APPLIED], '{"apiVersion":"v1","data":{"a":"3"},"kind":"ConfigMap","metadata":{"name":"c"}}');
  // b was changed by hand since (not in the annotation): a conflict still; another manager gets no upgrade at all.
  assert.throws(() => applyWithLastApplied(c, live, cm({ a: '3', b: '9' }), 'kubectl', false), /^StatusError: Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: \.data\.b$/);
  assert.throws(() => applyWithLastApplied(c, live, cm({ a: '3' }), 'ci', false), /conflict with "kubectl-client-side-apply" using v1: \.data\.a/);
});

test('managedFields a request carries: unreadable ones are ignored, [{}] clears them, more than 10 Update managers merge into ancient-changes', () => {
  const c = ctx({ types: typesOfKind('ConfigMap'), apiVersion: 'v1', statusSubresource: false });
  let live: ApiObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '1' } };
  live.metadata.managedFields = updateManagedFields(c, undefined, live, 'creator');
  const bad = structuredClone(live);
  bad.metadata.managedFields = [{ manager: 'x', operation: 'Nope' as 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': {} } }];
  assert.deepEqual(updateManagedFields(c, live, bad, 'creator'), live.metadata.managedFields);
  const cleared = structuredClone(live);
  cleared.metadata.managedFields = [{}];
  assert.deepEqual(updateManagedFields(c, live, cleared, 'creator'), []);
  for (let i = 0; i < 12; i++) {
    const next = structuredClone(live);
    (next.data as Json)[`k${i}`] = 'v';
    next.metadata.managedFields = updateManagedFields({ ...c, now: c.now + i * 1000 }, live, next, `writer-${i}`);
    live = next;
  }
  const managers = (live.metadata.managedFields ?? []).map((e) => e.manager);
  assert.equal(managers.length, 10);
  assert.deepEqual(managers.slice(0, 2), ['ancient-changes', 'writer-3']);
  const ancient = live.metadata.managedFields![0]!;
  assert.deepEqual(Object.keys((ancient.fieldsV1 as { 'f:data': object })['f:data']), ['.', 'f:a', 'f:k0', 'f:k1', 'f:k2']);
  assert.equal(ancient.time, '2026-01-02T03:04:07Z', 'the newest time of what it merged');
});

test('an applied keyed list item without a key (and no default) or twice the same key is refused', () => {
  const svc = { spec: { ports: [{ port: 80 }, { name: 'x', protocol: 'UDP' }] } };
  assert.deepEqual(applyConfigErrors(typesOfKind('Service'), svc), ['.spec.ports: element 1: associative list with keys has an element that omits key field "port" (and doesn\'t have default value)']);
  const pod = { spec: { containers: [{ name: 'c', ports: [{ containerPort: 1 }, { containerPort: 1, protocol: 'TCP' }] }, { name: 'c' }] } };
  assert.deepEqual(applyConfigErrors(typesOfKind('Pod'), pod), [
    '.spec.containers[name="c"].ports: duplicate entries for key [containerPort=1,protocol="TCP"]',
    '.spec.containers: duplicate entries for key [name="c"]',
  ]);
});

test('ownership by subresource: the main resource never owns status, /status owns only status, labels and annotations', () => {
  const live = applyManagedFields(ctx(), undefined, { ...config(1), status: { replicas: 1 } }, 'ssa', false);
  assert.equal((entry(live, 'ssa')!.fieldsV1 as Json)['f:status'], undefined);
  const next = structuredClone(live);
  next.status = { replicas: 2 };
  next.metadata.labels = { ...next.metadata.labels, seen: 'yes' };
  (next.spec as Json).paused = true;
  next.metadata.managedFields = updateManagedFields(ctx({ subresource: 'status' }), live, next, 'controller');
  const e = next.metadata.managedFields.find((m) => m.manager === 'controller')!;
  assert.equal(e.subresource, 'status');
  assert.deepEqual(e.fieldsV1, { 'f:metadata': { 'f:labels': { 'f:seen': {} } }, 'f:status': { 'f:replicas': {} } });
});

test('a custom resource takes list and map types from its structural schema: a map-list merged by key, items owned apart', () => {
  const schema: StructuralSchema = {
    type: 'object',
    properties: {
      metadata: { type: 'object' },
      spec: {
        type: 'object',
        properties: {
          ports: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], items: { type: 'object', properties: { name: { type: 'string' }, port: { type: 'integer' } } } },
          tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
          args: { type: 'array', items: { type: 'string' } },
          selector: { type: 'object', 'x-kubernetes-map-type': 'atomic', additionalProperties: { type: 'string' } },
        },
      },
    },
  };
  const types = typesOfDef({ kind: 'Widget', custom: { storageApiVersion: 'example.com/v1', schema, listKind: 'WidgetList' } } as ResourceDef);
  const c = ctx({ types, apiVersion: 'example.com/v1', statusSubresource: false });
  const widget = (spec: Json): ApiObject => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', finalizers: ['f'] }, spec });
  assert.deepEqual(toFieldSet(types, widget({ ports: [{ name: 'a', port: 1 }], tags: ['x'], args: ['1'], selector: { k: 'v' } }) as Json).toFieldsV1(), {
    'f:apiVersion': {},
    'f:kind': {},
    'f:metadata': { 'f:finalizers': { 'v:"f"': {} }, 'f:name': {} },
    'f:spec': { 'f:args': {}, 'f:ports': { 'k:{"name":"a"}': { '.': {}, 'f:name': {}, 'f:port': {} } }, 'f:selector': {}, 'f:tags': { 'v:"x"': {} } },
  });
  // Two managers own different items of the keyed list: no conflict, both items stay.
  let live = applyManagedFields(c, undefined, widget({ ports: [{ name: 'a', port: 1 }] }), 'one', false);
  live = applyManagedFields(c, live, widget({ ports: [{ name: 'b', port: 2 }] }), 'two', false);
  assert.deepEqual((live.spec as Json).ports, [{ name: 'a', port: 1 }, { name: 'b', port: 2 }]);
  // A manager dropping its item removes it; the other's stays.
  live = applyManagedFields(c, live, widget({}), 'two', false);
  assert.deepEqual((live.spec as Json).ports, [{ name: 'a', port: 1 }]);
  // Changing another manager's item conflicts at the item's field.
  assert.throws(() => applyManagedFields(c, live, widget({ ports: [{ name: 'a', port: 9 }] }), 'two', false), (e: StatusError) => e.code === 409 && e.message.includes('.spec.ports[name="a"].port'));
});

// Pins the create path's managedFields byte for byte (key order included: it is the wire form)
// on a pod with keyed lists (containers, env, ports with a defaulted key, volumes, host aliases),
// sets, atomic lists, empty maps and a status the main resource does not own; then an Update
// and a /status write over it. Captured from the code before the field set was built by node
// instead of by path from the root (and the TypeInfo answers were memoised).
const richPod = (): ApiObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'ns', uid: 'u', resourceVersion: '5', labels: { app: 'a', 'x/y': 'z' }, annotations: {}, finalizers: ['a/b', 'c'], ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'o', uid: 'u1' }] },
  spec: {
    containers: [
      { name: 'main', image: 'i', command: ['sleep', '1'], env: [{ name: 'A', value: '1' }, { name: 'B', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }], ports: [{ containerPort: 80 }, { containerPort: 53, protocol: 'UDP' }], resources: { requests: { cpu: '1m' }, limits: {} }, volumeMounts: [{ name: 'v', mountPath: '/v' }] },
      { name: 'side', image: 'j', securityContext: {} },
    ],
    initContainers: [],
    volumes: [{ name: 'v', emptyDir: {} }, { name: 'w', configMap: { name: 'cm', items: [{ key: 'k', path: 'p' }] } }],
    tolerations: [{ key: 'k', operator: 'Exists' }],
    nodeSelector: { a: 'b' },
    imagePullSecrets: [{ name: 's' }],
    readinessGates: [{ conditionType: 'c' }],
    hostAliases: [{ ip: '1.2.3.4', hostnames: ['h'] }],
  },
  status: { phase: 'Pending', conditions: [{ type: 'Ready', status: 'False' }] },
});

test('managedFields of a pod create, an Update and a /status write, byte for byte', () => {
  const pc = (subresource = ''): WriteContext => ({ types: typesOfKind('Pod'), apiVersion: 'v1', subresource, statusSubresource: true, now: Date.UTC(2026, 0, 2, 3, 4, 5) });
  const created = richPod();
  created.metadata.managedFields = updateManagedFields(pc(), undefined, created, 'creator');
  assert.equal(created.metadata.managedFields.length, 1);
  assert.equal(JSON.stringify(created.metadata.managedFields[0]!.fieldsV1), "{\"f:metadata\":{\"f:annotations\":{},\"f:finalizers\":{\"v:\\\"a/b\\\"\":{},\"v:\\\"c\\\"\":{}},\"f:labels\":{\".\":{},\"f:app\":{},\"f:x/y\":{}},\"f:ownerReferences\":{\"k:{\\\"uid\\\":\\\"u1\\\"}\":{}}},\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"main\\\"}\":{\".\":{},\"f:command\":{},\"f:env\":{\"k:{\\\"name\\\":\\\"A\\\"}\":{\".\":{},\"f:name\":{},\"f:value\":{}},\"k:{\\\"name\\\":\\\"B\\\"}\":{\".\":{},\"f:name\":{},\"f:valueFrom\":{\"f:fieldRef\":{}}}},\"f:image\":{},\"f:name\":{},\"f:ports\":{\"k:{\\\"containerPort\\\":53,\\\"protocol\\\":\\\"UDP\\\"}\":{\".\":{},\"f:containerPort\":{},\"f:protocol\":{}},\"k:{\\\"containerPort\\\":80,\\\"protocol\\\":\\\"TCP\\\"}\":{\".\":{},\"f:containerPort\":{}}},\"f:resources\":{\"f:limits\":{},\"f:requests\":{\".\":{},\"f:cpu\":{}}},\"f:volumeMounts\":{\"k:{\\\"mountPath\\\":\\\"/v\\\"}\":{\".\":{},\"f:mountPath\":{},\"f:name\":{}}}},\"k:{\\\"name\\\":\\\"side\\\"}\":{\".\":{},\"f:image\":{},\"f:name\":{},\"f:securityContext\":{}}},\"f:hostAliases\":{\"k:{\\\"ip\\\":\\\"1.2.3.4\\\"}\":{\".\":{},\"f:hostnames\":{},\"f:ip\":{}}},\"f:imagePullSecrets\":{\"k:{\\\"name\\\":\\\"s\\\"}\":{}},\"f:nodeSelector\":{},\"f:readinessGates\":{},\"f:tolerations\":{},\"f:volumes\":{\"k:{\\\"name\\\":\\\"v\\\"}\":{\".\":{},\"f:emptyDir\":{},\"f:name\":{}},\"k:{\\\"name\\\":\\\"w\\\"}\":{\".\":{},\"f:configMap\":{\"f:items\":{},\"f:name\":{}},\"f:name\":{}}}}}");
  const next = structuredClone(created) as ApiObject & { spec: { containers: Json[] }; status: { phase: string; conditions: Json[] } };
  next.spec.containers[0]!.image = 'i2';
  next.spec.containers.push({ name: 'third', image: 'k' });
  delete next.metadata.labels!.app;
  next.status.phase = 'Running';
  next.metadata.managedFields = updateManagedFields(pc(), created, next, 'editor');
  const status = structuredClone(next);
  status.status.conditions[0]!.status = 'True';
  const entries = updateManagedFields(pc('status'), next, status, 'kubelet');
  assert.deepEqual(entries.map((e) => e.manager), ['creator', 'editor', 'kubelet']);
  assert.equal(JSON.stringify(entries[1]!.fieldsV1), "{\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"main\\\"}\":{\"f:image\":{}},\"k:{\\\"name\\\":\\\"third\\\"}\":{\".\":{},\"f:image\":{},\"f:name\":{}}}}}");
  assert.equal(JSON.stringify(entries[2]!.fieldsV1), "{\"f:status\":{\"f:conditions\":{\"k:{\\\"type\\\":\\\"Ready\\\"}\":{\"f:status\":{}}}}}");
  // The editor took the image of main; the label it removed left the creator.
  const creator = JSON.stringify(entries[0]!.fieldsV1);
  assert.equal(creator, "{\"f:metadata\":{\"f:annotations\":{},\"f:finalizers\":{\"v:\\\"a/b\\\"\":{},\"v:\\\"c\\\"\":{}},\"f:labels\":{\".\":{},\"f:x/y\":{}},\"f:ownerReferences\":{\"k:{\\\"uid\\\":\\\"u1\\\"}\":{}}},\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"main\\\"}\":{\".\":{},\"f:command\":{},\"f:env\":{\"k:{\\\"name\\\":\\\"A\\\"}\":{\".\":{},\"f:name\":{},\"f:value\":{}},\"k:{\\\"name\\\":\\\"B\\\"}\":{\".\":{},\"f:name\":{},\"f:valueFrom\":{\"f:fieldRef\":{}}}},\"f:name\":{},\"f:ports\":{\"k:{\\\"containerPort\\\":53,\\\"protocol\\\":\\\"UDP\\\"}\":{\".\":{},\"f:containerPort\":{},\"f:protocol\":{}},\"k:{\\\"containerPort\\\":80,\\\"protocol\\\":\\\"TCP\\\"}\":{\".\":{},\"f:containerPort\":{}}},\"f:resources\":{\"f:limits\":{},\"f:requests\":{\".\":{},\"f:cpu\":{}}},\"f:volumeMounts\":{\"k:{\\\"mountPath\\\":\\\"/v\\\"}\":{\".\":{},\"f:mountPath\":{},\"f:name\":{}}}},\"k:{\\\"name\\\":\\\"side\\\"}\":{\".\":{},\"f:image\":{},\"f:name\":{},\"f:securityContext\":{}}},\"f:hostAliases\":{\"k:{\\\"ip\\\":\\\"1.2.3.4\\\"}\":{\".\":{},\"f:hostnames\":{},\"f:ip\":{}}},\"f:imagePullSecrets\":{\"k:{\\\"name\\\":\\\"s\\\"}\":{}},\"f:nodeSelector\":{},\"f:readinessGates\":{},\"f:tolerations\":{},\"f:volumes\":{\"k:{\\\"name\\\":\\\"v\\\"}\":{\".\":{},\"f:emptyDir\":{},\"f:name\":{}},\"k:{\\\"name\\\":\\\"w\\\"}\":{\".\":{},\"f:configMap\":{\"f:items\":{},\"f:name\":{}},\"f:name\":{}}}}}");
});
