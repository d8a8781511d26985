import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, PodCondition } from '@nodelet/api';
import { activeDeadlineRemainingMs, computePodStatus, withApiConditions } from './pod-status.js';
import type { ObservedContainer, ObservedPod } from '../kubecontainer/observed.js';
import type { StartFailure } from './pod-status.js';
import { ProbeResults, probeView } from '../prober/results.js';

const NOW = Date.UTC(2026, 0, 1, 12);
function pod(restartPolicy?: 'Always' | 'OnFailure' | 'Never', inits = false): Pod {
  return {
    metadata: { name: 'p', namespace: 'default', uid: 'u1' },
    spec: { containers: [{ name: 'app', image: 'busybox' }], initContainers: inits ? [{ name: 'init', image: 'busybox' }] : undefined, restartPolicy },
  };
}
let t = NOW - 60_000;
function c(name: string, state: ObservedContainer['state'], o: Partial<ObservedContainer> = {}): ObservedContainer {
  return { id: `${name}${t}`, sandboxId: 'sb', name, type: name === 'init' ? 'init' : 'regular', state, hash: '', restartCount: 0, createdAt: t++, startedAt: NOW - 5000, image: 'busybox', imageRef: 'sha256:abc', ...o };
}
function obs(containers: ObservedContainer[], ready = true): ObservedPod {
  return { uid: 'u1', name: 'p', namespace: 'default', sandboxes: [{ id: 'sb', attempt: 0, ready, createdAt: 1, ips: ['10.234.0.7'], name: 'p', namespace: 'default', uid: 'u1' }], containers: containers.reverse() };
}
function status(p: Pod, o: ObservedPod, failures: Array<[string, StartFailure]> = []) {
  return computePodStatus({ pod: p, observed: o, failures: new Map(failures), hostIP: '192.0.2.1', runtimeName: 'containerd', now: NOW });
}
const cond = (s: ReturnType<typeof status>, type: string) => s.conditions!.find((x) => x.type === type)!.status;

test('pending pod: no sandbox yet, containers ContainerCreating', () => {
  const s = status(pod(), { uid: 'u1', name: 'p', namespace: 'default', sandboxes: [], containers: [] });
  assert.equal(s.phase, 'Pending');
  assert.equal(s.containerStatuses![0]!.state!.waiting!.reason, 'ContainerCreating');
  assert.equal(cond(s, 'PodReadyToStartContainers'), 'False');
  assert.equal(cond(s, 'Ready'), 'False');
  assert.equal(s.podIP, undefined);
  assert.equal(s.qosClass, 'BestEffort');
});

test('running pod: Running, Ready, pod IP, containerID with runtime prefix', () => {
  const s = status(pod(), obs([c('app', 'running', { id: 'abc' })]));
  assert.equal(s.phase, 'Running');
  assert.equal(s.podIP, '10.234.0.7');
  assert.deepEqual(s.podIPs, [{ ip: '10.234.0.7' }]);
  assert.equal(s.hostIP, '192.0.2.1');
  const cs = s.containerStatuses![0]!;
  assert.equal(cs.containerID, 'containerd://abc');
  assert.equal(cs.ready, true);
  assert.equal(cs.imageID, 'sha256:abc');
  for (const type of ['PodReadyToStartContainers', 'Initialized', 'ContainersReady', 'Ready', 'PodScheduled']) assert.equal(cond(s, type), 'True', type);
});

test('init container pending: app containers PodInitializing, Initialized False', () => {
  const s = status(pod('Always', true), obs([c('init', 'running')]));
  assert.equal(s.phase, 'Pending');
  assert.equal(s.containerStatuses![0]!.state!.waiting!.reason, 'PodInitializing');
  assert.equal(cond(s, 'Initialized'), 'False');
  assert.equal(s.initContainerStatuses![0]!.state!.running !== undefined, true);
});

test('CrashLoopBackOff under Always: phase Running, waiting reason, lastState Error, restartCount', () => {
  const s = status(pod(), obs([c('app', 'exited', { exitCode: 1, restartCount: 2, finishedAt: NOW - 1000 })]), [['app', { reason: 'CrashLoopBackOff', message: 'back-off 20s restarting failed container=app pod=p_default(u1)' }]]);
  const cs = s.containerStatuses![0]!;
  assert.equal(s.phase, 'Running');
  assert.equal(cs.state!.waiting!.reason, 'CrashLoopBackOff');
  assert.equal(cs.lastState!.terminated!.reason, 'Error');
  assert.equal(cs.lastState!.terminated!.exitCode, 1);
  assert.equal(cs.restartCount, 2);
  assert.equal(cond(s, 'Ready'), 'False');
});

test('Never: exit 0 → Succeeded (Completed, Ready False PodCompleted); exit 1 → Failed', () => {
  const ok = status(pod('Never'), obs([c('app', 'exited', { exitCode: 0 })]));
  assert.equal(ok.phase, 'Succeeded');
  assert.equal(ok.containerStatuses![0]!.state!.terminated!.reason, 'Completed');
  assert.equal(ok.conditions!.find((x) => x.type === 'Ready')!.reason, 'PodCompleted');
  const bad = status(pod('Never'), obs([c('app', 'exited', { exitCode: 1 })]));
  assert.equal(bad.phase, 'Failed');
  const oom = status(pod('Never'), obs([c('app', 'exited', { exitCode: 137, reason: 'OOMKilled' })]));
  assert.equal(oom.containerStatuses![0]!.state!.terminated!.reason, 'OOMKilled');
});

test('image pull failure shows ErrImagePull / ImagePullBackOff while Pending', () => {
  const s = status(pod(), obs([]), [['app', { reason: 'ImagePullBackOff', message: 'Back-off pulling image "nope"' }]]);
  assert.equal(s.phase, 'Pending');
  assert.equal(s.containerStatuses![0]!.state!.waiting!.reason, 'ImagePullBackOff');
});

test('terminal phase is kept and condition transition times are kept when unchanged', () => {
  const p = pod();
  p.status = { phase: 'Failed', conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: '2020-01-01T00:00:00Z' }] };
  const s = status(p, obs([]));
  assert.equal(s.phase, 'Failed');
  assert.equal(s.conditions!.find((x) => x.type === 'Ready')!.lastTransitionTime, '2020-01-01T00:00:00Z');
});

test('readiness probe: a running container is not ready (pod Ready/ContainersReady False) until its probe passed', () => {
  const results = new ProbeResults();
  const p = pod();
  p.spec!.containers[0]!.readinessProbe = { exec: { command: ['true'] } };
  const o = obs([c('app', 'running', { id: 'app-1' })]);
  const st = () => computePodStatus({ pod: p, observed: o, failures: new Map(), hostIP: '192.0.2.1', runtimeName: 'containerd', now: NOW, probes: probeView(results) });
  let s = st();
  assert.equal(s.phase, 'Running');
  assert.equal(s.containerStatuses![0]!.ready, false);
  assert.equal(s.containerStatuses![0]!.started, true);
  assert.equal(cond(s, 'Ready'), 'False');
  assert.equal(cond(s, 'ContainersReady'), 'False');
  assert.equal(s.conditions!.find((x) => x.type === 'Ready')!.message, 'containers with unready status: [app]');
  results.set('app-1', 'readiness', 'success');
  s = st();
  assert.equal(s.containerStatuses![0]!.ready, true);
  assert.equal(cond(s, 'Ready'), 'True');
  assert.equal(cond(s, 'ContainersReady'), 'True');
});

test('startup probe: not started and not ready until it passed', () => {
  const results = new ProbeResults();
  const p = pod();
  p.spec!.containers[0]!.startupProbe = { exec: { command: ['true'] } };
  const o = obs([c('app', 'running', { id: 'app-1' })]);
  const st = () => computePodStatus({ pod: p, observed: o, failures: new Map(), hostIP: '192.0.2.1', runtimeName: 'containerd', now: NOW, probes: probeView(results) }).containerStatuses![0]!;
  assert.deepEqual([st().started, st().ready], [false, false]);
  results.set('app-1', 'startup', 'success');
  assert.deepEqual([st().started, st().ready], [true, true]);
});

test('conditions the agent does not compute (DisruptionTarget, readiness gates) are carried over', () => {
  const p = pod();
  const disruption: PodCondition = { type: 'DisruptionTarget', status: 'True', reason: 'TerminationByKubelet', message: 'm', lastTransitionTime: '2026-01-01T00:00:00Z' };
  const gate: PodCondition = { type: 'example.com/lb-ready', status: 'True' };
  p.status = { phase: 'Failed', conditions: [{ type: 'Ready', status: 'False' }, disruption, gate] };
  const s = status(p, obs([c('app', 'exited', { exitCode: 137 })]));
  assert.equal(s.phase, 'Failed');
  assert.deepEqual(s.conditions!.filter((x) => x.type === 'DisruptionTarget'), [disruption]);
  assert.deepEqual(s.conditions!.filter((x) => x.type === 'example.com/lb-ready'), [gate]);
  assert.equal(s.conditions!.filter((x) => x.type === 'Ready').length, 1);
});

test('conditions the agent does not own (an eviction’s DisruptionTarget) are carried over; its own are recomputed', () => {
  const p = pod();
  const disruption = { type: 'DisruptionTarget', status: 'True' as const, reason: 'EvictionByEvictionAPI', message: 'Eviction API: evicting', lastTransitionTime: '2026-01-01T11:00:00Z' };
  p.status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }, disruption] };
  const s = status(p, obs([c('app', 'running', { id: 'abc' })]));
  assert.deepEqual(s.conditions!.find((x) => x.type === 'DisruptionTarget'), disruption);
  assert.equal(cond(s, 'Ready'), 'True');
  assert.equal(s.conditions!.filter((x) => x.type === 'Ready').length, 1);
});

test('readinessGates: Ready needs each gate\'s condition True besides ready containers (ReadinessGatesNotReady)', () => {
  const gated: Pod = { ...pod(), spec: { ...pod().spec!, readinessGates: [{ conditionType: 'example.com/lb' }, { conditionType: 'example.com/dns' }] } };
  const running = obs([c('app', 'running', { id: 'abc' })]);
  const none = status(gated, running);
  assert.equal(cond(none, 'ContainersReady'), 'True');
  const ready = none.conditions!.find((x) => x.type === 'Ready')!;
  assert.deepEqual([ready.status, ready.reason, ready.message], ['False', 'ReadinessGatesNotReady', 'corresponding condition of pod readiness gate "example.com/lb" does not exist., corresponding condition of pod readiness gate "example.com/dns" does not exist.']);
  const withConditions = (lb: 'True' | 'False', dns: 'True' | 'False'): Pod => ({ ...gated, status: { conditions: [{ type: 'example.com/lb', status: lb }, { type: 'example.com/dns', status: dns }] } });
  const half = status(withConditions('True', 'False'), running).conditions!.find((x) => x.type === 'Ready')!;
  assert.deepEqual([half.status, half.message], ['False', 'the status of pod readiness gate "example.com/dns" is not "True", but False']);
  const all = status(withConditions('True', 'True'), running);
  assert.equal(cond(all, 'Ready'), 'True');
  assert.deepEqual(all.conditions!.filter((x) => x.type.startsWith('example.com/')).map((x) => x.status), ['True', 'True'], 'the gates\' conditions are kept');
  const notRunning = status(withConditions('True', 'True'), obs([c('app', 'exited', { exitCode: 1 })]));
  assert.equal(notRunning.conditions!.find((x) => x.type === 'Ready')!.reason, 'ContainersNotReady');
});

test('withApiConditions: conditions others set in the API replace the cached ones; the agent\'s own stay', () => {
  const cached = { phase: 'Running' as const, conditions: [{ type: 'Ready', status: 'False' as const }, { type: 'DisruptionTarget', status: 'True' as const }, { type: 'example.com/lb', status: 'False' as const }] };
  const api = { conditions: [{ type: 'Ready', status: 'True' as const }, { type: 'example.com/lb', status: 'True' as const }] };
  assert.deepEqual(withApiConditions(cached, api)!.conditions, [{ type: 'Ready', status: 'False' }, { type: 'DisruptionTarget', status: 'True' }, { type: 'example.com/lb', status: 'True' }]);
  assert.equal(withApiConditions(undefined, api), api);
  assert.equal(withApiConditions(cached, undefined), cached);
});

test('activeDeadlineSeconds: past the deadline from startTime the pod is Failed with DeadlineExceeded', () => {
  const p: Pod = { ...pod(), spec: { ...pod().spec!, activeDeadlineSeconds: 30 }, status: { startTime: new Date(NOW - 31_000).toISOString() } };
  const running = obs([c('app', 'running', { id: 'abc' })]);
  const s = status(p, running);
  assert.deepEqual([s.phase, s.reason, s.message], ['Failed', 'DeadlineExceeded', 'Pod was active on the node longer than the specified deadline']);
  assert.equal(activeDeadlineRemainingMs(p, p.status!.startTime, NOW), -1000);
  const early: Pod = { ...p, status: { startTime: new Date(NOW - 10_000).toISOString() } };
  assert.equal(status(early, running).phase, 'Running');
  assert.equal(activeDeadlineRemainingMs(early, early.status!.startTime, NOW), 20_000);
  assert.equal(activeDeadlineRemainingMs(pod(), new Date(NOW).toISOString(), NOW), undefined);
});

test('ephemeral containers: their own status list, never ready, a start failure shown until created; the pod stays Ready', () => {
  const p: Pod = { ...pod(), spec: { ...pod().spec!, ephemeralContainers: [{ name: 'dbg', image: 'busybox' }, { name: 'dbg2', image: 'nope' }] } };
  const s = status(p, obs([c('app', 'running'), c('dbg', 'running', { type: 'ephemeral', id: 'e1' })]), [['dbg2', { reason: 'ErrImagePull', message: 'not found' }]]);
  const [dbg, dbg2] = s.ephemeralContainerStatuses!;
  assert.deepEqual([dbg!.name, dbg!.ready, dbg!.started, dbg!.containerID, dbg!.state!.running !== undefined], ['dbg', false, true, 'containerd://e1', true]);
  assert.deepEqual(dbg2!.state, { waiting: { reason: 'ErrImagePull', message: 'not found' } });
  assert.deepEqual(s.containerStatuses!.map((x) => x.name), ['app']);
  assert.equal(cond(s, 'Ready'), 'True');
  assert.equal(status(pod(), obs([c('app', 'running')])).ephemeralContainerStatuses, undefined);
});
