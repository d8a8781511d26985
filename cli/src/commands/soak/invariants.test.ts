import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gcFindings, hostLeakFindings, orphanFindings, Persistence, podFindings, restartFindings, snapshotRestarts } from './invariants.js';
import type { ContainerView, Observation, PodView, SandboxView } from './observe.js';

const id = (c: string): string => c.repeat(64);
const UID = '11111111-1111-1111-1111-111111111111';

function pod(o: Partial<PodView> = {}): PodView {
  return { uid: UID, namespace: 'nodelet-soak', name: 'web-1', kind: 'steady', deleting: false, ready: true, phase: 'Running', containers: [{ name: 'main', containerID: id('c'), restartCount: 0, running: true }], initContainers: [], ...o };
}
const sandbox = (o: Partial<SandboxView> = {}): SandboxView => ({ id: id('a'), uid: UID, pod: 'nodelet-soak/web-1', ready: true, createdAt: 2n, netns: '/s/netns/cni-1', ...o });
const ctr = (o: Partial<ContainerView> = {}): ContainerView => ({ id: id('c'), sandboxId: id('a'), uid: UID, name: 'main', state: 'running', createdAt: 3n, ...o });
function obs(o: Partial<Observation> = {}): Observation {
  return { at: 0, workload: { deployments: [], unscheduled: [] }, pods: [pod()], sandboxes: [sandbox()], containers: [ctr()], host: { netns: ['/s/netns/cni-1'], veths: ['veth1'], vethOwners: {}, ips: [{ file: 'nodelet-pods/10.0.0.2', owner: id('a') }], cniCache: [{ file: 'r/x', containerID: id('a'), veths: ['veth1'] }], mounts: [], podDirs: [UID], logDirs: [{ dir: `nodelet-soak_web-1_${UID}`, uid: UID }], cgroups: [id('a'), id('c')], podCgroups: [UID] }, ...o };
}

test('a converged pod yields nothing; every oracle is quiet on a clean node', () => {
  const o = obs();
  assert.deepEqual([...podFindings(o), ...orphanFindings(o), ...gcFindings(o), ...hostLeakFindings(o, { everSeen: new Set([id('a'), id('c')]) })], []);
});

test('the issue\'s leftovers: a never-returned NotReady sandbox beside the ready one, and a Created attempt', () => {
  const o = obs({
    sandboxes: [sandbox(), sandbox({ id: id('b'), ready: false, createdAt: -6795364578871345152n, netns: undefined })],
    containers: [ctr(), ctr({ id: id('d'), sandboxId: id('b'), state: 'created', createdAt: 1n }), ctr({ id: id('e'), sandboxId: id('b'), state: 'exited', createdAt: 2n })],
  });
  assert.deepEqual(podFindings(o), [], 'the pod itself is fine');
  const gc = gcFindings(o);
  assert.deepEqual(gc.map((x) => [x.invariant, x.key]), [['dead-sandboxes', id('b')], ['dead-containers', id('d')]]);
  assert.match(gc[0]!.message, /RunPodSandbox did not return/);
});

test('two ready sandboxes, a missing container, a stale API container ID', () => {
  assert.equal(podFindings(obs({ sandboxes: [sandbox(), sandbox({ id: id('b') })] }))[0]!.invariant, 'one-ready-sandbox');
  assert.match(podFindings(obs({ containers: [] }))[0]!.message, /0 running instances/);
  assert.match(podFindings(obs({ pods: [pod({ containers: [{ name: 'main', containerID: id('f'), restartCount: 0, running: true }] })] }))[0]!.message, /API says ffff/);
});

test('host leaks are named: netns, veth, IP, CNI cache, mount, dirs, cgroup of a gone sandbox', () => {
  const o = obs({
    pods: [],
    sandboxes: [],
    containers: [],
    host: { ...obs().host, mounts: [`/root/pods/${UID}/volumes/x`] },
  });
  const keys = hostLeakFindings(o, { everSeen: new Set([id('a')]) }).map((x) => x.key.split(':')[0]);
  assert.deepEqual(keys, ['netns', 'veth', 'ip', 'cni', 'mount', 'poddir', 'logdir', 'cgroup', 'podcgroup']);
  assert.deepEqual(hostLeakFindings(o, { everSeen: new Set() }).filter((x) => x.key.startsWith('cgroup')), [], 'cgroups of other runtimes are not ours');
  assert.deepEqual(hostLeakFindings(obs(), { everSeen: new Set([id('a')]) }).filter((x) => x.key.startsWith('podcgroup')), [], "a live pod's cgroup is no leak");
});

test('orphans and stuck terminations', () => {
  const o = obs({ pods: [pod({ deleting: true, uid: 'other' })] });
  assert.deepEqual(orphanFindings(o).map((x) => x.invariant), ['stuck-terminating', 'orphans']);
});

test('restarts: same container and count passes; a new container or count fails; crashy pods are not tracked', () => {
  const before = snapshotRestarts(obs());
  assert.deepEqual(restartFindings(before, obs()), []);
  const after = obs({ pods: [pod({ containers: [{ name: 'main', containerID: id('9'), restartCount: 1, running: true }] })], containers: [ctr({ id: id('9') })] });
  assert.match(restartFindings(before, after)[0]!.message, /restarts 0\), now 9999999999999 \(restarts 1; the old one no longer runs/);
  assert.equal(snapshotRestarts(obs({ pods: [pod({ kind: 'crashy' })] })).size, 0);
});

test('persistence: a finding counts once it lasted minAge, and is forgotten when it goes', () => {
  const p = new Persistence(60_000);
  const x = { invariant: 'dead-containers' as const, key: 'k', message: 'm' };
  assert.deepEqual(p.update([x], 0), []);
  assert.equal(p.pendingUntil(1), 60_000);
  assert.deepEqual(p.update([x], 60_000), [x]);
  assert.deepEqual(p.update([], 61_000), []);
  assert.deepEqual(p.update([x], 62_000), []);
});

test('a veth in the netns of a not-ready sandbox goes with that sandbox, not counted as a host leak', () => {
  const o = obs({
    sandboxes: [sandbox(), sandbox({ id: id('b'), ready: false, createdAt: 1n, netns: '/s/netns/cni-2' })],
    host: { ...obs().host, netns: ['/s/netns/cni-1', '/s/netns/cni-2'], veths: ['veth1', 'veth2', 'veth3'], vethOwners: { veth2: id('b') } },
  });
  assert.deepEqual(hostLeakFindings(o, { everSeen: new Set() }).map((x) => x.message), ['veth veth3 on the pod bridge belongs to no sandbox']);
  assert.deepEqual(gcFindings(o).map((x) => x.invariant), ['dead-sandboxes']);
});
