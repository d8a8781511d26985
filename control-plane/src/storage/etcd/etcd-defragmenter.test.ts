import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pollUntil } from '@nodelet/base';
import { RecordingLogger } from '@nodelet/base/testing';
import { startDefragmenter } from './etcd-defragmenter.js';

test('runs on its interval, never two runs at once, logs a failure and stops when disposed', async () => {
  let runs = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  let release!: () => void;
  const log = new RecordingLogger();
  const d = startDefragmenter({ endpoints: ['http://127.0.0.1:1'] }, {
    intervalMs: 5,
    logger: log,
    defragment: async () => {
      runs++;
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        if (runs === 1) await new Promise<void>((r) => (release = r)); // a slow first run
        if (runs === 2) throw new Error('member down');
      } finally {
        inFlight--;
      }
    },
  });
  try {
    await pollUntil('first run started', () => runs === 1, { timeoutMs: 2_000, intervalMs: 2 });
    await new Promise((r) => setTimeout(r, 30)); // several intervals pass while it runs
    assert.equal(runs, 1, 'no second run while the first is in flight');
    release();
    await pollUntil('third run', () => runs >= 3, { timeoutMs: 2_000, intervalMs: 2 });
    assert.equal(maxInFlight, 1);
    assert.ok(log.entries.some((r) => r.msg === 'Scheduled etcd defragmentation failed'));
  } finally {
    d.dispose();
  }
  const after = runs;
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(runs, after, 'no runs after dispose');
});
