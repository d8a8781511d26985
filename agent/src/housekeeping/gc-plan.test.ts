/**
 * The runtime GC rules (gc-plan.ts) as tables: what each runtime view leads to remove, and why.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emptyObservedPod, type ObservedContainer, type ObservedPod, type ObservedSandbox } from '../kubecontainer/observed.js';
import { DEFAULT_GC_POLICY, planGc, type GcPolicy } from './gc-plan.js';

const NOW = 1_000_000_000;

function sb(id: string, attempt: number, ready: boolean, createdAt = NOW - 100_000 + attempt): ObservedSandbox {
  return { id, attempt, ready, createdAt, ips: ready ? ['10.0.0.2'] : [], name: 'p', namespace: 'default', uid: 'u' };
}

function ct(id: string, sandboxId: string, name: string, restartCount: number, state: ObservedContainer['state'], extra: Partial<ObservedContainer> = {}): ObservedContainer {
  const createdAt = NOW - 50_000 + restartCount;
  const ran = state === 'running' || state === 'exited';
  return { id, sandboxId, name, type: 'regular', state, hash: 'h', restartCount, createdAt, image: 'i', imageRef: 'i', ...(ran ? { startedAt: createdAt + 1 } : {}), ...extra };
}

function pod(uid: string, sandboxes: ObservedSandbox[], containers: ObservedContainer[]): ObservedPod {
  const p = emptyObservedPod(uid, `pod-${uid}`, 'default');
  p.sandboxes = sandboxes.map((s) => ({ ...s, uid }));
  p.containers = containers;
  return p;
}

function plan(pods: ObservedPod[], o: { gone?: string[]; policy?: Partial<GcPolicy> } = {}) {
  const r = planGc({ pods, policy: { ...DEFAULT_GC_POLICY, ...o.policy }, now: NOW, podGone: (uid) => (o.gone ?? []).includes(uid) });
  return {
    containers: Object.fromEntries(r.containers.map((x) => [x.container.id, x.reason])),
    sandboxes: Object.fromEntries(r.sandboxes.map((x) => [x.sandbox.id, x.reason])),
  };
}

test('after a kill during a burst: the cut-short sandbox (zero time) and never-started attempts go; the pod keeps its newest sandbox and running container', () => {
  const p = pod('a', [sb('sb0', 0, false, 0), sb('sb1', 1, true)], [ct('c1', 'sb1', 'c', 1, 'running')]);
  // Ready sandbox kept from before the kill; a Created attempt 0 and an Exited-with-StartError one never ran.
  const q = pod('b', [sb('sbq', 0, true)], [
    ct('q0', 'sbq', 'c', 0, 'created'),
    ct('q1', 'sbq', 'c', 1, 'exited', { reason: 'StartError', exitCode: 128, startedAt: undefined }),
    ct('q2', 'sbq', 'c', 2, 'running'),
  ]);
  assert.deepEqual(plan([p, q]), { containers: { q0: 'NeverStarted', q1: 'NeverStarted' }, sandboxes: { sb0: 'DeadSandbox' } });
});

test('a never-started container in a dead sandbox goes, and with it the sandbox; one that ran stays (kubelet keeps one per container) and holds its sandbox', () => {
  const never = pod('a', [sb('old', 0, false), sb('new', 1, true)], [ct('n0', 'old', 'c', 0, 'created'), ct('n1', 'new', 'c', 1, 'running')]);
  const ran = pod('b', [sb('old2', 0, false), sb('new2', 1, true)], [ct('r0', 'old2', 'c', 0, 'exited', { exitCode: 1 }), ct('r1', 'new2', 'c', 1, 'running')]);
  assert.deepEqual(plan([never, ran]), { containers: { n0: 'NeverStarted' }, sandboxes: { old: 'DeadSandbox' } });
});

test('the newest container of its name is never superseded, even before it starts (a worker between CreateContainer and StartContainer)', () => {
  const p = pod('a', [sb('s', 0, true)], [ct('x0', 's', 'c', 0, 'exited', { exitCode: 1 }), ct('x1', 's', 'c', 1, 'created')]);
  assert.deepEqual(plan([p]), { containers: { x0: 'MaxPerPodContainer' }, sandboxes: {} });
});

test('maxPerPodContainer keeps the newest dead ones per container name, by attempt; running ones never count', () => {
  const p = pod('a', [sb('s', 0, true)], [
    ct('a0', 's', 'app', 0, 'exited'), ct('a1', 's', 'app', 1, 'exited'), ct('a2', 's', 'app', 2, 'exited'), ct('a3', 's', 'app', 3, 'running'),
    ct('b0', 's', 'side', 0, 'exited'),
  ]);
  assert.deepEqual(plan([p]).containers, { a0: 'MaxPerPodContainer', a1: 'MaxPerPodContainer' });
  assert.deepEqual(plan([p], { policy: { maxPerPodContainer: 2 } }).containers, { a0: 'MaxPerPodContainer' });
  assert.deepEqual(plan([p], { policy: { maxPerPodContainer: -1 } }).containers, {});
  assert.deepEqual(plan([p], { policy: { maxPerPodContainer: 0 } }).containers, { a0: 'MaxPerPodContainer', a1: 'MaxPerPodContainer', a2: 'MaxPerPodContainer', b0: 'MaxPerPodContainer' });
});

test('maxContainers: every group cut to its share (at least 1), then the oldest anywhere', () => {
  const a = pod('a', [sb('sa', 0, true)], [ct('a0', 'sa', 'c', 0, 'exited'), ct('a1', 'sa', 'c', 1, 'exited')]);
  const b = pod('b', [sb('sb', 0, true)], [ct('b0', 'sb', 'c', 0, 'exited', { createdAt: NOW - 90_000 })]);
  const c = pod('c', [sb('sc', 0, true)], [ct('c0', 'sc', 'c', 0, 'exited', { createdAt: NOW - 80_000 })]);
  const unlimited = { maxPerPodContainer: -1 };
  assert.deepEqual(plan([a, b, c], { policy: unlimited }).containers, {});
  assert.deepEqual(plan([a, b, c], { policy: { ...unlimited, maxContainers: 3 } }).containers, { a0: 'MaxContainers' });
  assert.deepEqual(plan([a, b, c], { policy: { ...unlimited, maxContainers: 2 } }).containers, { a0: 'MaxContainers', b0: 'MaxContainers' });
  assert.deepEqual(plan([a, b, c], { policy: { ...unlimited, maxContainers: 0 } }).containers, { a0: 'MaxContainers', a1: 'MaxContainers', b0: 'MaxContainers', c0: 'MaxContainers' });
});

test('minAge: younger containers stay; a container without a creation time counts as old', () => {
  const p = pod('a', [sb('s', 0, true)], [
    ct('old', 's', 'c', 0, 'exited', { createdAt: NOW - 60_000 }),
    ct('young', 's', 'c', 1, 'exited', { createdAt: NOW - 1_000 }),
    ct('zero', 's', 'c', 2, 'exited', { createdAt: 0 }),
  ]);
  // By attempt, `zero` is the newest and kept; `old` goes; `young` is too young to count.
  assert.deepEqual(plan([p], { policy: { minAgeMs: 30_000 } }).containers, { old: 'MaxPerPodContainer' });
});

test('a deleted pod loses every dead container and every sandbox that is not ready; a ready one or one with a running container stays', () => {
  const p = pod('gone', [sb('s0', 0, false), sb('s1', 1, false), sb('s2', 2, true)], [ct('x', 's0', 'c', 0, 'exited'), ct('y', 's1', 'c', 1, 'running')]);
  assert.deepEqual(plan([p], { gone: ['gone'] }), { containers: { x: 'PodDeleted' }, sandboxes: { s0: 'PodDeleted' } });
  const q = pod('gone2', [sb('t0', 0, false)], []);
  assert.deepEqual(plan([q], { gone: ['gone2'] }).sandboxes, { t0: 'PodDeleted' }, 'even the newest');
  assert.deepEqual(plan([q]).sandboxes, {}, 'a pod that exists keeps its newest sandbox, ready or not');
});

test('sandboxes: newest by attempt, then creation; zero creation times sort oldest within an attempt', () => {
  const p = pod('a', [sb('z', 1, false, 0), sb('t', 1, false, NOW - 10), sb('r', 0, true)], []);
  assert.deepEqual(plan([p]).sandboxes, { z: 'DeadSandbox' });
});

test('a pod without a UID (not labelled by nodelet) is never named', () => {
  const p = pod('', [sb('s0', 0, false), sb('s1', 1, false)], [ct('x', 's0', 'c', 0, 'created'), ct('y', 's0', 'c', 1, 'exited')]);
  assert.deepEqual(plan([p], { gone: [''] }), { containers: {}, sandboxes: {} });
});
