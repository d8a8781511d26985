// metrics.k8s.io on a real API server with a stand-in metrics source: discovery as kubectl top
// reads it, NodeMetrics/PodMetrics get and list with selectors, NotFound for objects without
// metrics, and authorization of the group's resources (the aggregated reader role).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PodUsage, Usage } from '../metrics/metrics-store.js';
import { startAuthTestServer, type AuthTestServer } from './auth/testing/auth-server.js';
import { goDuration, parseMetricsPath } from './metrics-api.js';

const T = Date.parse('2026-01-02T03:04:05Z');
const NODE_USAGE: Usage = { timeMs: T, windowMs: 15_000, cpuNanoCores: 1_234_567_891, memoryBytes: 512 * 1024 * 1024 };
const POD_USAGE: PodUsage = { timeMs: T, windowMs: 10_000, containers: [{ name: 'yes', cpuNanoCores: 998_000_000, memoryBytes: 50_331_648 }] };

describe('metrics.k8s.io', () => {
  let s: AuthTestServer;
  before(async () => {
    s = await startAuthTestServer({
      metrics: {
        node: (name) => (name === 'n1' ? NODE_USAGE : undefined),
        pod: (ns, name) => (ns === 'default' && (name === 'burn' || name === 'other') ? POD_USAGE : undefined),
      },
    });
    for (const name of ['n1', 'n2']) assert.equal((await s.call('admin', 'POST', '/api/v1/nodes', { metadata: { name, labels: { role: name === 'n1' ? 'a' : 'b' } } })).status, 201);
    for (const [name, app] of [['burn', 'burner'], ['other', 'idle'], ['quiet', 'burner']]) {
      const r = await s.call('admin', 'POST', '/api/v1/namespaces/default/pods', { metadata: { name, labels: { app } }, spec: { containers: [{ name: 'yes', image: 'busybox' }] } });
      assert.equal(r.status, 201, JSON.stringify(r.json));
    }
  });
  after(() => s.close());

  it('is in discovery: the group, its version and the two resources', async () => {
    const groups = await s.call('admin', 'GET', '/apis');
    const g = groups.json.groups.find((x: { name: string }) => x.name === 'metrics.k8s.io');
    assert.deepEqual(g, { name: 'metrics.k8s.io', versions: [{ groupVersion: 'metrics.k8s.io/v1beta1', version: 'v1beta1' }], preferredVersion: { groupVersion: 'metrics.k8s.io/v1beta1', version: 'v1beta1' } });
    const list = await s.call('admin', 'GET', '/apis/metrics.k8s.io/v1beta1');
    assert.deepEqual(list.json.resources.map((r: Record<string, unknown>) => [r.name, r.namespaced, r.kind, r.verbs]), [['nodes', false, 'NodeMetrics', ['get', 'list']], ['pods', true, 'PodMetrics', ['get', 'list']]]);
    const agg = await s.call('admin', 'GET', '/apis', undefined, { Accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' });
    assert.ok(agg.json.items.some((i: { metadata: { name: string } }) => i.metadata.name === 'metrics.k8s.io'));
  });

  it('serves NodeMetrics: get, list, label selector, NotFound without metrics', async () => {
    const one = await s.call('admin', 'GET', '/apis/metrics.k8s.io/v1beta1/nodes/n1');
    assert.equal(one.status, 200);
    assert.deepEqual({ ...one.json, metadata: { ...one.json.metadata, creationTimestamp: undefined } }, {
      kind: 'NodeMetrics', apiVersion: 'metrics.k8s.io/v1beta1', metadata: { name: 'n1', labels: { role: 'a' }, creationTimestamp: undefined },
      timestamp: '2026-01-02T03:04:05Z', window: '15s', usage: { cpu: '1234567891n', memory: '512Mi' },
    });
    const list = await s.call('admin', 'GET', '/apis/metrics.k8s.io/v1beta1/nodes');
    assert.equal(list.json.kind, 'NodeMetricsList');
    assert.deepEqual(list.json.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['n1'], 'n2 has no metrics yet');
    const none = await s.call('admin', 'GET', '/apis/metrics.k8s.io/v1beta1/nodes?labelSelector=role%3Db');
    assert.deepEqual(none.json.items, []);
    const missing = await s.call('admin', 'GET', '/apis/metrics.k8s.io/v1beta1/nodes/n2');
    assert.deepEqual([missing.status, missing.json.reason, missing.json.message], [404, 'NotFound', 'nodemetrics.metrics.k8s.io "n2" not found']);
  });

  it('serves PodMetrics: namespaced and across namespaces, selectors, NotFound', async () => {
    const one = await s.call('admin', 'GET', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/burn');
    assert.equal(one.status, 200);
    assert.deepEqual([one.json.kind, one.json.metadata.namespace, one.json.metadata.labels, one.json.window, one.json.containers], [
      'PodMetrics', 'default', { app: 'burner' }, '10s', [{ name: 'yes', usage: { cpu: '998m', memory: '48Mi' } }],
    ]);
    const names = async (path: string): Promise<string[]> => (await s.call('admin', 'GET', path)).json.items.map((i: { metadata: { name: string } }) => i.metadata.name).sort();
    assert.deepEqual(await names('/apis/metrics.k8s.io/v1beta1/namespaces/default/pods'), ['burn', 'other']);
    assert.deepEqual(await names('/apis/metrics.k8s.io/v1beta1/pods'), ['burn', 'other']);
    assert.deepEqual(await names('/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app%3Dburner'), ['burn']);
    assert.deepEqual(await names('/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?fieldSelector=metadata.name%3Dother'), ['other']);
    assert.deepEqual(await names('/apis/metrics.k8s.io/v1beta1/namespaces/kube-system/pods'), []);
    const quiet = await s.call('admin', 'GET', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/quiet');
    assert.deepEqual([quiet.status, quiet.json.message], [404, 'podmetrics.metrics.k8s.io "default/quiet" not found']);
    const bad = await s.call('admin', 'GET', '/apis/metrics.k8s.io/v1beta1/pods?labelSelector=%3D%3D');
    assert.equal(bad.status, 400);
    assert.equal((await s.call('admin', 'GET', '/apis/metrics.k8s.io/v1beta1/pods?watch=true')).status, 405);
    assert.equal((await s.call('admin', 'DELETE', '/apis/metrics.k8s.io/v1beta1/nodes/n1')).status, 405);
    assert.equal((await s.call('admin', 'GET', '/apis/metrics.k8s.io/v1beta1/nodes/n1/extra')).status, 404);
  });

  it('is authorized as the group\'s resources: the aggregated reader role grants it', async () => {
    const denied = await s.call('bob', 'GET', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods');
    assert.equal(denied.status, 403);
    assert.match(denied.json.message, /cannot list resource "pods" in API group "metrics.k8s.io" in the namespace "default"/);
    const role = await s.call('admin', 'GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/system:aggregated-metrics-reader');
    assert.deepEqual(role.json.metadata.labels, {
      'kubernetes.io/bootstrapping': 'rbac-defaults',
      'rbac.authorization.k8s.io/aggregate-to-admin': 'true', 'rbac.authorization.k8s.io/aggregate-to-edit': 'true', 'rbac.authorization.k8s.io/aggregate-to-view': 'true',
    });
    const rb = await s.call('admin', 'POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', {
      metadata: { name: 'bob-metrics' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:aggregated-metrics-reader' },
      subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'bob' }],
    });
    assert.equal(rb.status, 201);
    assert.equal((await s.call('bob', 'GET', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods')).status, 200);
    assert.equal((await s.call('bob', 'GET', '/apis/metrics.k8s.io/v1beta1/nodes')).status, 403, 'nodes are cluster-scoped: a RoleBinding does not reach them');
  });
});

describe('metrics path and window formats', () => {
  it('parses the group\'s paths and leaves others alone', () => {
    assert.equal(parseMetricsPath('/api/v1/pods'), undefined);
    assert.deepEqual(parseMetricsPath('/apis/metrics.k8s.io/v1beta1/nodes/'), { resource: 'nodes', name: undefined });
    assert.deepEqual(parseMetricsPath('/apis/metrics.k8s.io/v1beta1/namespaces/a/pods/b'), { resource: 'pods', namespace: 'a', name: 'b' });
    assert.throws(() => parseMetricsPath('/apis/metrics.k8s.io/v1beta1/services'), /could not find/);
    assert.throws(() => parseMetricsPath('/apis/metrics.k8s.io/v1beta1/nodes/%E0%A4%A'), /malformed/);
  });

  it('writes windows as Go durations', () => {
    assert.deepEqual([0, 500, 1000, 10_500, 60_000, 90_250, 3_600_000].map(goDuration), ['0s', '500ms', '1s', '10.5s', '1m0s', '1m30.25s', '1h0m0s']);
  });
});
