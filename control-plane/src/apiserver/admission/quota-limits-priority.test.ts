// ResourceQuota, LimitRanger and Priority admission through the real API machinery (test API
// server over HTTP, SQLite), plus LimitRanger's constraint messages table-driven.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer, type TestApiServer } from '../testing/test-server.js';
import { maxProblem, minProblem, ratioProblem } from './limit-ranger.js';

const podBody = (name: string, spec: Record<string, unknown> = {}, resources?: Record<string, unknown>) => ({
  metadata: { name },
  spec: { containers: [{ name: 'app', image: 'busybox', ...(resources ? { resources } : {}) }], ...spec },
});

describe('quota, limit and priority admission', () => {
  let t: TestApiServer;
  const createPod = (ns: string, name: string, spec?: Record<string, unknown>, resources?: Record<string, unknown>) => t.call('POST', `/api/v1/namespaces/${ns}/pods`, podBody(name, spec, resources));
  /** A quota whose status is counted (what the quota controller does; none runs here). */
  const quota = async (ns: string, name: string, spec: Record<string, unknown>, used: Record<string, string>) => {
    assert.equal((await t.call('POST', `/api/v1/namespaces/${ns}/resourcequotas`, { metadata: { name }, spec })).status, 201);
    const q = (await t.call('GET', `/api/v1/namespaces/${ns}/resourcequotas/${name}`)).json;
    const r = await t.call('PUT', `/api/v1/namespaces/${ns}/resourcequotas/${name}/status`, { ...q, status: { hard: spec.hard, used } });
    assert.equal(r.status, 200, JSON.stringify(r.json));
  };
  before(async () => {
    t = await startTestApiServer();
    for (const ns of ['q', 'scoped', 'unknown', 'lr', 'prio']) {
      assert.equal((await t.call('POST', '/api/v1/namespaces', { metadata: { name: ns } })).status, 201);
      // What the service-account controller would make (no controller runs here).
      assert.equal((await t.call('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name: 'default' } })).status, 201);
    }
  });
  after(() => t?.close());

  it('ResourceQuota: charges status.used, refuses over hard with upstream’s message, and a dry run charges nothing', async () => {
    await quota('q', 'compute', { hard: { pods: '2', 'requests.memory': '100Mi' } }, { pods: '0', 'requests.memory': '0' });
    assert.equal((await createPod('q', 'a', {}, { requests: { memory: '60Mi' } })).status, 201);
    const used = (await t.call('GET', '/api/v1/namespaces/q/resourcequotas/compute')).json.status.used;
    assert.deepEqual(used, { pods: '1', 'requests.memory': '60Mi' });
    const over = await createPod('q', 'b', {}, { requests: { memory: '60Mi' } });
    assert.equal(over.status, 403);
    assert.equal(over.json.message, 'pods "b" is forbidden: exceeded quota: compute, requested: requests.memory=60Mi, used: requests.memory=60Mi, limited: requests.memory=100Mi');
    const missing = await createPod('q', 'c');
    assert.equal(missing.json.message, 'pods "c" is forbidden: failed quota: compute: must specify requests.memory for: app');
    const dry = await t.call('POST', '/api/v1/namespaces/q/pods?dryRun=All', podBody('d', {}, { requests: { memory: '10Mi' } }));
    assert.equal(dry.status, 201);
    assert.deepEqual((await t.call('GET', '/api/v1/namespaces/q/resourcequotas/compute')).json.status.used, used);
  });

  it('ResourceQuota: scopes pick the pods a quota counts; an uncounted quota refuses until its status is known', async () => {
    await quota('scoped', 'best-effort', { hard: { pods: '1' }, scopes: ['BestEffort'] }, { pods: '1' });
    assert.equal((await createPod('scoped', 'burstable', {}, { requests: { cpu: '10m' } })).status, 201, 'not best effort: not counted');
    assert.equal((await createPod('scoped', 'be')).json.message, 'pods "be" is forbidden: exceeded quota: best-effort, requested: pods=1, used: pods=1, limited: pods=1');
    assert.equal((await t.call('POST', '/api/v1/namespaces/unknown/resourcequotas', { metadata: { name: 'fresh' }, spec: { hard: { 'count/configmaps': '3' } } })).status, 201);
    const cm = await t.call('POST', '/api/v1/namespaces/unknown/configmaps', { metadata: { name: 'x' } });
    assert.equal(cm.status, 403);
    assert.equal(cm.json.message, 'configmaps "x" is forbidden: status unknown for quota: fresh, resources: count/configmaps');
    const bad = await t.call('POST', '/api/v1/namespaces/unknown/resourcequotas', { metadata: { name: 'bad' }, spec: { hard: { pods: '1' }, scopes: ['Terminating', 'NotTerminating'] } });
    assert.equal(bad.status, 422);
  });

  it('LimitRanger: defaults, the annotation and qosClass; min refused; Pod max on the totals', async () => {
    const lr = { metadata: { name: 'l' }, spec: { limits: [{ type: 'Container', max: { memory: '1Gi' }, min: { cpu: '50m' }, default: { cpu: '500m' }, defaultRequest: { cpu: '100m' } }, { type: 'Pod', max: { cpu: '1' } }] } };
    const created = await t.call('POST', '/api/v1/namespaces/lr/limitranges', lr);
    assert.equal(created.status, 201);
    assert.deepEqual(created.json.spec.limits[0].default, { cpu: '500m', memory: '1Gi' }, 'a Container item’s default takes its max');
    const p = await createPod('lr', 'filled');
    assert.equal(p.status, 201, JSON.stringify(p.json));
    assert.deepEqual(p.json.spec.containers[0].resources, { requests: { cpu: '100m', memory: '1Gi' }, limits: { cpu: '500m', memory: '1Gi' } });
    assert.equal(p.json.metadata.annotations['kubernetes.io/limit-ranger'], 'LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app');
    assert.equal(p.json.status.qosClass, 'Burstable');
    assert.equal((await createPod('lr', 'small', {}, { requests: { cpu: '10m' } })).json.message, 'pods "small" is forbidden: minimum cpu usage per Container is 50m, but request is 10m');
    const two = await t.call('POST', '/api/v1/namespaces/lr/pods', { metadata: { name: 'two' }, spec: { containers: ['a', 'b'].map((n) => ({ name: n, image: 'x', resources: { limits: { cpu: '600m' } } })) } });
    assert.equal(two.json.message, 'pods "two" is forbidden: maximum cpu usage per Pod is 1, but limit is 1200m');
    const claims = { metadata: { name: 'claims' }, spec: { limits: [{ type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, max: { storage: '2Gi' } }] } };
    assert.equal((await t.call('POST', '/api/v1/namespaces/lr/limitranges', claims)).status, 201);
    const pvc = (name: string, storage: string) => t.call('POST', '/api/v1/namespaces/lr/persistentvolumeclaims', { metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } } });
    assert.equal((await pvc('small', '500Mi')).json.message, 'persistentvolumeclaims "small" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi');
    assert.equal((await pvc('large', '3Gi')).json.message, 'persistentvolumeclaims "large" is forbidden: maximum storage usage per PersistentVolumeClaim is 2Gi, but request is 3Gi');
    assert.equal((await pvc('fits', '1Gi')).status, 201);
  });

  it('LimitRanger messages, as upstream’s', () => {
    const cases: Array<[string | undefined, string | undefined]> = [
      [minProblem('Container', 'cpu', '100m', {}, {}), 'minimum cpu usage per Container is 100m.  No request is specified'],
      [minProblem('Container', 'cpu', '100m', { cpu: '200m' }, { cpu: '50m' }), 'minimum cpu usage per Container is 100m, but limit is 50m'],
      [maxProblem('Container', 'memory', '1Gi', {}, {}), 'maximum memory usage per Container is 1Gi.  No limit is specified'],
      [maxProblem('Container', 'memory', '1Gi', { memory: '2Gi' }, { memory: '1Gi' }), 'maximum memory usage per Container is 1Gi, but request is 2Gi'],
      [ratioProblem('Container', 'cpu', '2', { cpu: '100m' }, { cpu: '400m' }), 'cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000'],
      [ratioProblem('Container', 'cpu', '2', {}, { cpu: '400m' }), 'cpu max limit to request ratio per Container is 2, but no request is specified or request is 0'],
      [ratioProblem('Container', 'cpu', '2', { cpu: '100m' }, { cpu: '200m' }), undefined],
    ];
    for (const [got, want] of cases) assert.equal(got, want);
  });

  it('Priority: built-in classes exist; a class resolves, the default applies, a wrong priority or unknown class is refused', async () => {
    const system = (await t.call('GET', '/apis/scheduling.k8s.io/v1/priorityclasses/system-node-critical')).json;
    assert.equal(system.value, 2000001000);
    assert.equal((await t.call('DELETE', '/apis/scheduling.k8s.io/v1/priorityclasses/system-node-critical')).status, 403);
    const reserved = await t.call('POST', '/apis/scheduling.k8s.io/v1/priorityclasses', { metadata: { name: 'system-mine' }, value: 5 });
    assert.equal(reserved.status, 422);
    assert.equal((await t.call('POST', '/apis/scheduling.k8s.io/v1/priorityclasses', { metadata: { name: 'batch' }, value: 100, globalDefault: true })).status, 201);
    const dflt = await createPod('prio', 'plain');
    assert.equal(dflt.json.spec.priorityClassName, 'batch');
    assert.equal(dflt.json.spec.priority, 100);
    assert.equal(dflt.json.spec.preemptionPolicy, 'PreemptLowerPriority');
    const crit = await createPod('prio', 'crit', { priorityClassName: 'system-cluster-critical' });
    assert.equal(crit.json.spec.priority, 2000000000);
    const wrong = await createPod('prio', 'wrong', { priorityClassName: 'batch', priority: 7 });
    assert.equal(wrong.json.message, 'pods "wrong" is forbidden: the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 100 from the given PriorityClass name');
    assert.equal((await createPod('prio', 'nope', { priorityClassName: 'nope' })).json.message, 'pods "nope" is forbidden: no PriorityClass with name nope was found');
  });
});
