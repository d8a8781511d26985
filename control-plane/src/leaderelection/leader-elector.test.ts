import { test } from 'node:test';
import assert from 'node:assert/strict';
import { noopLogger } from '@nodelet/base';
import { FakeClock } from '@nodelet/base/testing';
import { LeaderElector, leaderIdentity } from './leader-elector.js';
import { MemoryLeaseStore } from './testing/memory-lease-lock.js';

const MICRO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

/** An elector whose lead() records when it acts; `stop()` ends its run. */
function candidate(clock: FakeClock, store: MemoryLeaseStore, name: string, acting: Set<string>, random = () => 0) {
  const lock = store.lock();
  const elector = new LeaderElector({ lock, identity: name, clock, log: noopLogger, random });
  const stop = new AbortController();
  const events: string[] = [];
  const run = elector.run(async (signal) => {
    events.push(`start@${clock.monotonic()}`);
    acting.add(name);
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    acting.delete(name);
    events.push(`stop@${clock.monotonic()}`);
  }, stop.signal);
  return { elector, lock, events, run, stop: async () => { stop.abort(); await run; } };
}

/** Advances in 100 ms steps, checking after each that at most one elector acts. */
async function advance(clock: FakeClock, ms: number, acting: Set<string>): Promise<void> {
  for (let t = 0; t < ms; t += 100) {
    await clock.advanceAsync(100);
    assert.ok(acting.size <= 1, `two leaders at ${clock.monotonic()} ms: ${[...acting].join(', ')}`);
  }
}

test('identity is <hostname>_<uuid>', () => {
  assert.match(leaderIdentity(), /^.+_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
});

test('acquires a missing lease with kube defaults, then renews it every retry period', async () => {
  const clock = new FakeClock();
  const store = new MemoryLeaseStore();
  const acting = new Set<string>();
  const a = candidate(clock, store, 'a', acting);
  await advance(clock, 100, acting);
  assert.ok(a.elector.isLeader);
  assert.deepEqual([...acting], ['a']);
  const first = store.lease!.spec!;
  assert.equal(first.holderIdentity, 'a');
  assert.equal(first.leaseDurationSeconds, 15);
  assert.equal(first.leaseTransitions, 0);
  assert.match(String(first.acquireTime), MICRO_TIME);
  assert.equal(first.renewTime, first.acquireTime);

  await advance(clock, 2000, acting);
  const renewed = store.lease!.spec!;
  assert.equal(store.writes.length, 2);
  assert.equal(renewed.acquireTime, first.acquireTime);
  assert.notEqual(renewed.renewTime, first.renewTime);
  assert.equal(renewed.leaseTransitions, 0);
  await a.stop();
});

test('a standby waits while the leader renews, and never leads at the same time', async () => {
  const clock = new FakeClock();
  const store = new MemoryLeaseStore();
  const acting = new Set<string>();
  const a = candidate(clock, store, 'a', acting);
  await advance(clock, 100, acting);
  const b = candidate(clock, store, 'b', acting);
  await advance(clock, 60_000, acting);
  assert.ok(a.elector.isLeader);
  assert.ok(!b.elector.isLeader);
  assert.deepEqual(b.events, []);
  await b.stop();
  await a.stop();
});

test('a leader cut off from the API stops acting at the renew deadline, before the standby takes over', async () => {
  const clock = new FakeClock();
  const store = new MemoryLeaseStore();
  const acting = new Set<string>();
  const a = candidate(clock, store, 'a', acting);
  await advance(clock, 100, acting);
  const b = candidate(clock, store, 'b', acting);
  await advance(clock, 100, acting);
  // Requests hang: only the renew deadline can end a's leadership.
  a.lock.behaviour.mode = 'hang';
  const lastRenew = Number(/@(\d+)/.exec(a.events[0]!)![1]);
  const renews = store.writes.length;
  await advance(clock, 30_000, acting);
  assert.equal(store.writes.filter((w) => w.spec?.holderIdentity === 'a').length, renews, 'a did not renew while hanging');
  const stoppedAt = Number(/stop@(\d+)/.exec(a.events.join(' '))![1]);
  const takenAt = Number(/start@(\d+)/.exec(b.events[0]!)![1]);
  // a's last renew is at most 2 s after its start; it stops within 10 s of that.
  assert.ok(stoppedAt <= lastRenew + 2000 + 10_000, `a stopped at ${stoppedAt}`);
  assert.ok(takenAt >= stoppedAt + 1, 'b started after a stopped');
  assert.ok(takenAt - stoppedAt >= 4000, `b waited out the lease (gap ${takenAt - stoppedAt} ms)`);
  assert.ok(!a.elector.isLeader);
  assert.ok(b.elector.isLeader);
  assert.equal(store.lease!.spec!.holderIdentity, 'b');
  assert.equal(store.lease!.spec!.leaseTransitions, 1);
  a.lock.behaviour.mode = 'ok';
  await b.stop();
  await a.stop();
});

test('a dead leader (requests fail) is replaced after the lease expires, counting the transition', async () => {
  const clock = new FakeClock();
  const store = new MemoryLeaseStore();
  const acting = new Set<string>();
  const a = candidate(clock, store, 'a', acting);
  await advance(clock, 100, acting);
  const b = candidate(clock, store, 'b', acting);
  a.lock.behaviour.mode = 'fail';
  const lastWrite = clock.monotonic();
  await advance(clock, 14_000, acting);
  assert.deepEqual(b.events, [], 'no takeover before the lease duration');
  await advance(clock, 6000, acting);
  assert.ok(b.elector.isLeader, 'b took over');
  const takenAt = Number(/start@(\d+)/.exec(b.events[0]!)![1]);
  assert.ok(takenAt - lastWrite >= 15_000 && takenAt - lastWrite <= 15_000 + 2500, `took over after ${takenAt - lastWrite} ms`);
  assert.equal(store.lease!.spec!.leaseTransitions, 1);
  a.lock.behaviour.mode = 'ok';
  await a.stop();
  await b.stop();
});

test('stop releases the lease (holder empty, 1 s) so a standby takes it at its next retry', async () => {
  const clock = new FakeClock();
  const store = new MemoryLeaseStore();
  const acting = new Set<string>();
  const a = candidate(clock, store, 'a', acting);
  await advance(clock, 100, acting);
  const b = candidate(clock, store, 'b', acting);
  await advance(clock, 3000, acting);
  await a.stop();
  assert.deepEqual(a.events.map((e) => e.split('@')[0]), ['start', 'stop']);
  assert.equal(store.lease!.spec!.holderIdentity, '');
  assert.equal(store.lease!.spec!.leaseDurationSeconds, 1);
  const releasedAt = clock.monotonic();
  await advance(clock, 2500, acting);
  assert.ok(b.elector.isLeader, 'b took over within one retry period');
  assert.ok(clock.monotonic() - releasedAt <= 2500);
  assert.equal(store.lease!.spec!.holderIdentity, 'b');
  assert.equal(store.lease!.spec!.leaseTransitions, 1);
  await b.stop();
  assert.equal(store.lease!.spec!.holderIdentity, '');
});

test('a leader whose lease was taken (seen held by another) stops at once', async () => {
  const clock = new FakeClock();
  const store = new MemoryLeaseStore();
  const acting = new Set<string>();
  const a = candidate(clock, store, 'a', acting);
  await advance(clock, 100, acting);
  // An operator (or a split-brain bug elsewhere) hands the lease to someone else.
  store.lease = { ...store.lease!, spec: { ...store.lease!.spec, holderIdentity: 'intruder' }, metadata: { ...store.lease!.metadata, resourceVersion: '99' } };
  await advance(clock, 2100, acting);
  assert.ok(!a.elector.isLeader);
  assert.equal(acting.size, 0);
  assert.equal(store.lease.spec!.holderIdentity, 'intruder', 'a does not release a lease it does not hold');
  await a.stop();
});

test('lead() ending on its own gives the lease up and campaigns again', async () => {
  const clock = new FakeClock();
  const store = new MemoryLeaseStore();
  let starts = 0;
  const stop = new AbortController();
  const elector = new LeaderElector({ lock: store.lock(), identity: 'a', clock, log: noopLogger, random: () => 0 });
  const run = elector.run(async () => {
    starts++;
    if (starts === 1) throw new Error('scheduler failed to start');
    await new Promise<void>((resolve) => stop.signal.addEventListener('abort', () => resolve(), { once: true }));
  }, stop.signal);
  await clock.advanceAsync(100);
  assert.equal(store.lease!.spec!.holderIdentity, '', 'released after the failure');
  await clock.advanceAsync(5000);
  assert.equal(starts, 2);
  assert.ok(elector.isLeader);
  stop.abort();
  await run;
});

test('several electors under random faults never lead at the same time', async () => {
  const clock = new FakeClock();
  const store = new MemoryLeaseStore();
  const acting = new Set<string>();
  let seed = 7;
  const random = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const cs = ['a', 'b', 'c'].map((n) => candidate(clock, store, n, acting, random));
  const modes = ['ok', 'ok', 'ok', 'fail', 'hang'] as const;
  let leaderships = 0;
  for (let round = 0; round < 40; round++) {
    for (const c of cs) c.lock.behaviour.mode = modes[Math.floor(random() * modes.length)]!;
    await advance(clock, 1000 + Math.floor(random() * 8000), acting);
    leaderships = cs.reduce((n, c) => n + c.events.filter((e) => e.startsWith('start')).length, 0);
  }
  for (const c of cs) c.lock.behaviour.mode = 'ok';
  assert.ok(leaderships >= 3, `leadership moved (${leaderships} terms)`);
  for (const c of cs) await c.stop();
});

test('rejects timings that would let two leaders overlap', () => {
  assert.throws(() => new LeaderElector({ lock: new MemoryLeaseStore().lock(), identity: 'a', clock: new FakeClock(), log: noopLogger, leaseDurationMs: 10_000, renewDeadlineMs: 10_000 }), RangeError);
});
