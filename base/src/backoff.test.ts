import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Backoff } from './backoff.js';
import { KeyedSerializer } from './serializer.js';
import { linkAbort } from './abort.js';
import { AgentError, hasCode } from './errors.js';
import { FakeClock } from './testing/index.js';

test('backoff doubles to the cap and resets after quiet time (CrashLoopBackOff numbers)', () => {
  const clock = new FakeClock();
  const b = new Backoff({ initialMs: 10_000, maxMs: 300_000, resetAfterMs: 600_000, clock });
  const seen = [b.next('c'), b.next('c'), b.next('c'), b.next('c'), b.next('c'), b.next('c')];
  assert.deepEqual(seen, [10_000, 20_000, 40_000, 80_000, 160_000, 300_000]);
  assert.equal(b.isInBackoff('c'), true);
  clock.advance(300_001);
  assert.equal(b.isInBackoff('c'), false);
  clock.advance(600_000);
  assert.equal(b.next('c'), 10_000);
});

test('keyed serializer never overlaps tasks on one key', async () => {
  const s = new KeyedSerializer();
  const log: string[] = [];
  const task = (name: string) => async () => {
    log.push(`start ${name}`);
    await new Promise((r) => setTimeout(r, 5));
    log.push(`end ${name}`);
  };
  await Promise.all([s.run('a', task('1')), s.run('a', task('2'))]);
  assert.deepEqual(log, ['start 1', 'end 1', 'start 2', 'end 2']);
  await new Promise((r) => setImmediate(r));
  assert.equal(s.size, 0);
});

test('linkAbort follows the parent and unhooks on dispose', () => {
  const parent = new AbortController();
  const link = linkAbort(parent.signal);
  link.dispose();
  parent.abort();
  assert.equal(link.signal.aborted, false);
  const link2 = linkAbort(parent.signal);
  assert.equal(link2.signal.aborted, true);
});

test('hasCode classifies by code across copies', () => {
  const err = new AgentError('ERR_NOT_FOUND', 'container "abc" not found');
  assert.equal(hasCode(err, 'ERR_NOT_FOUND'), true);
  assert.equal(hasCode(new Error('ERR_NOT_FOUND'), 'ERR_NOT_FOUND'), false);
  assert.equal(err.retryable, false);
});
