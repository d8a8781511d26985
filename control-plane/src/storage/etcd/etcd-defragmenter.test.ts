import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pollUntil } from '@nodelet/base';
import { RecordingLogger } from '@nodelet/base/testing';
import { liveCronTasks } from '@nodelet/base/cron';
import { startDefragmenter } from './etcd-defragmenter.js';

test('runs on its interval, never two runs at once, logs a failure and stops when disposed', async (t) => {
  // The interval is a mocked one: each tick() is one period, fired synchronously, so "no run"
  // after a tick is a fact, not a matter of having waited long enough.
  t.mock.timers.enable({ apis: ['setInterval'] });
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
    t.mock.timers.tick(5);
    assert.equal(runs, 1, 'the first period starts a run');
    for (let i = 0; i < 5; i++) t.mock.timers.tick(5); // several periods pass while it runs
    assert.equal(runs, 1, 'no second run while the first is in flight');
    release();
    await pollUntil('third run', () => {
      t.mock.timers.tick(5);
      return runs >= 3;
    }, { timeoutMs: 2_000, intervalMs: 2 });
    assert.equal(maxInFlight, 1);
    // Run 3 settled (its "done" line is logged) and its bookkeeping after that has run (a macrotask
    // runs after every pending microtask): the next period would start a run, unless disposed.
    await pollUntil('the third run to finish', () => log.entries.some((r) => r.msg === 'Scheduled etcd defragmentation done'), { timeoutMs: 2_000, intervalMs: 2 });
    await new Promise((r) => setImmediate(r));
    assert.ok(log.entries.some((r) => r.msg === 'Scheduled etcd defragmentation failed'));
  } finally {
    d.dispose();
  }
  const after = runs;
  for (let i = 0; i < 5; i++) t.mock.timers.tick(5);
  assert.equal(runs, after, 'no runs after dispose');
});

test('on a cron schedule (node-cron, real timers): runs on its ticks, and its task is gone once disposed', { timeout: 15_000 }, async () => {
  let runs = 0;
  const d = startDefragmenter({ endpoints: ['http://127.0.0.1:1'] }, {
    cron: '* * * * * *', allowSeconds: true, logger: new RecordingLogger(),
    defragment: async () => {
      runs++;
    },
  });
  try {
    await pollUntil('two ticks', () => runs >= 2, { timeoutMs: 10_000, intervalMs: 50 });
  } finally {
    d.dispose();
  }
  // Disposed: node-cron holds no task of it any more, so no tick can start a run.
  assert.equal(liveCronTasks('etcd-defrag'), 0);
});
