import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@nodelet/base/testing';
import { noopLogger, pollUntil } from '@nodelet/base';
import type { Pod } from '@nodelet/api';
import { PodWorkers } from './pod-workers.js';
import type { PodSyncer } from './pod-worker.js';
import { emptyObservedPod } from '../runtime/observed.js';

const pod = (rv: string, o: Partial<Pod['metadata']> = {}): Pod => ({ metadata: { name: 'p', namespace: 'd', uid: 'u1', resourceVersion: rv, ...o }, spec: { containers: [] } });
const cache = { waitNewerThan: async () => {}, get: (uid: string) => emptyObservedPod(uid) };

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
