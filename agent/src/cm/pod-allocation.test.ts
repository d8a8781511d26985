import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, PodStatus } from '@nodelet/api';
import { PodAllocation } from './pod-allocation.js';

const pod = (uid: string, cpu: string, limit = cpu): Pod => ({
  metadata: { name: uid, namespace: 'default', uid },
  spec: { containers: [{ name: 'c', image: 'i', resources: { requests: { cpu, memory: '10Mi' }, limits: { cpu: limit, memory: '10Mi' } } }] },
});

function setup(others: Pod[] = []) {
  const woken: string[] = [];
  const a = new PodAllocation({ allocatable: () => ({ cpu: '2', memory: '1Gi', pods: '10' }), activePods: () => others, wake: (uid) => woken.push(uid), now: () => Date.parse('2026-01-01T00:00:00Z') });
  return { a, woken };
}

const cpuOf = (p: Pod): string | undefined => p.spec?.containers[0]?.resources?.requests?.cpu;
const runningStatus = (id: string): PodStatus => ({ containerStatuses: [{ name: 'c', ready: true, restartCount: 0, image: 'i', imageID: 'i', containerID: `containerd://${id}`, state: { running: {} } }] });

test('the first sync allocates the spec; a resize that fits is allocated at once', () => {
  const { a } = setup();
  assert.equal(cpuOf(a.allocate(pod('p', '500m'))), '500m');
  assert.equal(cpuOf(a.allocate(pod('p', '1'))), '1');
  assert.equal(cpuOf(a.allocatedPod(pod('p', '1500m'))), '1', 'allocatedPod does not allocate');
});

test('beyond allocatable is Infeasible and keeps the allocation; the condition says why', () => {
  const { a } = setup();
  a.allocate(pod('p', '500m'));
  const run = a.allocate(pod('p', '3'));
  assert.equal(cpuOf(run), '500m');
  const status = runningStatus('x');
  a.acknowledge('p', 'c', 'x', run.spec!.containers[0]!.resources);
  a.report(pod('p', '3'), status);
  assert.deepEqual(status.conditions?.map((c) => [c.type, c.reason, c.message]), [['PodResizePending', 'Infeasible', "Node didn't have enough capacity: cpu, requested: 3000, capacity: 2000"]]);
  assert.deepEqual(status.containerStatuses?.[0]?.allocatedResources, { cpu: '500m', memory: '10Mi' });
  assert.deepEqual(status.containerStatuses?.[0]?.resources, { limits: { cpu: '500m', memory: '10Mi' }, requests: { cpu: '500m', memory: '10Mi' } });
});

test('beside the other pods it is Deferred, and looked at again when a pod stops', () => {
  const other = pod('o', '1');
  const { a, woken } = setup([other]);
  a.allocate(other);
  a.allocate(pod('p', '500m'));
  assert.equal(cpuOf(a.allocate(pod('p', '1500m'))), '500m');
  const status: PodStatus = {};
  a.report(pod('p', '1500m'), status);
  assert.deepEqual(status.conditions?.map((c) => [c.type, c.reason, c.message]), [['PodResizePending', 'Deferred', "Node didn't have enough resource: cpu, requested: 1500, used: 1000, capacity: 2000"]]);
  a.forget('o');
  assert.deepEqual(woken, ['p']);
});

test('allocated but not yet given to the running container: PodResizeInProgress until acknowledged', () => {
  const { a } = setup();
  a.allocate(pod('p', '500m'));
  a.acknowledge('p', 'c', 'x', pod('p', '500m').spec!.containers[0]!.resources);
  a.allocate(pod('p', '1'));
  const during = runningStatus('x');
  a.report(pod('p', '1'), during);
  assert.deepEqual(during.conditions?.map((c) => [c.type, c.reason]), [['PodResizeInProgress', undefined]]);
  assert.equal(during.containerStatuses?.[0]?.resources?.requests?.cpu, '500m', 'actual: what the runtime was given');
  a.acknowledge('p', 'c', 'x', pod('p', '1').spec!.containers[0]!.resources);
  const done = runningStatus('x');
  a.report(pod('p', '1'), done);
  assert.deepEqual(done.conditions, []);
  assert.equal(done.containerStatuses?.[0]?.resources?.requests?.cpu, '1');
  // A failure is reported with reason Error.
  a.allocate(pod('p', '1200m'));
  a.failed('p', 'resize failed: boom');
  const failed = runningStatus('x');
  a.report(pod('p', '1200m'), failed);
  assert.deepEqual(failed.conditions?.map((c) => [c.type, c.reason, c.message]), [['PodResizeInProgress', 'Error', 'resize failed: boom']]);
});

test('after an agent restart a pod starts from the resources its status reported: a pending resize is judged again', () => {
  const { a } = setup();
  const p = pod('p', '3');
  p.status = { containerStatuses: [{ name: 'c', ready: true, restartCount: 0, image: 'i', imageID: 'i', resources: { requests: { cpu: '500m', memory: '10Mi' }, limits: { cpu: '500m', memory: '10Mi' } } }] };
  assert.equal(cpuOf(a.allocate(p)), '500m');
  const status: PodStatus = {};
  a.report(p, status);
  assert.equal(status.conditions?.[0]?.reason, 'Infeasible');
  // One that fits is allocated at once.
  const { a: b } = setup();
  const q = pod('q', '1');
  q.status = p.status;
  assert.equal(cpuOf(b.allocate(q)), '1');
});
