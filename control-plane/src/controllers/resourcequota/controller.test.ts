// The resource quota controller against the real API server (its own identity and upstream
// role): it fills a new quota's status, gives usage back when a pod ends or an object is deleted,
// counts `count/<resource>.<group>` and scopes, and corrects a charge whose create never happened.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CONFIGMAPS, PODS, RESOURCEQUOTAS, type Pod, type ResourceQuota } from '@nodelet/api';
import { pollUntil } from '@nodelet/base';
import { startRealCluster, type RealCluster } from '../testing/real-cluster.js';
import { computeQuotaStatus } from './controller.js';

const used = async (c: RealCluster, name: string, want: Record<string, string>): Promise<void> => {
  let last: unknown;
  const sorted = (m: Record<string, string> = {}) => JSON.stringify(Object.entries(m).sort());
  await pollUntil(`quota ${name} used ${JSON.stringify(want)}`, async () => {
    const q = (await c.admin.resource(RESOURCEQUOTAS, 'default').get(name)) as ResourceQuota;
    last = q.status?.used;
    return sorted(q.status?.used) === sorted(want);
  }, { timeoutMs: 10_000, intervalMs: 25 }).catch((err: Error) => {
    throw new Error(`${err.message}; last ${JSON.stringify(last)}`);
  });
};
const pod = (name: string, o: Partial<Pod['spec']> = {}): Pod => ({ metadata: { name, namespace: 'default' }, spec: { containers: [{ name: 'app', image: 'busybox' }], ...o } });

describe('resourcequota controller on the real API server', () => {
  let c: RealCluster;
  before(async () => {
    c = await startRealCluster();
    await c.controllers(['serviceaccount', 'resourcequota']);
  });
  after(() => c.close());

  it('fills status, gives back what ended or was deleted, counts kinds and scopes', async () => {
    const quotas = c.admin.resource(RESOURCEQUOTAS, 'default');
    await quotas.create({ metadata: { name: 'all', namespace: 'default' }, spec: { hard: { pods: '3', 'count/configmaps': '10', 'count/deployments.apps': '2' } } });
    await quotas.create({ metadata: { name: 'be', namespace: 'default' }, spec: { hard: { pods: '3' }, scopes: ['BestEffort'] } });
    // The server's kube-root-ca.crt is the one ConfigMap of `default`.
    await used(c, 'all', { 'count/configmaps': '1', 'count/deployments.apps': '0', pods: '0' });
    await used(c, 'be', { pods: '0' });
    const pods = c.admin.resource(PODS, 'default');
    await pollUntil('default service account', async () => (await pods.create(pod('a')).then(() => true, () => false)), { timeoutMs: 10_000, intervalMs: 50 });
    await pods.create(pod('b', { containers: [{ name: 'app', image: 'busybox', resources: { requests: { cpu: '10m' } } }] }));
    await c.admin.resource(CONFIGMAPS, 'default').create({ metadata: { name: 'cm', namespace: 'default' } });
    await used(c, 'be', { pods: '1' });
    // A pod that ends uses nothing: the controller gives its slot back (admission never does).
    const a = (await pods.get('a')) as Pod;
    await pods.updateStatus({ ...a, status: { ...a.status, phase: 'Succeeded' } });
    await used(c, 'be', { pods: '0' });
    await pods.delete('b', { gracePeriodSeconds: 0 });
    await used(c, 'all', { 'count/configmaps': '2', 'count/deployments.apps': '0', pods: '0' });
  });

  it('counts from the objects, not from what was charged', async () => {
    const q: ResourceQuota = { metadata: { name: 'x' }, spec: { hard: { pods: '5', 'requests.memory': '1Gi', services: '2', 'services.nodeports': '4' } }, status: { used: { pods: '5' } } };
    const objects: Record<string, Array<Record<string, unknown>>> = {
      '/pods': [
        { metadata: {}, spec: { containers: [{ name: 'a', resources: { requests: { memory: '128Mi' } } }] } },
        { metadata: {}, spec: { containers: [{ name: 'a', resources: { requests: { memory: '128Mi' } } }] }, status: { phase: 'Failed' } },
      ],
      '/services': [{ metadata: {}, spec: { type: 'NodePort', ports: [{ port: 1 }, { port: 2 }] } }],
    };
    const status = await computeQuotaStatus(q, async (g, p) => objects[`${g}/${p}`] ?? [], 0);
    assert.deepEqual(status, { hard: q.spec!.hard, used: { pods: '1', 'requests.memory': '128Mi', services: '1', 'services.nodeports': '2' } });
  });
});
