import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@nodelet/base/testing';
import { SchedulingQueue } from './queue.js';

test('backoff is 1 s doubling to 10 s', () => {
  assert.deepEqual([1, 2, 3, 4, 5, 6].map((n) => SchedulingQueue.backoffFor(n)), [1000, 2000, 4000, 8000, 10000, 10000]);
});

test('pods come out in arrival order; an unschedulable pod waits for a cluster event and its backoff', async () => {
  const clock = new FakeClock();
  const q = new SchedulingQueue(clock);
  const signal = new AbortController().signal;
  q.addOrUpdate('ns/a');
  q.addOrUpdate('ns/b');
  assert.equal(await q.pop(signal), 'ns/a');
  q.failed('ns/a', true);
  assert.equal(await q.pop(signal), 'ns/b');
  q.done('ns/b');
  assert.deepEqual(q.sizes, { active: 0, backoff: 0, unschedulable: 1, inFlight: 0 });

  // A cluster event before the backoff elapsed parks it in backoffQ; after 1 s it is active.
  q.moveAllToActiveOrBackoff();
  assert.deepEqual(q.sizes, { active: 0, backoff: 1, unschedulable: 0, inFlight: 0 });
  const popped = q.pop(signal);
  clock.advance(1000);
  assert.equal(await popped, 'ns/a');
});

test('a cluster event during the attempt sends the failure to backoff, not unschedulable', async () => {
  const clock = new FakeClock();
  const q = new SchedulingQueue(clock);
  q.addOrUpdate('ns/a');
  await q.pop(new AbortController().signal);
  q.moveAllToActiveOrBackoff();
  q.failed('ns/a', true);
  assert.equal(q.sizes.backoff, 1);
});

test('an update of a parked pod re-activates it; deletion forgets it; unschedulable pods flush after 5 min', async () => {
  const clock = new FakeClock();
  const q = new SchedulingQueue(clock);
  const signal = new AbortController().signal;
  q.addOrUpdate('ns/a');
  await q.pop(signal);
  q.failed('ns/a', true);
  clock.advance(2000);
  q.addOrUpdate('ns/a');
  assert.equal(q.sizes.active, 1);
  q.delete('ns/a');
  assert.equal(q.has('ns/a'), false);

  q.addOrUpdate('ns/b');
  await q.pop(signal);
  q.failed('ns/b', true);
  clock.advance(5 * 60_000);
  q.flushBackoff();
  assert.equal(q.sizes.active, 1);
});

test('pop rejects when the signal aborts', async () => {
  const q = new SchedulingQueue(new FakeClock());
  const ac = new AbortController();
  const p = q.pop(ac.signal);
  ac.abort();
  await assert.rejects(p, { name: 'AbortError' });
});

test('a targeted move takes only the unschedulable pods it picks', async () => {
  const clock = new FakeClock();
  const q = new SchedulingQueue(clock);
  const signal = new AbortController().signal;
  for (const k of ['ns/a', 'ns/b', 'ns/c']) q.addOrUpdate(k);
  for (let i = 0; i < 3; i++) q.failed((await q.pop(signal))!, true);
  assert.equal(q.sizes.unschedulable, 3);
  q.moveToActiveOrBackoff((k) => k === 'ns/b');
  assert.deepEqual(q.sizes, { active: 0, backoff: 1, unschedulable: 2, inFlight: 0 });
  const popped = q.pop(signal);
  clock.advance(1000);
  assert.equal(await popped, 'ns/b');
});

test('activeQ serves higher priority first, then arrival order (upstream PrioritySort)', () => {
  const q = new SchedulingQueue(new FakeClock());
  q.addOrUpdate('ns/low-1', 0);
  q.addOrUpdate('ns/high', 1000);
  q.addOrUpdate('ns/low-2', 0);
  q.addOrUpdate('ns/negative', -5);
  q.addOrUpdate('ns/mid', 10);
  const order: string[] = [];
  for (let k = q.tryPop(); k !== undefined; k = q.tryPop()) order.push(k);
  assert.deepEqual(order, ['ns/high', 'ns/mid', 'ns/low-1', 'ns/low-2', 'ns/negative']);
});
