import { getEventListeners } from 'node:events';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from './testing/fake-clock.js';
import { Wakeup } from './wakeup.js';
import { isAbortError } from './errors.js';

test('wait with a timeout: a notify wakes it early, the timeout wakes it otherwise; nothing is left behind', async () => {
  const clock = new FakeClock();
  const wake = new Wakeup();
  const life = new AbortController();
  let woke = false;
  const early = wake.wait(life.signal, { clock, ms: 1000 }).then(() => (woke = true));
  wake.notify();
  await early;
  assert.ok(woke);
  assert.equal(clock.pendingTimers, 0, 'the timer of a notified wait is cancelled');

  woke = false;
  const late = wake.wait(life.signal, { clock, ms: 1000 }).then(() => (woke = true));
  await clock.advanceAsync(999);
  assert.equal(woke, false);
  await clock.advanceAsync(1);
  await late;
  assert.equal(getEventListeners(life.signal, 'abort').length, 0);
  wake.notify();
  await wake.wait(life.signal, { clock, ms: 1000 });
  assert.equal(clock.pendingTimers, 0, 'a notify after a timed-out wait is kept for the next wait');

  const aborted = wake.wait(life.signal, { clock, ms: 1000 });
  life.abort();
  await assert.rejects(aborted, (err: unknown) => isAbortError(err));
  assert.equal(clock.pendingTimers, 0);
});
