import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pollUntil } from '../poll.js';
import { RecordingLogger } from '../testing/index.js';
import { cronProblem, liveCronTasks, scheduleCron } from './index.js';

test('a schedule has five fields, each valid; six only where a test asks', () => {
  assert.equal(cronProblem('0 */12 * * *'), undefined);
  assert.equal(cronProblem('30 2 * * 1-5'), undefined);
  assert.match(cronProblem('* * * * * *')!, /has 6 fields; a schedule has 5: minute hour/);
  assert.equal(cronProblem('* * * * * *', { allowSeconds: true }), undefined);
  assert.match(cronProblem('0 */12 * *')!, /has 4 fields/);
  assert.match(cronProblem('61 * * * *')!, /not a valid cron schedule/);
  assert.throws(() => scheduleCron('--x-cron', 'daily', async () => undefined, { log: new RecordingLogger(), name: 't' }), /--x-cron: "daily" has 1 field/);
});

test('ticks on real node-cron timers; a throwing tick is logged and the next one runs; close leaves no task', { timeout: 15_000 }, async () => {
  const log = new RecordingLogger();
  let ticks = 0;
  const job = scheduleCron('--x-cron', '* * * * * *', async () => {
    ticks++;
    if (ticks === 1) throw new Error('first tick fails');
  }, { log, name: 'cron-test', allowSeconds: true });
  assert.ok(job.nextRun()!.getTime() - Date.now() <= 1_000);
  await pollUntil('two ticks', () => ticks >= 2, { timeoutMs: 10_000, intervalMs: 50 });
  await job.close();
  assert.equal(log.find(/^Scheduled job failed$/, 'error').length, 1);
  assert.equal(liveCronTasks('cron-test'), 0);
});
