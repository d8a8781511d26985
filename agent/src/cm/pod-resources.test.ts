import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '@nodelet/api';
import { milliCpuToQuota, milliCpuToShares, podCgroupPath, podCgroupResources, qosCgroupShares, sharesToWeight } from './pod-resources.js';

type R = { requests?: Record<string, string>; limits?: Record<string, string> };
const pod = (uid: string, cs: R[], extra: Partial<NonNullable<Pod['spec']>> = {}): Pod => ({
  metadata: { uid, name: uid, namespace: 'ns' },
  spec: { containers: cs.map((resources, i) => ({ name: `c${i}`, image: 'i', resources })), ...extra },
});

test('shares, quota and weight conversions (kubelet MilliCPUToShares/MilliCPUToQuota, OCI shares→weight)', () => {
  assert.equal(milliCpuToShares(0), 2);
  assert.equal(milliCpuToShares(1), 2);
  assert.equal(milliCpuToShares(1000), 1024);
  assert.equal(milliCpuToShares(300_000), 262_144);
  assert.equal(milliCpuToQuota(0), 0);
  assert.equal(milliCpuToQuota(5), 1000, 'at least 1 ms');
  assert.equal(milliCpuToQuota(1500), 150_000);
  assert.equal(sharesToWeight(2), 1);
  assert.equal(sharesToWeight(1024), 39);
  assert.equal(sharesToWeight(262_144), 10_000);
});

test('pod cgroup path by QoS class: Guaranteed directly under kubepods', () => {
  assert.equal(podCgroupPath(pod('g', [{ limits: { cpu: '1', memory: '1Gi' } }])), 'kubepods/podg');
  assert.equal(podCgroupPath(pod('b', [{ requests: { cpu: '100m' } }])), 'kubepods/burstable/podb');
  assert.equal(podCgroupPath(pod('e', [{}])), 'kubepods/besteffort/pode');
});

test('pod limits are the sum of container limits plus overhead, only when every container sets them', () => {
  const g = podCgroupResources(pod('g', [{ limits: { cpu: '1', memory: '100Mi' } }, { limits: { cpu: '500m', memory: '28Mi' } }], { overhead: { cpu: '250m', memory: '1Mi' } }), 4096);
  assert.deepEqual(g, { cpuShares: 1792, cpuQuotaUs: 175_000, cpuPeriodUs: 100_000, memoryLimitBytes: 129 * 1024 * 1024, pidsLimit: 4096 });
  const partial = podCgroupResources(pod('b', [{ requests: { cpu: '200m' }, limits: { memory: '64Mi' } }, { requests: { cpu: '100m' } }]), -1);
  assert.deepEqual(partial, { cpuShares: 307 }, 'one container without limits: no pod-level quota or memory limit');
  assert.deepEqual(podCgroupResources(pod('e', [{}]), -1), { cpuShares: 2 });
});

test('an init container asking more than the app containers sets the pod amount', () => {
  const p = pod('i', [{ limits: { cpu: '100m', memory: '10Mi' } }], {
    initContainers: [{ name: 'init', image: 'i', resources: { limits: { cpu: '2', memory: '5Mi' } } }],
  });
  const r = podCgroupResources(p, -1);
  assert.equal(r.cpuQuotaUs, 200_000);
  assert.equal(r.memoryLimitBytes, 10 * 1024 * 1024);
});

test('QoS-class shares: burstable = the Burstable pods\' CPU requests, besteffort 2', () => {
  const pods = [pod('a', [{ requests: { cpu: '1' } }]), pod('b', [{ requests: { cpu: '500m', memory: '1Mi' } }]), pod('g', [{ limits: { cpu: '4', memory: '1Gi' } }]), pod('e', [{}])];
  assert.deepEqual(qosCgroupShares(pods), { burstable: 1536, besteffort: 2 });
  assert.deepEqual(qosCgroupShares([]), { burstable: 2, besteffort: 2 });
});
