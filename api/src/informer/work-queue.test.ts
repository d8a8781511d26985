import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isAbortError } from '@nodelet/base';
import { FakeClock } from '@nodelet/base/testing';
import { WorkQueue } from './work-queue.js';

test('items are deduplicated while queued and never processed twice at once', async () => {
  const q = new WorkQueue();
  q.add('a');
  q.add('b');
  q.add('a');
  assert.equal(q.length, 2);
  assert.equal(await q.get(), 'a');
  q.add('a'); // re-added while processing: held back until done()
  assert.equal(await q.get(), 'b');
  assert.equal(q.length, 0);
  q.done('a');
  assert.equal(q.length, 1);
  assert.equal(await q.get(), 'a');
  q.done('a');
  q.done('b');
  assert.equal(q.length, 0);
});

test('a waiting get() receives the next add', async () => {
  const q = new WorkQueue();
  const p = q.get();
  q.add('x');
  assert.equal(await p, 'x');
  q.add('x');
  assert.equal(q.length, 0, 'x is processing; the add is held');
  q.done('x');
  assert.equal(await q.get(), 'x');
});

test('addAfter waits on the clock and the earliest delay wins', async () => {
  const clock = new FakeClock();
  const q = new WorkQueue({ clock });
  q.addAfter('a', 100);
  q.addAfter('a', 50);
  q.addAfter('a', 500);
  clock.advance(49);
  assert.equal(q.length, 0);
  clock.advance(1);
  assert.equal(q.length, 1);
  clock.advance(1000);
  assert.equal(q.length, 1, 'the later delays were dropped');
  q.addAfter('b', 0);
  assert.equal(q.length, 2);
});

test('addRateLimited backs off exponentially per item until forget()', async () => {
  const clock = new FakeClock();
  const q = new WorkQueue({ clock, rateLimit: { initialMs: 10, maxMs: 40 } });
  const delays: number[] = [];
  for (let i = 0; i < 4; i++) {
    q.addRateLimited('a');
    let waited = 0;
    while (q.length === 0) {
      clock.advance(1);
      waited++;
    }
    delays.push(waited);
    assert.equal(await q.get(), 'a');
    q.done('a');
  }
  assert.deepEqual(delays, [10, 20, 40, 40]);
  assert.equal(q.numRequeues('a'), 4);
  q.forget('a');
  assert.equal(q.numRequeues('a'), 0);
  q.addRateLimited('a');
  clock.advance(10);
  assert.equal(q.length, 1, 'back to the initial delay after forget');
});

test('shutDown drains: get() returns queued items, then undefined; delayed adds are cancelled', async () => {
  const clock = new FakeClock();
  const q = new WorkQueue({ clock });
  const waiting = new WorkQueue();
  const w = waiting.get();
  waiting.shutDown();
  assert.equal(await w, undefined);
  q.add('a');
  q.addAfter('b', 10);
  q.shutDown();
  q.shutDown();
  q.add('c');
  clock.advance(100);
  assert.equal(await q.get(), 'a');
  assert.equal(await q.get(), undefined);
  assert.equal(clock.pendingTimers, 0);
});

test('get() rejects with AbortError when its signal aborts', async () => {
  const q = new WorkQueue();
  const ac = new AbortController();
  const p = q.get(ac.signal);
  ac.abort();
  await assert.rejects(p, (e) => isAbortError(e));
  q.add('a');
  assert.equal(q.length, 1, 'the aborted waiter did not swallow the item');
});

test('active counts waiting and processing items, not delayed ones; handedOut counts every get()', async () => {
  const clock = new FakeClock();
  const q = new WorkQueue({ clock });
  q.addAfter('later', 100);
  assert.deepEqual([q.active, q.handedOut], [0, 0], 'a delayed item is work for later');
  q.add('a');
  assert.equal(q.active, 1);
  assert.equal(await q.get(), 'a');
  assert.deepEqual([q.active, q.handedOut], [1, 1], 'processing is still active');
  const waiting = q.get();
  q.done('a');
  assert.equal(q.active, 0);
  clock.advance(100);
  assert.equal(await waiting, 'later');
  assert.deepEqual([q.active, q.handedOut], [1, 2], 'handed straight to a waiting get()');
  q.done('later');
  assert.equal(q.active, 0);
});
