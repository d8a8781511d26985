import { test } from 'node:test';
import assert from 'node:assert/strict';
import { computeNodeStatus, type NodeStatusInput } from './node-status.js';

const GiB = 2 ** 30;
const base: NodeStatusInput = {
  machine: { cpuCores: 2, memoryBytes: 4 * GiB, ephemeralStorageBytes: 100 * GiB, machineID: 'm', systemUUID: 's', bootID: 'b', kernelVersion: '6.1.0', osImage: 'Debian GNU/Linux 12 (bookworm)', architecture: 'amd64', hostname: 'h' },
  pressure: new Set(),
  health: { runtimeReady: true, networkReady: true, cniReady: true, plegHealthy: true, runtimeName: 'containerd', runtimeVersion: '1.6.20' },
  internalIP: '192.0.2.10',
  maxPods: 110,
  systemReserved: { cpu: 0.5, memory: GiB / 2 },
  kubeReserved: {},
  evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '10%', 'nodefs.inodesFree': '5%' },
  port: 10250,
  agentVersion: 'v1.32.0-nodelet',
  now: Date.UTC(2026, 0, 1),
};
const cond = (s: ReturnType<typeof computeNodeStatus>, t: string) => s.conditions!.find((c) => c.type === t)!;

test('capacity and allocatable: reserved and the hard eviction threshold are subtracted', () => {
  const s = computeNodeStatus(base);
  assert.deepEqual(s.capacity, { cpu: '2', memory: '4Gi', 'ephemeral-storage': '100Gi', pods: '110' });
  assert.equal(s.allocatable!.cpu, '1500m');
  assert.equal(s.allocatable!.memory, `${4 * 1024 - 512 - 100}Mi`);
  assert.equal(s.allocatable!['ephemeral-storage'], '90Gi');
  assert.equal(s.nodeInfo!.containerRuntimeVersion, 'containerd://1.6.20');
  assert.deepEqual(s.daemonEndpoints, { kubeletEndpoint: { Port: 10250 } });
  assert.equal(cond(s, 'Ready').status, 'True');
  assert.equal(cond(s, 'Ready').reason, 'KubeletReady');
  for (const t of ['MemoryPressure', 'DiskPressure', 'PIDPressure']) assert.equal(cond(s, t).status, 'False', t);
});

test('Ready is False with the reason when the runtime, its network, CNI or the PLEG is not ready', () => {
  const cases: Array<[Partial<NodeStatusInput['health']>, RegExp]> = [
    [{ runtimeReady: false, runtimeMessage: 'connection refused' }, /container runtime is down: connection refused/],
    [{ networkReady: false, networkMessage: 'reason:NetworkPluginNotReady message:cni config uninitialized' }, /container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady/],
    [{ cniReady: false, cniMessage: 'pod CIDR not yet known' }, /network plugin not ready: pod CIDR not yet known/],
    [{ plegHealthy: false }, /PLEG is not healthy/],
    [{ shuttingDown: true }, /^node is shutting down$/],
  ];
  for (const [h, msg] of cases) {
    const c = cond(computeNodeStatus({ ...base, health: { ...base.health, ...h } }), 'Ready');
    assert.equal(c.status, 'False');
    assert.equal(c.reason, 'KubeletNotReady');
    assert.match(c.message!, msg);
  }
});

test('pressure conditions are the eviction manager\'s; transition times are kept while unchanged', () => {
  const pressure = new Set(['MemoryPressure', 'DiskPressure']);
  const s = computeNodeStatus({ ...base, pressure });
  assert.equal(cond(s, 'MemoryPressure').status, 'True');
  assert.equal(cond(s, 'MemoryPressure').reason, 'KubeletHasInsufficientMemory');
  assert.equal(cond(s, 'DiskPressure').status, 'True');
  assert.equal(cond(s, 'PIDPressure').status, 'False');
  const later = computeNodeStatus({ ...base, previous: s, now: base.now + 10_000, pressure });
  assert.equal(cond(later, 'MemoryPressure').lastTransitionTime, cond(s, 'MemoryPressure').lastTransitionTime);
  assert.notEqual(cond(later, 'MemoryPressure').lastHeartbeatTime, cond(s, 'MemoryPressure').lastHeartbeatTime);
});
