import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@nodelet/base/testing';
import { RestartBackoff } from './restart-backoff.js';

test('CrashLoopBackOff: first restart immediate, then 10 s doubling to 300 s, reset after 10 min up', () => {
  const clock = new FakeClock();
  const b = new RestartBackoff({ clock });
  const delays: number[] = [];
  for (let i = 0; i < 8; i++) {
    const died = clock.now();
    const wait = b.remaining('c', died);
    delays.push(wait);
    clock.advance(wait);
    b.next('c', died);
  }
  assert.deepEqual(delays, [0, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000]);
  clock.advance(600_001 + 300_000);
  assert.equal(b.remaining('c', clock.now()), 0);
  b.next('c', clock.now());
  assert.equal(b.delay('c'), 10_000);
});
