// In-place pod resize on a real containerd (cgroupfs driver, the test's own cgroupRoot) driven by
// the real kubectl: `kubectl patch --subresource resize` raising a cpu limit changes the
// container's and the pod's CFS quota with no restart; a memory change under
// `resizePolicy: RestartContainer` restarts the container with the new limit; a resize beyond
// the node's allocatable is Infeasible and changes nothing. The test removes its cgroup tree.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdir, readFile, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PODS, type Pod } from '@nodelet/api';
import { pollUntil } from '@nodelet/base';
import { parseMountinfo } from '../../src/stats/cgroup.js';
import { getPod, podSpec, skipUnlessRoot, startHarness } from './harness.js';

const KUBECTL = process.env.NODELET_TEST_KUBECTL ?? '/usr/bin/kubectl';
const MiB = 1024 * 1024;

async function removeTree(dir: string): Promise<void> {
  const subs = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of subs) if (e.isDirectory()) await removeTree(join(dir, e.name));
  await rmdir(dir).catch(() => undefined);
}

test('pods/resize: cpu in place, memory with RestartContainer, Infeasible beyond the node', { timeout: 300_000 }, async (t) => {
  if (!skipUnlessRoot(t)) return;
  const mounts = parseMountinfo(await readFile('/proc/self/mountinfo', 'utf8'));
  const v1 = mounts.v1.has('cpu') && mounts.v1.has('memory');
  const root = `/nodelet-itest-resize-${process.pid}`;
  t.after(async () => {
    for (const m of new Set([...[...mounts.v1.values()].map((x) => x.mount), ...(mounts.v2 ? [mounts.v2.mount] : [])])) await removeTree(join(m, root));
  });
  const h = await startHarness('resize', { cgroupsPerQOS: true, cgroupRoot: root }, 58);
  t.after(() => h.stop());
  const kubectl = async (...args: string[]): Promise<string> => (await promisify(execFile)(KUBECTL, ['--kubeconfig', h.kubeconfigPath, ...args])).stdout;
  const dirOf = (controller: 'cpu' | 'memory', rel: string): string => join(v1 ? mounts.v1.get(controller)!.mount : mounts.v2!.mount, root, rel);
  const cpuQuota = async (rel: string): Promise<string> =>
    v1 ? (await readFile(join(dirOf('cpu', rel), 'cpu.cfs_quota_us'), 'utf8')).trim() : (await readFile(join(dirOf('cpu', rel), 'cpu.max'), 'utf8')).trim().split(' ')[0]!;
  const memLimit = async (rel: string): Promise<string> => (await readFile(join(dirOf('memory', rel), v1 ? 'memory.limit_in_bytes' : 'memory.max'), 'utf8')).trim();

  await h.api.create(PODS, podSpec(h, 'resized', {
    terminationGracePeriodSeconds: 0,
    containers: [{
      name: 'app', image: h.rt.images.busybox, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'],
      resources: { requests: { cpu: '50m', memory: '16Mi' }, limits: { cpu: '100m', memory: '32Mi' } },
      resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'NotRequired' }, { resourceName: 'memory', restartPolicy: 'RestartContainer' }],
    }],
  }));
  const running = (p: Pod): boolean => p.status?.phase === 'Running' && !!p.status.containerStatuses?.[0]?.state?.running;
  const pod = await pollUntil('pod running', async () => {
    const p = await getPod(h, 'resized');
    return running(p) ? p : undefined;
  }, { timeoutMs: 120_000 });
  const podRel = `kubepods/burstable/pod${pod.metadata.uid}`;
  const idOf = (p: Pod): string => p.status!.containerStatuses![0]!.containerID!.replace(/^.*:\/\//, '');
  const firstId = idOf(pod);
  assert.equal(await cpuQuota(`${podRel}/${firstId}`), '10000');
  assert.equal(await cpuQuota(podRel), '10000');
  assert.deepEqual(pod.status?.containerStatuses?.[0]?.allocatedResources, { cpu: '50m', memory: '16Mi' });

  // 1. cpu limit 100m → 300m in place: the container's and the pod's quota follow, no restart.
  await kubectl('patch', 'pod', 'resized', '--subresource', 'resize', '-p', '{"spec":{"containers":[{"name":"app","resources":{"limits":{"cpu":"300m"}}}]}}');
  const afterCpu = await pollUntil('cpu limit applied and reported', async () => {
    const p = await getPod(h, 'resized');
    const cs = p.status?.containerStatuses?.[0];
    if (cs?.resources?.limits?.cpu !== '300m' || p.status?.conditions?.some((c) => c.type.startsWith('PodResize'))) return undefined;
    return (await cpuQuota(`${podRel}/${firstId}`)) === '30000' ? p : undefined;
  }, { timeoutMs: 60_000 });
  assert.equal(await cpuQuota(podRel), '30000');
  assert.equal(afterCpu.status?.containerStatuses?.[0]?.restartCount, 0);
  assert.equal(idOf(afterCpu), firstId);

  // 2. memory limit 32Mi → 64Mi with RestartContainer: a new container with the new limit.
  await kubectl('patch', 'pod', 'resized', '--subresource', 'resize', '-p', '{"spec":{"containers":[{"name":"app","resources":{"limits":{"memory":"64Mi"}}}]}}');
  const afterMem = await pollUntil('container restarted with the new memory limit', async () => {
    const p = await getPod(h, 'resized');
    const cs = p.status?.containerStatuses?.[0];
    return cs?.restartCount === 1 && running(p) && cs.resources?.limits?.memory === '64Mi' ? p : undefined;
  }, { timeoutMs: 90_000 });
  assert.notEqual(idOf(afterMem), firstId);
  assert.equal(await memLimit(`${podRel}/${idOf(afterMem)}`), String(64 * MiB));
  assert.equal(await memLimit(podRel), String(64 * MiB));
  assert.equal(await cpuQuota(`${podRel}/${idOf(afterMem)}`), '30000', 'the restarted container keeps the resized cpu limit');

  // 3. Beyond the node: Infeasible, nothing changes.
  await kubectl('patch', 'pod', 'resized', '--subresource', 'resize', '-p', '{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"1000"},"limits":{"cpu":"1000"}}}]}}');
  const infeasible = await pollUntil('resize Infeasible', async () => {
    const p = await getPod(h, 'resized');
    return p.status?.conditions?.find((c) => c.type === 'PodResizePending' && c.reason === 'Infeasible') ? p : undefined;
  }, { timeoutMs: 60_000 });
  const cond = infeasible.status!.conditions!.find((c) => c.type === 'PodResizePending')!;
  assert.match(cond.message ?? '', /^Node didn't have enough capacity: cpu, requested: 1000000, capacity: \d+$/);
  assert.equal(infeasible.status?.containerStatuses?.[0]?.allocatedResources?.cpu, '50m');
  assert.equal(infeasible.status?.containerStatuses?.[0]?.restartCount, 1);
  assert.equal(await cpuQuota(`${podRel}/${idOf(afterMem)}`), '30000');

  await h.api.delete(PODS, 'resized', { namespace: 'default', gracePeriodSeconds: 0 });
  await pollUntil('pod gone', async () => getPod(h, 'resized').then(() => false, () => true), { timeoutMs: 90_000 });
  // The agent removes the pod cgroup (housekeeping) before the test's tree can go.
  await pollUntil('pod cgroup removed', async () => readdir(dirOf('memory', podRel)).then(() => false, () => true), { timeoutMs: 90_000 });
});
