import { getEventListeners } from 'node:events';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from './testing/fake-clock.js';
import { isAbortError } from './errors.js';

/** Abort listeners on `signal` right now. */
const abortListeners = (signal: AbortSignal): number => getEventListeners(signal, 'abort').length;

test('sleep resolves after its time on the clock, and an abort rejects it at once leaving no timer or listener', async () => {
  const clock = new FakeClock();
  let done = false;
  const p = clock.sleep(1000).then(() => (done = true));
  clock.advance(999);
  await Promise.resolve();
  assert.equal(done, false);
  clock.advance(1);
  await p;
  assert.equal(done, true);

  const stop = new AbortController();
  const slept = clock.sleep(60_000, stop.signal);
  assert.equal(clock.pendingTimers, 1);
  assert.equal(abortListeners(stop.signal), 1);
  stop.abort(new Error('shutdown'));
  await assert.rejects(slept, (err: unknown) => isAbortError(err) && (err as { cause?: Error }).cause?.message === 'shutdown');
  assert.equal(clock.pendingTimers, 0);
  assert.equal(abortListeners(stop.signal), 0);
  await assert.rejects(clock.sleep(1, stop.signal), (err: unknown) => isAbortError(err), 'an aborted signal rejects at once');
});

test('sleeping many times on one long-lived signal adds no listener that outlives the sleep', async () => {
  const clock = new FakeClock();
  const life = new AbortController();
  for (let i = 0; i < 100; i++) {
    const p = clock.sleep(20_000, life.signal);
    clock.advance(20_000);
    await p;
  }
  assert.equal(abortListeners(life.signal), 0);
});

test('every: first run after one period (or at once with immediate), then a period after each run ENDS', async () => {
  const clock = new FakeClock();
  const starts: number[] = [];
  let finish: (() => void) | undefined;
  const job = clock.every(
    1000,
    () => {
      starts.push(clock.monotonic());
      return new Promise<void>((r) => (finish = r));
    },
    { onError: assert.fail },
  );
  await clock.advanceAsync(999);
  assert.deepEqual(starts, []);
  await clock.advanceAsync(1);
  assert.deepEqual(starts, [1000]);
  // The run takes 5 s: nothing starts meanwhile (runs never overlap), the next one is 1 s after its end.
  await clock.advanceAsync(5000);
  assert.deepEqual(starts, [1000]);
  assert.equal(clock.pendingTimers, 0);
  finish!();
  await clock.advanceAsync(0);
  assert.deepEqual(clock.timerDelays(), [1000]);
  await clock.advanceAsync(1000);
  assert.deepEqual(starts, [1000, 7000]);
  job.dispose();
  finish!();
  await job.stopped;

  const now: number[] = [];
  const imm = clock.every(1000, () => void now.push(clock.monotonic()), { immediate: true, onError: assert.fail });
  assert.deepEqual(now, [clock.monotonic()], 'the immediate run starts inside every()');
  imm.dispose();
  await imm.stopped;
});

test('every: jitter stretches each wait by period × jitter × random', async () => {
  const clock = new FakeClock();
  const job = clock.every(1000, () => undefined, { jitter: 0.5, random: () => 0.5, onError: assert.fail });
  assert.deepEqual(clock.timerDelays(), [1250]);
  job.dispose();
});

test('every: trigger runs at once when idle, once more after a run in flight, and coalesces', async () => {
  const clock = new FakeClock();
  let runs = 0;
  let finish: (() => void) | undefined;
  const job = clock.every(
    10_000,
    () => {
      runs++;
      return new Promise<void>((r) => (finish = r));
    },
    { onError: assert.fail },
  );
  job.trigger();
  assert.equal(runs, 1, 'an idle job runs on trigger without waiting for its period');
  job.trigger();
  job.trigger();
  job.trigger();
  assert.equal(runs, 1, 'no overlap');
  finish!();
  await clock.advanceAsync(0);
  assert.equal(runs, 2, 'the triggers during the run made exactly one more run');
  finish!();
  await clock.advanceAsync(0);
  assert.equal(runs, 2);
  assert.deepEqual(clock.timerDelays(), [10_000]);
  job.dispose();
  await job.stopped;
});

test('every: errors go to onError (sync throws and rejections) and the job keeps its schedule', async () => {
  const clock = new FakeClock();
  const errors: string[] = [];
  let n = 0;
  const job = clock.every(
    100,
    () => {
      n++;
      if (n === 1) throw new Error('sync boom');
      if (n === 2) return Promise.reject(new Error('async boom'));
      return undefined;
    },
    { onError: (err) => errors.push((err as Error).message) },
  );
  await clock.advanceAsync(300);
  assert.equal(n, 3);
  assert.deepEqual(errors, ['sync boom', 'async boom']);
  job.dispose();
});

test('every: dispose or the owner signal stops it, aborts the run in flight, and `stopped` waits for that run', async () => {
  const clock = new FakeClock();
  const life = new AbortController();
  const errors: unknown[] = [];
  let runSignal: AbortSignal | undefined;
  let ended = false;
  const job = clock.every(
    100,
    async (signal) => {
      runSignal = signal;
      await clock.sleep(60_000, signal).finally(() => (ended = true));
    },
    { signal: life.signal, onError: (err) => errors.push(err) },
  );
  assert.equal(abortListeners(life.signal), 1, 'one listener for the whole job');
  await clock.advanceAsync(100);
  assert.ok(runSignal && !runSignal.aborted);
  let stopped = false;
  void job.stopped.then(() => (stopped = true));
  life.abort();
  assert.ok(runSignal.aborted, 'the run sees the stop');
  await job.stopped;
  assert.ok(ended && stopped);
  assert.deepEqual(errors, [], 'the AbortError of a stopped run is not an error');
  assert.equal(clock.pendingTimers, 0);
  assert.equal(abortListeners(life.signal), 0);
  job.trigger();
  await clock.advanceAsync(1000);
  assert.equal(clock.pendingTimers, 0, 'a stopped job never runs again');

  const dead = clock.every(100, () => assert.fail('must not run'), { signal: life.signal, immediate: true, onError: assert.fail });
  await dead.stopped;
});

test('every: timeoutMs gives each run its own deadline on the clock; the job goes on', async () => {
  const clock = new FakeClock();
  const errors: unknown[] = [];
  let runs = 0;
  const job = clock.every(
    1000,
    async (signal) => {
      runs++;
      await clock.sleep(10_000, signal);
    },
    { timeoutMs: 500, onError: (err) => errors.push(err) },
  );
  await clock.advanceAsync(1000);
  assert.equal(runs, 1);
  await clock.advanceAsync(500);
  assert.equal(errors.length, 1);
  assert.ok(isAbortError(errors[0]));
  assert.equal(((errors[0] as { cause?: DOMException }).cause)?.name, 'TimeoutError');
  await clock.advanceAsync(1000);
  assert.equal(runs, 2);
  job.dispose();
  await job.stopped;
});
