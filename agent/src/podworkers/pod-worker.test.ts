import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@nodelet/base/testing';
import { noopLogger, pollUntil } from '@nodelet/base';
import type { Pod } from '@nodelet/api';
import { PodWorkers } from './pod-workers.js';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { POD_SYNC_CHANNEL, type PodSyncEvent, type PodSyncer } from './pod-worker.js';
import { emptyObservedPod } from '../kubecontainer/observed.js';

const pod = (rv: string, o: Partial<Pod['metadata']> = {}): Pod => ({ metadata: { name: 'p', namespace: 'd', uid: 'u1', resourceVersion: rv, ...o }, spec: { containers: [] } });
const cache = { getNewerThan: async (uid: string) => emptyObservedPod(uid), get: (uid: string) => emptyObservedPod(uid) };

function recorder(overrides: Partial<PodSyncer> = {}) {
  const calls: string[] = [];
  const syncer: PodSyncer = {
    syncPod: async (_s, p) => { calls.push(`sync ${p.metadata.resourceVersion}`); return { terminal: false }; },
    syncTerminatingPod: async (_s, _p, _o, g) => { calls.push(`terminating ${g}`); },
    syncTerminatedPod: async (_s, _p, deleted) => { calls.push(`terminated ${deleted}`); },
    ...overrides,
  };
  return { calls, syncer };
}

test('pod worker: sync, then deletion walks terminating → terminated → finished with the given grace', async (t) => {
  const stop = new AbortController();
  t.after(() => stop.abort());
  const { calls, syncer } = recorder();
  const workers = new PodWorkers({ syncer, cache, clock: new FakeClock(), log: noopLogger, resyncMs: 60_000, signal: stop.signal, random: () => 0 });
  workers.update({ pod: pod('1') });
  await pollUntil('first sync', () => calls.length === 1, { timeoutMs: 2000, intervalMs: 0 });
  workers.update({ pod: pod('2', { deletionTimestamp: 'x' }), terminationRequested: true, gracePeriodS: 7 });
  await pollUntil('finished', () => workers.phase('u1') === 'finished', { timeoutMs: 2000, intervalMs: 0 });
  assert.deepEqual(calls, ['sync 1', 'terminating 7', 'terminated true']);
  // updates after finishing are ignored; the worker is dropped once the pod is no longer desired
  workers.update({ pod: pod('3') });
  workers.syncKnownPods(new Set());
  assert.equal(workers.has('u1'), false);
  stop.abort();
  await workers.drain();
});

test('pod worker: termination preempts a long syncPod through its signal; latest update wins', async (t) => {
  const stop = new AbortController();
  t.after(() => stop.abort());
  let aborted = false;
  let entered = 0;
  const { calls, syncer } = recorder({
    syncPod: (signal) => {
      entered++;
      return new Promise((_r, reject) => signal.addEventListener('abort', () => { aborted = true; reject(signal.reason); }));
    },
  });
  const workers = new PodWorkers({ syncer, cache, clock: new FakeClock(), log: noopLogger, resyncMs: 60_000, signal: stop.signal });
  workers.update({ pod: pod('1') });
  await pollUntil('sync started', () => entered === 1, { timeoutMs: 2000, intervalMs: 0 });
  workers.update({ pod: pod('2') });
  workers.update({ pod: pod('3'), terminationRequested: true, gracePeriodS: 1 });
  await pollUntil('finished', () => workers.phase('u1') === 'finished', { timeoutMs: 2000, intervalMs: 0 });
  assert.equal(aborted, true);
  assert.equal(entered, 1, 'no further syncPod once terminating');
  assert.deepEqual(calls, ['terminating 1', 'terminated true']);
  stop.abort();
  await workers.drain();
});

test('pod worker: a terminal pod terminates without deletion; a later delete cleans it up', async (t) => {
  const stop = new AbortController();
  t.after(() => stop.abort());
  const { calls, syncer } = recorder({ syncPod: async () => ({ terminal: true }) });
  const workers = new PodWorkers({ syncer, cache, clock: new FakeClock(), log: noopLogger, resyncMs: 60_000, signal: stop.signal });
  workers.update({ pod: pod('1') });
  await pollUntil('finished', () => workers.phase('u1') === 'finished', { timeoutMs: 2000, intervalMs: 0 });
  assert.deepEqual(calls, ['terminating 30', 'terminated false']);
  workers.update({ pod: pod('2'), terminationRequested: true, gracePeriodS: 0 });
  await pollUntil('cleanup after delete', () => calls.length === 4, { timeoutMs: 2000, intervalMs: 0 });
  assert.deepEqual(calls.slice(2), ['terminating 0', 'terminated true']);
  stop.abort();
  await workers.drain();
});

test('pod worker: a failed sync is retried after a backoff; a requeue hint schedules the next sync', async (t) => {
  const stop = new AbortController();
  t.after(() => stop.abort());
  const clock = new FakeClock();
  let n = 0;
  const { syncer } = recorder({
    syncPod: async () => {
      n++;
      if (n === 1) throw new Error('boom');
      return { terminal: false, requeueAfterMs: 5000 };
    },
  });
  const workers = new PodWorkers({ syncer, cache, clock, log: noopLogger, resyncMs: 60_000, signal: stop.signal, random: () => 0 });
  workers.update({ pod: pod('1') });
  await pollUntil('first failure', () => n === 1 && clock.pendingTimers === 1, { timeoutMs: 2000, intervalMs: 0 });
  clock.advance(999);
  await new Promise((r) => setImmediate(r));
  assert.equal(n, 1, 'still backing off');
  clock.advance(1);
  await pollUntil('retry', () => n === 2 && clock.pendingTimers === 1, { timeoutMs: 2000, intervalMs: 0 });
  clock.advance(5000);
  await pollUntil('requeue after hint', () => n === 3, { timeoutMs: 2000, intervalMs: 0 });
  stop.abort();
  await workers.drain();
});

test('pod worker: each pass is published on nodelet:agent:pod-sync, with what woke it', async (t) => {
  const stop = new AbortController();
  t.after(() => stop.abort());
  const clock = new FakeClock();
  const events: Array<Pick<PodSyncEvent, 'phase' | 'trigger' | 'failed'>> = [];
  const onEvent = (m: unknown) => {
    const { phase, trigger, failed } = m as PodSyncEvent;
    events.push({ phase, trigger, failed });
  };
  subscribe(POD_SYNC_CHANNEL, onEvent);
  t.after(() => unsubscribe(POD_SYNC_CHANNEL, onEvent));
  const { calls, syncer } = recorder();
  const workers = new PodWorkers({ syncer, cache, clock, log: noopLogger, resyncMs: 60_000, signal: stop.signal, random: () => 0 });
  workers.update({ pod: pod('1') });
  await pollUntil('first sync', () => events.length === 1 && clock.pendingTimers === 1, { timeoutMs: 2000, intervalMs: 0 });
  clock.advance(60_000); // syncFrequency, jitter 0
  await pollUntil('resync', () => events.length === 2 && clock.pendingTimers === 1, { timeoutMs: 2000, intervalMs: 0 });
  workers.update({ pod: pod('2') }); // an update before the timer: not a resync
  await pollUntil('update', () => events.length === 3, { timeoutMs: 2000, intervalMs: 0 });
  assert.deepEqual(calls, ['sync 1', 'sync 1', 'sync 2']);
  assert.deepEqual(events, [
    { phase: 'sync', trigger: 'update', failed: false },
    { phase: 'sync', trigger: 'resync', failed: false },
    { phase: 'sync', trigger: 'update', failed: false },
  ]);
  stop.abort();
  await workers.drain();
});

test('pod worker: kill stops a pod that stays in the API, with the capped grace and the status edit', async (t) => {
  const stop = new AbortController();
  t.after(() => stop.abort());
  const edits: string[] = [];
  const { calls, syncer } = recorder({
    syncTerminatingPod: async (_s, _p, _o, g, fn) => { calls.push(`terminating ${g} ${typeof fn}`); },
    syncTerminatedPod: async (_s, _p, deleted, fn) => {
      const st = { phase: 'Running' as const, conditions: [] };
      fn?.(st);
      calls.push(`terminated ${deleted} ${st.phase}`);
    },
  });
  const workers = new PodWorkers({ syncer, cache, clock: new FakeClock(), log: noopLogger, resyncMs: 60_000, signal: stop.signal, random: () => 0 });
  workers.update({ pod: { ...pod('1'), spec: { containers: [], terminationGracePeriodSeconds: 30 } } });
  await pollUntil('first sync', () => calls.length === 1, { timeoutMs: 2000, intervalMs: 0 });
  await workers.kill(pod('1'), { gracePeriodS: 20, statusFn: (s) => { edits.push('edit'); s.phase = 'Failed'; } });
  assert.equal(workers.phase('u1') === 'terminated' || workers.phase('u1') === 'finished', true, 'kill resolves once the containers are stopped');
  await pollUntil('finished', () => workers.phase('u1') === 'finished', { timeoutMs: 2000, intervalMs: 0 });
  // Not deleted: the runtime objects and the API pod stay; the status keeps the edit.
  assert.deepEqual(calls, ['sync 1', 'terminating 20 function', 'terminated false Failed']);
  // A later pod update (the API still has it) does not restart the pod; killing it again resolves at once.
  workers.update({ pod: pod('2') });
  await workers.kill(pod('2'), { gracePeriodS: 1, statusFn: () => {} });
  assert.equal(workers.phase('u1'), 'finished');
  assert.equal(calls.length, 3);
  stop.abort();
  await workers.drain();
});

test('pod workers: a pod the admission refuses never syncs; it fails at once with the reason, and admitted pods are what the handler sees', async (t) => {
  const stop = new AbortController();
  t.after(() => stop.abort());
  const statuses: Array<{ phase?: string; reason?: string; message?: string }> = [];
  const { calls, syncer } = recorder({
    syncTerminatedPod: async (_s, p, deleted, fn) => {
      const st = { phase: 'Pending' as const, conditions: [] };
      fn?.(st);
      statuses.push(st);
      calls.push(`terminated ${p.metadata.uid} ${deleted}`);
    },
  });
  const seen: string[][] = [];
  const admit = (p: Pod, admitted: readonly Pod[]) => {
    seen.push(admitted.map((a) => a.metadata.uid!));
    return p.metadata.uid === 'no' ? { admit: false as const, reason: 'OutOfcpu', message: 'too big' } : { admit: true as const };
  };
  const withSandbox = { ...cache, get: (uid: string) => ({ ...emptyObservedPod(uid), sandboxes: uid === 'running' ? [{ id: 's', attempt: 0, ready: true, createdAt: 1, ips: [] }] : [] }) } as never;
  const workers = new PodWorkers({ syncer, cache: withSandbox, clock: new FakeClock(), log: noopLogger, resyncMs: 60_000, signal: stop.signal, admit });
  workers.update({ pod: pod('1', { uid: 'yes' }) });
  await pollUntil('first pod synced', () => calls.includes('sync 1'), { timeoutMs: 2000, intervalMs: 0 });
  workers.update({ pod: pod('1', { uid: 'no' }) });
  await pollUntil('refused pod finished', () => workers.phase('no') === 'finished', { timeoutMs: 2000, intervalMs: 0 });
  assert.deepEqual(calls, ['sync 1', 'terminating 0', 'terminated no false']);
  assert.deepEqual(statuses, [{ phase: 'Failed', reason: 'OutOfcpu', message: 'Pod was rejected: too big', conditions: [] }]);
  assert.deepEqual(seen, [[], ['yes']], 'the first pod was judged against none, the second against the first');
  // Later updates of the refused pod do not start it; its deletion cleans it up.
  workers.update({ pod: pod('2', { uid: 'no' }) });
  assert.equal(workers.phase('no'), 'finished');
  // Not judged: a pod whose sandbox the runtime already has (admitted before a restart), a finished one, a deleted one.
  workers.update({ pod: pod('1', { uid: 'running' }) });
  workers.update({ pod: { ...pod('1', { uid: 'done' }), status: { phase: 'Succeeded' } } });
  workers.update({ pod: pod('1', { uid: 'gone', deletionTimestamp: 'x' }), terminationRequested: true });
  assert.equal(seen.length, 2);
  stop.abort();
  await workers.drain();
});
