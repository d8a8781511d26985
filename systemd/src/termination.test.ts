import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RecordingLogger } from '@nodelet/base/testing';
import { untilTerminated } from './termination.js';

test('resolves with the first SIGTERM or SIGINT, logs it, and leaves no handler behind', async () => {
  const log = new RecordingLogger();
  const before = [process.listenerCount('SIGTERM'), process.listenerCount('SIGINT')];
  const done = untilTerminated(log);
  process.emit('SIGINT');
  assert.equal(await done, 'SIGINT');
  assert.deepEqual(log.find(/^Shutting down$/, 'info').map((e) => e.fields['signal']), ['SIGINT']);
  assert.deepEqual([process.listenerCount('SIGTERM'), process.listenerCount('SIGINT')], before);
});
