// The CronJob controller against the real API server with a clock the test moves minute by minute.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CRONJOBS, EVENTS, JOBS, type ApiClient, type CronJob, type Job } from '@nodelet/api';
import { startRealCluster, type RealCluster } from '../testing/real-cluster.js';
import { JumpClock } from '../testing/jump-clock.js';
import { quiesce } from '../testing/quiesce.js';
import type { ControllerManagerHandle } from '../index.js';
import { pollUntil } from '@nodelet/base';

function cronJob(name: string, spec: Partial<NonNullable<CronJob['spec']>> = {}): CronJob {
  return {
    metadata: { name, namespace: 'default' },
    spec: {
      schedule: '*/1 * * * *',
      jobTemplate: { metadata: { labels: { app: name } }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox:1.36', command: ['true'] }] } } } },
      ...spec,
    },
  };
}

const owned = async (client: ApiClient, name: string): Promise<Job[]> =>
  (await client.resource(JOBS, 'default').list({ labelSelector: `app=${name}` })).items.filter((j) => !j.metadata.deletionTimestamp);

/** Plays the Job controller: the Job finished with `type` at `ms`. */
async function finishJob(client: ApiClient, j: Job, type: 'Complete' | 'Failed', ms: number): Promise<void> {
  const t = new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
  await client.resource(JOBS, 'default').updateStatus({
    ...j,
    status: { startTime: t, ...(type === 'Complete' ? { completionTime: t, succeeded: 1 } : { failed: 1 }), conditions: [{ type, status: 'True', lastTransitionTime: t, reason: type === 'Complete' ? 'CompletionsReached' : 'BackoffLimitExceeded' }] },
  });
}

describe('cronjob controller on the real API server', () => {
  let c: RealCluster;
  let cm: ControllerManagerHandle;
  const clock = new JumpClock();
  before(async () => {
    c = await startRealCluster();
    cm = await c.controllers(['cronjob'], { clock });
  });
  after(() => c.close());

  it('a */1 schedule makes <name>-<minutes since epoch> Jobs each minute and keeps 2 successful and 1 failed', async () => {
    const cjs = c.admin.resource(CRONJOBS, 'default');
    const created = await cjs.create(cronJob('tick', { successfulJobsHistoryLimit: 2, failedJobsHistoryLimit: 1 }));
    assert.deepEqual([created.spec?.concurrencyPolicy, created.spec?.suspend], ['Allow', false]);
    const seen: string[] = [];
    for (let minute = 1; minute <= 5; minute++) {
      clock.jump(60_000);
      const j = await pollUntil(`job of minute ${minute}`, async () => (await owned(c.admin, 'tick')).find((x) => !seen.includes(x.metadata.name!) && !x.status?.conditions), { timeoutMs: 8000, intervalMs: 25 });
      const scheduled = Date.parse(j.metadata.annotations?.['batch.kubernetes.io/cronjob-scheduled-timestamp'] ?? '');
      assert.equal(j.metadata.name, `tick-${Math.floor(scheduled / 60_000)}`);
      assert.equal(scheduled % 60_000, 0, 'scheduled on the minute');
      assert.ok(scheduled <= clock.now() && clock.now() - scheduled < 60_000);
      assert.deepEqual(j.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.controller]), [['CronJob', 'tick', true]]);
      const cj = await pollUntil('active + lastScheduleTime', async () => {
        const x = await cjs.get('tick');
        return x.status?.active?.some((r) => r.name === j.metadata.name) ? x : undefined;
      }, { timeoutMs: 8000, intervalMs: 25 });
      assert.equal(Date.parse(cj.status!.lastScheduleTime!), scheduled);
      seen.push(j.metadata.name!);
      await finishJob(c.admin, j, minute === 2 || minute === 3 ? 'Failed' : 'Complete', clock.now());
    }
    const kept = await pollUntil('history trimmed', async () => {
      const l = await owned(c.admin, 'tick');
      return l.length === 3 && l.every((j) => j.status?.conditions) ? l : undefined;
    }, { timeoutMs: 8000, intervalMs: 25 });
    // Successful: minutes 1, 4, 5 → the newest two stay; failed: 2, 3 → only 3 stays.
    assert.deepEqual(kept.map((j) => j.metadata.name).sort(), [seen[2], seen[3], seen[4]].sort());
    const cj = await pollUntil('no active', async () => {
      const x = await cjs.get('tick');
      return !x.status?.active?.length && x.status?.lastSuccessfulTime ? x : undefined;
    }, { timeoutMs: 8000, intervalMs: 25 });
    assert.ok(cj.status?.lastSuccessfulTime);
  });

  it('Forbid skips an activation while a Job runs; suspend stops new Jobs', async () => {
    const cjs = c.admin.resource(CRONJOBS, 'default');
    await cjs.create(cronJob('forbid', { concurrencyPolicy: 'Forbid' }));
    clock.jump(60_000);
    const first = await pollUntil('first job', async () => (await owned(c.admin, 'forbid'))[0], { timeoutMs: 8000, intervalMs: 25 });
    // The next activation must find the first Job running: wait until the controller has recorded
    // it (a jump before that races the controller's own status write, not the Forbid policy).
    await pollUntil('the first job recorded active', async () => ((await cjs.get('forbid')).status?.active?.length === 1 ? true : undefined), { timeoutMs: 8000, intervalMs: 25 });
    clock.jump(60_000);
    await pollUntil('JobAlreadyActive event', async () => ((await c.admin.resource(EVENTS, 'default').list()).items.some((e) => e.involvedObject?.name === 'forbid' && e.reason === 'JobAlreadyActive') ? true : undefined), { timeoutMs: 8000, intervalMs: 25 });
    assert.equal((await owned(c.admin, 'forbid')).length, 1);
    // Suspended before the running Job ends: the skipped activation is not made up for.
    await cjs.patch('forbid', { spec: { suspend: true } }, { type: 'merge' });
    await finishJob(c.admin, first, 'Complete', clock.now());
    await pollUntil('active cleared', async () => (!(await cjs.get('forbid')).status?.active?.length ? true : undefined), { timeoutMs: 8000, intervalMs: 25 });
    clock.jump(120_000);
    await quiesce(cm, c.admin);
    assert.equal((await owned(c.admin, 'forbid')).length, 1, 'suspended: no new Job');
  });

  it('Replace deletes the running Job; a TZ prefix is refused at create, timeZone is accepted', async () => {
    const cjs = c.admin.resource(CRONJOBS, 'default');
    await cjs.create(cronJob('replace', { concurrencyPolicy: 'Replace', timeZone: 'Europe/Berlin' }));
    clock.jump(60_000);
    const first = await pollUntil('first job', async () => (await owned(c.admin, 'replace'))[0], { timeoutMs: 8000, intervalMs: 25 });
    assert.match(first.metadata.annotations?.['batch.kubernetes.io/cronjob-scheduled-timestamp'] ?? '', /\+0[12]:00$/);
    clock.jump(60_000);
    const second = await pollUntil('replacement', async () => (await owned(c.admin, 'replace')).find((j) => j.metadata.name !== first.metadata.name), { timeoutMs: 8000, intervalMs: 25 });
    await pollUntil('first deleted', async () => ((await owned(c.admin, 'replace')).some((j) => j.metadata.name === first.metadata.name) ? undefined : true), { timeoutMs: 8000, intervalMs: 25 });
    assert.ok(second);
    await assert.rejects(cjs.create(cronJob('tz', { schedule: 'CRON_TZ=UTC * * * * *' })), (e: Error) => /cannot use TZ or CRON_TZ in schedule, use timeZone field instead/.test(e.message));
    await assert.rejects(cjs.create(cronJob('badtz', { timeZone: 'Mars/Base' })), (e: Error) => /unknown time zone Mars\/Base/.test(e.message));
    await assert.rejects(cjs.create(cronJob('sixfields', { schedule: '* * * * * *' })), (e: Error) => /expected exactly 5 fields/.test(e.message));
  });
});
