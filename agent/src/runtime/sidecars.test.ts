import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, ContainerStatus, Pod } from '@nodelet/api';
import { computePodActions } from './pod-actions.js';
import { initContainersDone } from '../kubecontainer/helpers.js';
import { containerHash } from '../kubecontainer/labels.js';
import type { ObservedContainer, ObservedPod } from '../kubecontainer/observed.js';
import { computePodStatus, podPhase } from '../status/pod-status.js';

const side: Container = { name: 'side', image: 'busybox', restartPolicy: 'Always' };
const setup: Container = { name: 'setup', image: 'busybox' };
const app: Container = { name: 'app', image: 'busybox' };

function pod(restartPolicy: 'Always' | 'Never' = 'Always', sidecar: Container = side): Pod {
  return { metadata: { name: 'p', namespace: 'default', uid: 'u1' }, spec: { restartPolicy, initContainers: [sidecar, setup], containers: [app] } };
}
let t = 1000;
function ctr(spec: Container, type: 'init' | 'regular', state: ObservedContainer['state'], exitCode = 0): ObservedContainer {
  return { id: `${spec.name}-${t}`, sandboxId: 'sb0', name: spec.name, type, state, hash: containerHash(spec), restartCount: 0, createdAt: t++, image: 'busybox', imageRef: 'sha256:x', ...(state === 'exited' ? { exitCode } : {}) };
}
function observed(containers: ObservedContainer[]): ObservedPod {
  const sb = { id: 'sb0', attempt: 0, ready: true, createdAt: 1, ips: ['10.234.0.5'], name: 'p', namespace: 'default', uid: 'u1' };
  return { uid: 'u1', name: 'p', namespace: 'default', sandboxes: [sb], containers: [...containers].reverse() };
}

test('sidecars start in init order; the next init container waits until the sidecar runs and its startupProbe passed', () => {
  // Before: a running sidecar was an init container that never completed: setup never started (Init:0/2 for ever).
  assert.equal(computePodActions(pod(), observed([])).nextInitContainer, 0);
  assert.equal(computePodActions(pod(), observed([ctr(side, 'init', 'running')])).nextInitContainer, 1);
  const probed = pod('Always', { ...side, startupProbe: { exec: { command: ['true'] } } });
  const obs = observed([ctr(probed.spec!.initContainers![0]!, 'init', 'running')]);
  assert.equal(computePodActions(probed, obs, undefined, () => false).nextInitContainer, undefined, 'waits for the startup probe');
  assert.equal(computePodActions(probed, obs, undefined, () => true).nextInitContainer, 1);
  // setup done: the app starts, the sidecar keeps running.
  const done = observed([ctr(side, 'init', 'running'), ctr(setup, 'init', 'exited')]);
  assert.equal(initContainersDone(pod(), done), true);
  const a = computePodActions(pod(), done);
  assert.deepEqual([a.nextInitContainer, a.containersToStart, a.sidecarsToStart, a.killPod], [undefined, [0], [], false]);
});

test('a sidecar that exits beside running app containers is started again, whatever the pod restartPolicy; a failed liveness probe kills it', () => {
  const obs = observed([ctr(side, 'init', 'exited', 1), ctr(setup, 'init', 'exited'), ctr(app, 'regular', 'running')]);
  for (const policy of ['Always', 'Never'] as const) {
    const a = computePodActions(pod(policy), obs);
    assert.deepEqual([a.sidecarsToStart, a.containersToStart, a.killPod], [[0], [], false], policy);
  }
  const running = observed([ctr(side, 'init', 'running'), ctr(setup, 'init', 'exited'), ctr(app, 'regular', 'running')]);
  const sideId = running.containers.find((c) => c.name === 'side')!.id;
  const k = computePodActions(pod(), running, (id) => (id === sideId ? 'liveness' : undefined));
  assert.deepEqual(k.containersToKill.map((x) => [x.name, x.type, x.probe]), [['side', 'init', 'liveness']]);
});

test('under restartPolicy Never the pod is done when its app containers are, and its sidecars are stopped with it', () => {
  const obs = observed([ctr(side, 'init', 'running'), ctr(setup, 'init', 'exited'), ctr(app, 'regular', 'exited')]);
  const a = computePodActions(pod('Never'), obs);
  assert.equal(a.killPod, true);
  assert.deepEqual(a.sidecarsToStart, []);
});

test('status: a started sidecar is in initContainerStatuses with started, the pod is Initialized and Running, its readiness counts', () => {
  const p = pod('Always', { ...side, readinessProbe: { exec: { command: ['true'] } } });
  const obs = observed([ctr(p.spec!.initContainers![0]!, 'init', 'running'), ctr(setup, 'init', 'exited'), ctr(app, 'regular', 'running')]);
  let ready = false;
  const probes = { ready: (_id: string, hasReadiness: boolean) => !hasReadiness || ready, started: () => true, failed: () => undefined };
  const st = computePodStatus({ pod: p, observed: obs, failures: new Map(), hostIP: '127.0.0.1', runtimeName: 'containerd', now: Date.now(), probes });
  assert.equal(st.phase, 'Running');
  const s = st.initContainerStatuses!.find((x) => x.name === 'side')!;
  assert.deepEqual([s.started, s.ready, !!s.state?.running], [true, false, true]);
  const cond = (type: string) => st.conditions!.find((c) => c.type === type)!;
  assert.equal(cond('Initialized').status, 'True');
  assert.equal(cond('Ready').status, 'False');
  assert.equal(cond('Ready').message, 'containers with unready status: [side]');
  ready = true;
  const st2 = computePodStatus({ pod: p, observed: obs, failures: new Map(), hostIP: '127.0.0.1', runtimeName: 'containerd', now: Date.now(), probes });
  assert.equal(st2.conditions!.find((c) => c.type === 'Ready')!.status, 'True');
});

test('phase: an exited sidecar does not decide completion; a not yet started one keeps the pod Pending', () => {
  const p = pod('Never');
  const exited = (name: string, exitCode: number): ContainerStatus => ({ name, ready: false, restartCount: 0, image: 'busybox', imageID: '', containerID: `containerd://${name}`, state: { terminated: { exitCode } } });
  assert.equal(podPhase(p, [exited('side', 137), exited('setup', 0)], [exited('app', 0)]), 'Succeeded');
  const starting: ContainerStatus = { name: 'side', ready: false, restartCount: 0, image: 'busybox', imageID: '', started: false, state: { running: {} } };
  assert.equal(podPhase(p, [starting, { ...exited('setup', 0), state: { waiting: { reason: 'PodInitializing' } }, containerID: undefined }], [{ name: 'app', ready: false, restartCount: 0, image: '', imageID: '', state: { waiting: { reason: 'PodInitializing' } } }]), 'Pending');
});
