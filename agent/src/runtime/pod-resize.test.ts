import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod, ResourceRequirements } from '@nodelet/api';
import { changedResources } from '../cm/pod-allocation.js';
import { actuateResize, type ResizeAllocation, type ResizeDeps } from './pod-resize.js';
import type { RuntimeService } from '../kubecontainer/cri.js';
import type { ObservedPod } from '../kubecontainer/observed.js';

const res = (cpu: string, mem: string): ResourceRequirements => ({ requests: { cpu, memory: mem }, limits: { cpu, memory: mem } });

function world(containers: Container[], acked: Record<string, ResourceRequirements>, fail?: string) {
  const calls: string[] = [];
  const errors: string[] = [];
  const acks = new Map(Object.entries(acked));
  const allocation: ResizeAllocation = {
    acknowledged: (_uid, name) => (acks.has(name) ? { known: true, resources: acks.get(name) } : { known: false, resources: undefined }),
    acknowledge: (_uid, name, _id, r) => void acks.set(name, r!),
    failed: (_uid, m) => void errors.push(m),
    changedResources,
  };
  const runtime = {
    updateContainerResources: async (req: { containerId: string; linux?: { cpuQuota?: string; memoryLimitInBytes?: string } }) => {
      if (req.containerId === fail) throw new Error('no');
      calls.push(`update ${req.containerId} quota=${req.linux?.cpuQuota} mem=${req.linux?.memoryLimitInBytes}`);
      return {};
    },
  } as unknown as RuntimeService;
  const deps: ResizeDeps = {
    runtime, allocation, nodeMemoryBytes: 1 << 30,
    podCgroups: { ensure: async () => (calls.push('pod cgroup'), '/x') },
    events: { event: (_p, type, reason) => void calls.push(`event ${type} ${reason}`) },
    stop: async (_p, id, _c, message) => void calls.push(`stop ${id}: ${message}`),
  };
  const pod: Pod = { metadata: { name: 'p', namespace: 'd', uid: 'u' }, spec: { containers } };
  const observed = { uid: 'u', name: 'p', namespace: 'd', sandboxes: [], containers: containers.map((c) => ({ id: `id-${c.name}`, name: c.name, type: 'regular', state: 'running' })) } as unknown as ObservedPod;
  return { calls, errors, acks, run: () => actuateResize(pod, observed, deps, new AbortController().signal) };
}

test('decreases go before the pod cgroup, increases after; a RestartContainer change stops the container', async () => {
  const w = world(
    [
      { name: 'up', resources: res('200m', '32Mi') },
      { name: 'down', resources: res('50m', '32Mi') },
      { name: 'same', resources: res('10m', '8Mi') },
      { name: 'mem', resources: res('10m', '64Mi'), resizePolicy: [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }] },
    ],
    { up: res('100m', '32Mi'), down: res('100m', '32Mi'), same: res('10m', '8Mi'), mem: res('10m', '32Mi') },
  );
  assert.equal(await w.run(), true);
  assert.deepEqual(w.calls, [
    'stop id-mem: Container mem resize requires restart',
    `update id-down quota=5000 mem=${32 << 20}`,
    'pod cgroup',
    `update id-up quota=20000 mem=${32 << 20}`,
  ]);
  assert.equal(w.acks.get('up')?.limits?.cpu, '200m');
  assert.equal(w.acks.get('mem')?.limits?.memory, '32Mi', 'a restarted container is acknowledged when it is created again');
});

test('nothing to do when every running container has its allocation; unknown ones get it once', async () => {
  const same = world([{ name: 'a', resources: res('10m', '8Mi') }], { a: res('10m', '8Mi') });
  assert.equal(await same.run(), false);
  const unknown = world([{ name: 'a', resources: res('10m', '8Mi') }], {});
  assert.equal(await unknown.run(), true);
  assert.deepEqual(unknown.calls, ['pod cgroup', `update id-a quota=1000 mem=${8 << 20}`]);
});

test('a failed decrease leaves the pod cgroup alone and is reported', async () => {
  const w = world([{ name: 'down', resources: res('50m', '32Mi') }], { down: res('100m', '32Mi') }, 'id-down');
  await w.run();
  assert.deepEqual(w.calls, ['event Warning ResizeError']);
  assert.match(w.errors[0]!, /^resize failed: container "down": .*no/);
});
