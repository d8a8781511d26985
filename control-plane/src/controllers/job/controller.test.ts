// The Job and TTL-after-finished controllers against the real API server (controllers/testing/
// real-cluster.ts), each with its own identity; the test plays the agents (pod phases).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { JOBS, PODS, type ApiClient, type Job, type Pod } from '@nodelet/api';
import { startRealCluster, type RealCluster } from '../testing/real-cluster.js';
import { JumpClock } from '../testing/jump-clock.js';
import { quiesce } from '../testing/quiesce.js';
import type { ControllerManagerHandle } from '../index.js';
import { pollUntil } from '@nodelet/base';

function job(name: string, spec: Partial<NonNullable<Job['spec']>> = {}, command = ['true']): Job {
  return {
    metadata: { name, namespace: 'default' },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox:1.36', command }] } }, ...spec },
  };
}

async function podsOf(client: ApiClient, jobName: string): Promise<Pod[]> {
  return (await client.resource(PODS, 'default').list({ labelSelector: `batch.kubernetes.io/job-name=${jobName}` })).items;
}

/** Plays the agent: the pod's container exited with `exitCode`. */
async function finish(client: ApiClient, p: Pod, exitCode: number, at = new Date()): Promise<void> {
  const t = at.toISOString().replace(/\.\d{3}Z$/, 'Z');
  await client.resource(PODS, 'default').patchStatus(p.metadata.name!, {
    status: {
      phase: exitCode === 0 ? 'Succeeded' : 'Failed',
      containerStatuses: [{ name: 'main', ready: false, restartCount: 0, image: 'busybox:1.36', imageID: '', state: { terminated: { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', finishedAt: t } } }],
    },
  }, { type: 'merge' });
}

const active = (ps: Pod[]): Pod[] => ps.filter((p) => !p.metadata.deletionTimestamp && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
const cond = (j: Job, type: string): [string | undefined, string | undefined] => {
  const c = j.status?.conditions?.find((x) => x.type === type);
  return [c?.status, c?.reason];
};

describe('job controller on the real API server', () => {
  let c: RealCluster;
  let cm: ControllerManagerHandle;
  const clock = new JumpClock();
  before(async () => {
    c = await startRealCluster();
    cm = await c.controllers(['job', 'ttl-after-finished', 'garbagecollector'], { clock });
  });
  after(() => c.close());

  it('generates the selector and labels, runs 5 completions 2 at a time, then SuccessCriteriaMet and Complete', async () => {
    const jobs = c.admin.resource(JOBS, 'default');
    const created = await jobs.create(job('five', { completions: 5, parallelism: 2 }));
    const uid = created.metadata.uid!;
    assert.deepEqual(created.spec?.selector, { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } });
    assert.deepEqual(created.spec?.template.metadata?.labels, {
      'batch.kubernetes.io/controller-uid': uid, 'batch.kubernetes.io/job-name': 'five', 'controller-uid': uid, 'job-name': 'five',
    });
    assert.equal(created.spec?.backoffLimit, 6);
    assert.equal(created.spec?.completionMode, 'NonIndexed');
    assert.equal(created.metadata.labels?.['batch.kubernetes.io/job-name'], 'five');
    let maxActive = 0;
    for (let done = 0; done < 5; ) {
      const running = await pollUntil('an active pod', async () => {
        const a = active(await podsOf(c.admin, 'five'));
        return a.length ? a : undefined;
      }, { timeoutMs: 8000, intervalMs: 25 });
      maxActive = Math.max(maxActive, running.length);
      const p = running[0]!;
      assert.deepEqual(p.metadata.finalizers, ['batch.kubernetes.io/job-tracking']);
      assert.deepEqual(p.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.controller]), [['Job', 'five', true]]);
      await finish(c.admin, p, 0);
      done++;
      await pollUntil(`${done} succeeded`, async () => ((await jobs.get('five')).status?.succeeded === done ? true : undefined), { timeoutMs: 8000, intervalMs: 25 });
    }
    assert.ok(maxActive <= 2, `at most parallelism pods run at once, saw ${maxActive}`);
    const complete = await pollUntil('Complete', async () => {
      const j = await jobs.get('five');
      return cond(j, 'Complete')[0] === 'True' ? j : undefined;
    }, { timeoutMs: 8000, intervalMs: 25 });
    assert.deepEqual(cond(complete, 'SuccessCriteriaMet'), ['True', 'CompletionsReached']);
    assert.deepEqual(cond(complete, 'Complete'), ['True', 'CompletionsReached']);
    assert.ok(complete.status?.completionTime && complete.status.startTime);
    assert.equal(complete.status?.active, 0);
    assert.deepEqual(complete.status?.uncountedTerminatedPods, {});
    for (const p of await podsOf(c.admin, 'five')) assert.deepEqual(p.metadata.finalizers ?? [], [], 'finalizers removed once counted');
  });

  it('backoffLimit 1: the replacement waits out the 10 s backoff; the second failure fails the Job (BackoffLimitExceeded)', async () => {
    const jobs = c.admin.resource(JOBS, 'default');
    await jobs.create(job('fails', { backoffLimit: 1 }, ['false']));
    const first = await pollUntil('first pod', async () => active(await podsOf(c.admin, 'fails'))[0], { timeoutMs: 8000, intervalMs: 25 });
    await finish(c.admin, first, 1, new Date(clock.now()));
    await pollUntil('failed 1', async () => ((await jobs.get('fails')).status?.failed === 1 ? true : undefined), { timeoutMs: 8000, intervalMs: 25 });
    await quiesce(cm, c.admin);
    assert.equal(active(await podsOf(c.admin, 'fails')).length, 0, 'no replacement inside the backoff');
    clock.jump(10_000);
    const second = await pollUntil('replacement after the backoff', async () => active(await podsOf(c.admin, 'fails'))[0], { timeoutMs: 8000, intervalMs: 25 });
    await finish(c.admin, second, 1, new Date(clock.now()));
    const failed = await pollUntil('Failed', async () => {
      const j = await jobs.get('fails');
      return cond(j, 'Failed')[0] === 'True' ? j : undefined;
    }, { timeoutMs: 8000, intervalMs: 25 });
    assert.deepEqual(cond(failed, 'FailureTarget'), ['True', 'BackoffLimitExceeded']);
    assert.deepEqual(cond(failed, 'Failed'), ['True', 'BackoffLimitExceeded']);
    assert.equal(failed.status?.conditions?.find((x) => x.type === 'Failed')?.message, 'Job has reached the specified backoff limit');
    assert.equal(failed.status?.failed, 2);
    assert.equal(failed.status?.completionTime, undefined);
  });

  it('Indexed: each pod gets its index (annotation, label, env, hostname); completedIndexes in interval form', async () => {
    const jobs = c.admin.resource(JOBS, 'default');
    await jobs.create(job('idx', { completions: 3, parallelism: 3, completionMode: 'Indexed' }));
    const pods = await pollUntil('3 pods', async () => {
      const a = active(await podsOf(c.admin, 'idx'));
      return a.length === 3 ? a : undefined;
    }, { timeoutMs: 8000, intervalMs: 25 });
    const byIndex = new Map(pods.map((p) => [p.metadata.annotations?.['batch.kubernetes.io/job-completion-index'], p]));
    assert.deepEqual([...byIndex.keys()].sort(), ['0', '1', '2']);
    const p1 = byIndex.get('1')!;
    assert.match(p1.metadata.name!, /^idx-1-[a-z0-9]{5}$/);
    assert.equal(p1.metadata.labels?.['batch.kubernetes.io/job-completion-index'], '1');
    assert.equal(p1.spec?.hostname, 'idx-1');
    const env = p1.spec?.containers[0]?.env?.find((e) => e.name === 'JOB_COMPLETION_INDEX');
    assert.equal(env?.valueFrom?.fieldRef?.fieldPath, "metadata.annotations['batch.kubernetes.io/job-completion-index']");
    await finish(c.admin, byIndex.get('0')!, 0);
    await finish(c.admin, byIndex.get('2')!, 0);
    const partial = await pollUntil('0,2 done', async () => {
      const j = await jobs.get('idx');
      return j.status?.completedIndexes === '0,2' && j.status.succeeded === 2 ? j : undefined;
    }, { timeoutMs: 8000, intervalMs: 25 });
    assert.equal(partial.status?.active, 1);
    await finish(c.admin, p1, 0);
    const done = await pollUntil('Complete', async () => {
      const j = await jobs.get('idx');
      return cond(j, 'Complete')[0] === 'True' ? j : undefined;
    }, { timeoutMs: 8000, intervalMs: 25 });
    assert.equal(done.status?.completedIndexes, '0-2');
  });

  it('podFailurePolicy: Ignore does not count a failure, FailJob fails the Job at once', async () => {
    const jobs = c.admin.resource(JOBS, 'default');
    await jobs.create(job('policy', {
      backoffLimit: 6,
      podFailurePolicy: { rules: [{ action: 'Ignore', onExitCodes: { operator: 'In', values: [3] } }, { action: 'FailJob', onExitCodes: { containerName: 'main', operator: 'In', values: [42] } }] },
    }, ['false']));
    const first = await pollUntil('pod', async () => active(await podsOf(c.admin, 'policy'))[0], { timeoutMs: 8000, intervalMs: 25 });
    await finish(c.admin, first, 3, new Date(clock.now()));
    const second = await pollUntil('replacement without backoff', async () => active(await podsOf(c.admin, 'policy')).find((p) => p.metadata.uid !== first.metadata.uid), { timeoutMs: 8000, intervalMs: 25 });
    assert.equal((await jobs.get('policy')).status?.failed ?? 0, 0);
    await finish(c.admin, second, 42, new Date(clock.now()));
    const failed = await pollUntil('Failed', async () => {
      const j = await jobs.get('policy');
      return cond(j, 'Failed')[0] === 'True' ? j : undefined;
    }, { timeoutMs: 8000, intervalMs: 25 });
    assert.deepEqual(cond(failed, 'Failed'), ['True', 'PodFailurePolicy']);
    assert.equal(failed.status?.conditions?.find((x) => x.type === 'Failed')?.message, `Container main for pod default/${second.metadata.name} failed with exit code 42 matching FailJob rule at index 1`);
  });

  it('activeDeadlineSeconds: running pods are removed and the Job fails with DeadlineExceeded', async () => {
    const jobs = c.admin.resource(JOBS, 'default');
    await jobs.create(job('deadline', { activeDeadlineSeconds: 30, parallelism: 2, completions: 4 }, ['sleep', '3600']));
    await pollUntil('2 pods', async () => (active(await podsOf(c.admin, 'deadline')).length === 2 ? true : undefined), { timeoutMs: 8000, intervalMs: 25 });
    clock.jump(31_000);
    const failed = await pollUntil('Failed', async () => {
      const j = await jobs.get('deadline');
      return cond(j, 'Failed')[0] === 'True' ? j : undefined;
    }, { timeoutMs: 8000, intervalMs: 25 });
    assert.deepEqual(cond(failed, 'Failed'), ['True', 'DeadlineExceeded']);
    assert.equal(failed.status?.conditions?.find((x) => x.type === 'Failed')?.message, 'Job was active longer than specified deadline');
    assert.equal(active(await podsOf(c.admin, 'deadline')).length, 0);
  });

  it('suspend: no pods and Suspended=True; resuming starts them and flips the condition to JobResumed', async () => {
    const jobs = c.admin.resource(JOBS, 'default');
    await jobs.create(job('later', { suspend: true }));
    const suspended = await pollUntil('Suspended', async () => {
      const j = await jobs.get('later');
      return cond(j, 'Suspended')[0] === 'True' ? j : undefined;
    }, { timeoutMs: 8000, intervalMs: 25 });
    assert.deepEqual(cond(suspended, 'Suspended'), ['True', 'JobSuspended']);
    assert.equal(suspended.status?.startTime, undefined);
    assert.equal((await podsOf(c.admin, 'later')).length, 0);
    await jobs.patch('later', { spec: { suspend: false } }, { type: 'merge' });
    await pollUntil('a pod', async () => active(await podsOf(c.admin, 'later'))[0], { timeoutMs: 8000, intervalMs: 25 });
    // The pods are created before the status write that flips the condition (two writes, as upstream):
    // the condition is awaited, not read the moment the first pod shows.
    const resumed = await pollUntil('JobResumed', async () => {
      const j = await jobs.get('later');
      return cond(j, 'Suspended')[0] === 'False' ? j : undefined;
    }, { timeoutMs: 8000, intervalMs: 25 });
    assert.deepEqual(cond(resumed, 'Suspended'), ['False', 'JobResumed']);
    assert.ok(resumed.status?.startTime);
  });

  it('ttlSecondsAfterFinished: a finished Job and its pods are deleted once the TTL passes', async () => {
    const jobs = c.admin.resource(JOBS, 'default');
    await jobs.create(job('short-lived', { ttlSecondsAfterFinished: 60 }));
    const p = await pollUntil('pod', async () => active(await podsOf(c.admin, 'short-lived'))[0], { timeoutMs: 8000, intervalMs: 25 });
    await finish(c.admin, p, 0);
    await pollUntil('Complete', async () => (cond(await jobs.get('short-lived'), 'Complete')[0] === 'True' ? true : undefined), { timeoutMs: 8000, intervalMs: 25 });
    clock.jump(61_000);
    await pollUntil('job deleted', async () => ((await jobs.list()).items.some((j) => j.metadata.name === 'short-lived') ? undefined : true), { timeoutMs: 8000, intervalMs: 25 });
    await pollUntil('pods deleted', async () => ((await podsOf(c.admin, 'short-lived')).length === 0 ? true : undefined), { timeoutMs: 8000, intervalMs: 25 });
  });
});
