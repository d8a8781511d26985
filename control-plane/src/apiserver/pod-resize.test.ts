// pods/resize (in-place pod resize, KEP 1287) through the real API server (HTTP on port 0, SQLite
// in a temp dir): GET/PUT/PATCH (strategic merge, JSON patch, merge patch) change only the app
// containers' cpu/memory requests and limits; upstream's ValidatePodResize messages; RBAC checks
// the subresource; a plain update of resources stays refused.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer, type TestApiServer } from './testing/test-server.js';

const NS = '/api/v1/namespaces/default/pods';
const SMP = 'application/strategic-merge-patch+json';
const ALICE = 'alice-token';

describe('pods/resize', () => {
  let srv: TestApiServer;
  const res = (cpuReq: string, cpuLim: string) => ({ requests: { cpu: cpuReq, memory: '64Mi' }, limits: { cpu: cpuLim, memory: '128Mi' } });
  const podOf = (name: string, extra: Record<string, unknown> = {}) => ({
    metadata: { name, labels: { a: '1' }, ...extra },
    spec: { containers: [{ name: 'c', image: 'busybox', resources: res('100m', '200m') }, { name: 'd', image: 'busybox' }] },
  });
  const causes = (r: { json: { details?: { causes?: Array<{ reason: string; field: string; message: string }> } } }): string[] =>
    (r.json.details?.causes ?? []).map((c) => `${c.reason} ${c.field}: ${c.message}`);

  before(async () => {
    srv = await startTestApiServer({ tokens: new Map([[ALICE, { name: 'alice', groups: ['system:authenticated'] }]]) });
  });
  after(async () => {
    await srv?.close();
  });

  async function create(name: string, extra: Record<string, unknown> = {}): Promise<void> {
    const r = await srv.call('POST', NS, podOf(name, extra));
    assert.equal(r.status, 201, JSON.stringify(r.json));
  }

  it('discovery lists pods/resize with get, patch, update', async () => {
    const list = await srv.call('GET', '/api/v1');
    const sub = (list.json.resources as Array<{ name: string; verbs: string[]; kind: string }>).find((r) => r.name === 'pods/resize');
    assert.ok(sub);
    assert.deepEqual([...sub.verbs].sort(), ['get', 'patch', 'update']);
    assert.equal(sub.kind, 'Pod');
  });

  it('a strategic merge patch changes cpu and memory of one container and nothing else', async () => {
    await create('smp');
    const r = await srv.call('PATCH', `${NS}/smp/resize`, {
      metadata: { labels: { a: '2' } },
      spec: { containers: [{ name: 'c', image: 'other', resources: { requests: { cpu: '150m', memory: '96Mi' }, limits: { cpu: '300m', memory: '256Mi' } } }], activeDeadlineSeconds: 5 },
      status: { phase: 'Running' },
    }, { contentType: SMP });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.deepEqual(r.json.spec.containers[0].resources, { requests: { cpu: '150m', memory: '96Mi' }, limits: { cpu: '300m', memory: '256Mi' } });
    assert.equal(r.json.spec.containers[0].image, 'busybox', 'only resources change through the subresource');
    assert.equal(r.json.spec.containers[1].name, 'd');
    assert.equal(r.json.spec.activeDeadlineSeconds, undefined);
    assert.equal(r.json.metadata.labels.a, '1');
    assert.equal(r.json.status.phase, 'Pending');
    const got = await srv.call('GET', `${NS}/smp/resize`);
    assert.equal(got.status, 200);
    assert.equal(got.json.kind, 'Pod');
    assert.equal(got.json.spec.containers[0].resources.limits.cpu, '300m');
    assert.equal(got.json.metadata.generation, 1, 'the generation is not bumped (1.33)');
  });

  it('PUT of the whole pod and a JSON patch resize too', async () => {
    await create('put');
    const got = await srv.call('GET', `${NS}/put`);
    got.json.spec.containers[0].resources = res('120m', '250m');
    const put = await srv.call('PUT', `${NS}/put/resize`, got.json);
    assert.equal(put.status, 200, JSON.stringify(put.json));
    assert.equal(put.json.spec.containers[0].resources.limits.cpu, '250m');
    const jp = await srv.call('PATCH', `${NS}/put/resize`, [{ op: 'replace', path: '/spec/containers/0/resources/limits/cpu', value: '1' }], { contentType: 'application/json-patch+json' });
    assert.equal(jp.status, 200, JSON.stringify(jp.json));
    assert.equal(jp.json.spec.containers[0].resources.limits.cpu, '1');
  });

  it('resources other than cpu and memory are refused with upstream message', async () => {
    await create('eph');
    const r = await srv.call('PATCH', `${NS}/eph/resize`, { spec: { containers: [{ name: 'c', resources: { limits: { 'ephemeral-storage': '1Gi' } } }] } }, { contentType: SMP });
    assert.equal(r.status, 422, JSON.stringify(r.json));
    assert.deepEqual(causes(r), ['FieldValueForbidden spec: Forbidden: only cpu and memory resources are mutable']);
  });

  it('a change of QoS class is refused', async () => {
    await create('qos');
    // Burstable → Guaranteed: requests equal to limits for every container (d has none: stays Burstable), so drop c's to BestEffort instead.
    const r = await srv.call('PATCH', `${NS}/qos/resize`, [{ op: 'remove', path: '/spec/containers/0/resources' }], { contentType: 'application/json-patch+json' });
    assert.equal(r.status, 422, JSON.stringify(r.json));
    assert.deepEqual(causes(r), ['FieldValueInvalid spec: Invalid value: "Burstable": Pod QoS is immutable']);
  });

  it('limits below requests are refused by the spec validation', async () => {
    await create('lim');
    const r = await srv.call('PATCH', `${NS}/lim/resize`, { spec: { containers: [{ name: 'c', resources: { limits: { cpu: '50m' } } }] } }, { contentType: SMP });
    assert.equal(r.status, 422);
    assert.deepEqual(causes(r), ['FieldValueInvalid spec.containers[0].resources.requests[cpu]: Invalid value: "100m": must be less than or equal to cpu limit of 50m']);
  });

  it('a static (mirror) pod cannot be resized', async () => {
    await create('mirror', { annotations: { 'kubernetes.io/config.mirror': 'x' } });
    const r = await srv.call('PATCH', `${NS}/mirror/resize`, { spec: { containers: [{ name: 'c', resources: { limits: { cpu: '300m' } } }] } }, { contentType: SMP });
    assert.equal(r.status, 422, JSON.stringify(r.json));
    assert.deepEqual(causes(r), ['FieldValueForbidden : Forbidden: static pods cannot be resized']);
  });

  it('resizePolicy is validated on create', async () => {
    const pod = podOf('pol');
    (pod.spec.containers[0] as Record<string, unknown>).resizePolicy = [{ resourceName: 'cpu', restartPolicy: 'Sometimes' }, { resourceName: 'gpu', restartPolicy: 'NotRequired' }];
    const r = await srv.call('POST', NS, pod);
    assert.equal(r.status, 422);
    assert.deepEqual(causes(r), [
      'FieldValueNotSupported spec.containers[0].resizePolicy[0].restartPolicy: Unsupported value: "Sometimes": supported values: "NotRequired", "RestartContainer"',
      'FieldValueNotSupported spec.containers[0].resizePolicy[1].resourceName: Unsupported value: "gpu": supported values: "cpu", "memory"',
    ]);
  });

  it('RBAC authorizes the subresource, not pods', async () => {
    await create('rbac');
    const role = (name: string, resources: string[]) => ({ metadata: { name }, rules: [{ apiGroups: [''], resources, verbs: ['get', 'patch'] }] });
    const bind = (name: string) => ({ metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name }, subjects: [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' }] });
    const rbac = '/apis/rbac.authorization.k8s.io/v1/namespaces/default';
    assert.equal((await srv.call('POST', `${rbac}/roles`, role('pods-only', ['pods']))).status, 201);
    assert.equal((await srv.call('POST', `${rbac}/rolebindings`, bind('pods-only'))).status, 201);
    const patch = { spec: { containers: [{ name: 'c', resources: { limits: { cpu: '300m' } } }] } };
    const denied = await srv.call('PATCH', `${NS}/rbac/resize`, patch, { contentType: SMP, token: ALICE });
    assert.equal(denied.status, 403, JSON.stringify(denied.json));
    assert.match(denied.json.message, /cannot patch resource "pods\/resize"/);
    assert.equal((await srv.call('POST', `${rbac}/roles`, role('resize', ['pods/resize']))).status, 201);
    assert.equal((await srv.call('POST', `${rbac}/rolebindings`, bind('resize'))).status, 201);
    const ok = await srv.call('PATCH', `${NS}/rbac/resize`, patch, { contentType: SMP, token: ALICE });
    assert.equal(ok.status, 200, JSON.stringify(ok.json));
  });

  it('ResourceQuota charges a resize that grows the requests', async () => {
    await srv.call('POST', '/api/v1/namespaces', { metadata: { name: 'quota' } });
    const QNS = '/api/v1/namespaces/quota';
    const q = await srv.call('POST', `${QNS}/resourcequotas`, { metadata: { name: 'q' }, spec: { hard: { 'requests.cpu': '300m' } } });
    assert.equal(q.status, 201, JSON.stringify(q.json));
    // The quota controller does not run here: its status is written as it would.
    q.json.status = { hard: { 'requests.cpu': '300m' }, used: { 'requests.cpu': '0' } };
    assert.equal((await srv.call('PUT', `${QNS}/resourcequotas/q/status`, q.json)).status, 200);
    assert.equal((await srv.call('POST', `${QNS}/serviceaccounts`, { metadata: { name: 'default' } })).status, 201);
    const one = podOf('qp');
    one.spec.containers.pop();
    const made = await srv.call('POST', `${QNS}/pods`, one);
    assert.equal(made.status, 201, JSON.stringify(made.json));
    const over = await srv.call('PATCH', `${QNS}/pods/qp/resize`, { spec: { containers: [{ name: 'c', resources: { requests: { cpu: '350m' }, limits: { cpu: '350m' } } }] } }, { contentType: SMP });
    assert.equal(over.status, 403, JSON.stringify(over.json));
    assert.equal(over.json.message, 'pods "qp" is forbidden: exceeded quota: q, requested: requests.cpu=250m, used: requests.cpu=100m, limited: requests.cpu=300m');
    const within = await srv.call('PATCH', `${QNS}/pods/qp/resize`, { spec: { containers: [{ name: 'c', resources: { requests: { cpu: '150m' } } }] } }, { contentType: SMP });
    assert.equal(within.status, 200, JSON.stringify(within.json));
    const used = await srv.call('GET', `${QNS}/resourcequotas/q`);
    assert.equal(used.json.status.used['requests.cpu'], '150m');
  });

  it('a plain patch of container resources stays refused by pod update validation', async () => {
    await create('plain');
    const r = await srv.call('PATCH', `${NS}/plain`, { spec: { containers: [{ name: 'c', resources: res('150m', '200m') }] } }, { contentType: SMP });
    assert.equal(r.status, 422);
  });
});
