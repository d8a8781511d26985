import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod } from '@nodelet/api';
import { noopLogger } from '@nodelet/base';
import { PodCgroups } from './pod-cgroups.js';

// A directory tree shaped like cgroup mounts: plain files stand in for the cgroup interface files.
async function fakeMounts(version: 'v1' | 'v2'): Promise<{ dir: string; mounts: ConstructorParameters<typeof PodCgroups>[0]['mounts'] }> {
  const dir = await mkdtemp(join(tmpdir(), 'pod-cgroups-'));
  if (version === 'v2') {
    await mkdir(join(dir, 'unified'));
    return { dir, mounts: { v1: new Map(), v2: { mount: join(dir, 'unified'), root: '/' } } };
  }
  const v1 = new Map<string, { mount: string; root: string }>();
  for (const c of ['cpu', 'memory', 'pids', 'freezer']) {
    await mkdir(join(dir, c));
    v1.set(c, { mount: join(dir, c), root: '/' });
  }
  return { dir, mounts: { v1 } };
}

const guaranteed: Pod = { metadata: { uid: '1111', name: 'g', namespace: 'ns' }, spec: { containers: [{ name: 'c', image: 'i', resources: { limits: { cpu: '1', memory: '64Mi' } } }] } };
const burstable: Pod = { metadata: { uid: '2222', name: 'b', namespace: 'ns' }, spec: { containers: [{ name: 'c', image: 'i', resources: { requests: { cpu: '250m' } } }] } };
const removeDir = (d: string): Promise<void> => rm(d, { recursive: true });
const read = (p: string): Promise<string> => readFile(p, 'utf8');
const exists = (p: string): Promise<boolean> => stat(p).then(() => true, () => false);

test('cgroup v1: QoS tree, pod limits per controller, QoS shares, removal in every hierarchy', async (t) => {
  const { dir, mounts } = await fakeMounts('v1');
  t.after(() => rm(dir, { recursive: true, force: true }));
  const cg = new PodCgroups({ cgroupRoot: '/test', podPidsLimit: 100, log: noopLogger, mounts, removeDir, allocatable: { cpuMilli: 1900, memoryBytes: 3 * 1024 ** 3 } });
  await cg.init();
  assert.equal(await read(join(dir, 'cpu/test/kubepods/cpu.shares')), '1945', 'node allocatable: 1.9 cores');
  assert.equal(await read(join(dir, 'memory/test/kubepods/memory.limit_in_bytes')), String(3 * 1024 ** 3));
  assert.equal(await read(join(dir, 'cpu/test/kubepods/besteffort/cpu.shares')), '2');
  assert.equal(await cg.ensure(guaranteed), '/test/kubepods/pod1111');
  assert.equal(await read(join(dir, 'memory/test/kubepods/pod1111/memory.limit_in_bytes')), String(64 * 1024 * 1024));
  assert.equal(await read(join(dir, 'cpu/test/kubepods/pod1111/cpu.cfs_quota_us')), '100000');
  assert.equal(await read(join(dir, 'pids/test/kubepods/pod1111/pids.max')), '100');
  assert.equal(await cg.ensure(burstable), '/test/kubepods/burstable/pod2222');
  assert.equal(await read(join(dir, 'cpu/test/kubepods/burstable/cpu.shares')), '256');
  assert.equal(await read(join(dir, 'memory/test/kubepods/burstable/pod2222/memory.limit_in_bytes')), '-1');
  // runc makes the pod's directory (and a container's) in the other hierarchies too.
  await mkdir(join(dir, 'freezer/test/kubepods/burstable/pod2222/ctr'), { recursive: true });
  assert.deepEqual([...(await cg.podUIDs()).keys()].sort(), ['1111', '2222']);
  assert.deepEqual(await cg.cleanup((uid) => uid === '1111'), ['2222']);
  assert.equal(await exists(join(dir, 'freezer/test/kubepods/burstable/pod2222')), false);
  assert.equal(await exists(join(dir, 'cpu/test/kubepods/burstable/pod2222')), false);
  assert.equal(await exists(join(dir, 'cpu/test/kubepods/pod1111')), true);
  assert.equal(await read(join(dir, 'cpu/test/kubepods/burstable/cpu.shares')), '2', 'no Burstable pod left');
});

test('cgroup v2: controllers handed down, weight from shares, cpu.max, memory.max', async (t) => {
  const { dir, mounts } = await fakeMounts('v2');
  t.after(() => rm(dir, { recursive: true, force: true }));
  const cg = new PodCgroups({ cgroupRoot: '/', podPidsLimit: -1, log: noopLogger, mounts, removeDir });
  await cg.init();
  assert.equal(await read(join(dir, 'unified/kubepods/besteffort/cpu.weight')), '1');
  assert.equal(await read(join(dir, 'unified/kubepods/cgroup.subtree_control')), '+cpu +memory +pids');
  await cg.ensure(guaranteed);
  assert.equal(await read(join(dir, 'unified/kubepods/pod1111/cpu.max')), '100000 100000');
  assert.equal(await read(join(dir, 'unified/kubepods/pod1111/cpu.weight')), '39');
  assert.equal(await read(join(dir, 'unified/kubepods/pod1111/memory.max')), String(64 * 1024 * 1024));
  assert.equal(await read(join(dir, 'unified/kubepods/pod1111/pids.max')), 'max');
  assert.deepEqual(await cg.cleanup(() => false), ['1111']);
});

test('a process left in the cgroup of a pod that should not run is killed, as kubelet does, and the cgroup removed', async (t) => {
  const { dir, mounts } = await fakeMounts('v1');
  t.after(() => rm(dir, { recursive: true, force: true }));
  const killed: number[] = [];
  const cg = new PodCgroups({ cgroupRoot: '/', podPidsLimit: -1, log: noopLogger, mounts, removeDir, kill: (pid) => killed.push(pid) });
  await cg.init();
  await cg.ensure(burstable);
  await cg.ensure(guaranteed);
  // A container's cgroup inside the pod's, in two hierarchies; the same process in both.
  for (const h of ['memory', 'freezer']) {
    await mkdir(join(dir, h, 'kubepods/burstable/pod2222/ctr'), { recursive: true });
    await writeFile(join(dir, h, 'kubepods/burstable/pod2222/ctr/cgroup.procs'), '4242\n4243\n');
  }
  await writeFile(join(dir, 'memory/kubepods/pod1111/cgroup.procs'), '5151\n');
  assert.deepEqual(await cg.cleanup((uid) => uid === '1111'), ['2222']);
  assert.deepEqual(killed.sort(), [4242, 4243], 'only the unwanted pod\'s processes, each once');
});

test('an agent killed between the rmdirs of one pod\'s hierarchies: the next agent finds the pod cgroup where it is left, and removes it', async (t) => {
  const { dir, mounts } = await fakeMounts('v1');
  t.after(() => rm(dir, { recursive: true, force: true }));
  const before = new PodCgroups({ cgroupRoot: '/', podPidsLimit: -1, log: noopLogger, mounts, removeDir });
  await before.init();
  await before.ensure(burstable);
  await mkdir(join(dir, 'freezer/kubepods/burstable/pod2222'), { recursive: true });
  // The cleanup got as far as the cpu hierarchy (the first one) when the agent died.
  await rm(join(dir, 'cpu/kubepods/burstable/pod2222'), { recursive: true });

  const after = new PodCgroups({ cgroupRoot: '/', podPidsLimit: -1, log: noopLogger, mounts, removeDir });
  await after.init();
  assert.deepEqual([...(await after.podUIDs()).entries()], [['2222', 'kubepods/burstable/pod2222']]);
  assert.deepEqual(await after.cleanup(() => false), ['2222']);
  for (const h of ['cpu', 'memory', 'pids', 'freezer']) assert.equal(await exists(join(dir, h, 'kubepods/burstable/pod2222')), false, `${h} hierarchy`);
});
