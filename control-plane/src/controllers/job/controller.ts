/**
 * Job controller (upstream pkg/controller/job): runs a Job's pods to completion.
 *
 *   sync(job) ─▶ claim pods ─▶ count finished pods (track.ts: uncounted → finalizer off → counted)
 *            ─▶ suspend / start time ─▶ failure or success criteria (backoffLimit, activeDeadlineSeconds,
 *               podFailurePolicy, completions) ─▶ FailureTarget / SuccessCriteriaMet, active pods deleted
 *            ─▶ once no pod is left terminating: Failed / Complete (+ completionTime)
 *            ─▶ otherwise create or delete pods toward min(parallelism, remaining completions),
 *               after the pod-failure backoff (10 s × 2ⁿ, at most 10 min)
 *            ─▶ status (active, ready, terminating, succeeded, failed, completedIndexes)
 *
 * Acts as kube-system/job-controller: pods are created, deleted and patched (finalizers,
 * adoption); the Job is only written through `jobs/status` (update).
 */
import { JOBS, labelSelectorFromObject, matchLabels, PODS, rfc3339, type Job, type JobStatus, type Pod } from '@nodelet/api';
import { hasCode } from '@nodelet/base';
import { ControllerBase, type ControllerDeps } from '../controller-base.js';
import type { ReconcileResult } from '../runtime.js';
import { Expectations } from '../util/expectations.js';
import { controllerRef, isPodReady, ownerKey } from '../util/pods.js';
import { comparePodsForDeletion } from '../replicaset/plan.js';
import { firstPendingIndexes, parseIndexes, podCompletionIndex } from './indexes.js';
import {
  activeDeadlineRemainingMs,
  backoffRemainingMs,
  ensureCondition,
  finishedType,
  hasCondition,
  isPodActive,
  isPodTerminal,
  isSuspended,
  JOB_TRACKING_FINALIZER,
  MAX_POD_CREATE_DELETE_PER_SYNC,
  MESSAGE_BACKOFF_LIMIT,
  MESSAGE_COMPLETIONS,
  MESSAGE_DEADLINE,
  nextBackoffRecord,
  REASON_BACKOFF_LIMIT_EXCEEDED,
  REASON_COMPLETIONS_REACHED,
  REASON_DEADLINE_EXCEEDED,
  REASON_POD_FAILURE_POLICY,
  wantActive,
  type BackoffRecord,
} from './policy.js';
import { podForJob } from './pod-template.js';
import { countUncounted, hasTrackingFinalizer, trackFinishedPods } from './track.js';

const jobKeyOf = (p: Pod): string | undefined => ownerKey(p, 'Job', 'batch');

export class JobController extends ControllerBase {
  readonly #jobs;
  readonly #pods;
  readonly #expect: Expectations;
  /** Per Job key: consecutive failures since the last success (in memory, as upstream's backoff store). */
  readonly #backoff = new Map<string, BackoffRecord>();

  constructor(d: ControllerDeps) {
    super(d, { name: 'job', workers: 4, eventComponent: 'job-controller' });
    this.#expect = new Expectations(d.clock);
    this.#jobs = this.watch(JOBS);
    this.#pods = this.watchOwnedPods(jobKeyOf, this.#expect);
  }

  async reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    const job = this.#jobs.get(key);
    if (!job) {
      this.#backoff.delete(key);
      this.#expect.forget(key);
      await this.#releaseOrphans(key, signal);
      return;
    }
    const pods = this.#ownedPods(job);
    if (finishedType(job)) {
      // Counted long ago; a pod still carrying the finalizer (restored from a backup) is let go.
      await this.#removeFinalizers(job, pods.filter(hasTrackingFinalizer), signal);
      this.#backoff.delete(key);
      return;
    }
    const now = this.clock.now();
    const jobs = this.client.resource(JOBS, job.metadata.namespace);
    let current = job;

    // 1. Finished pods: record them as uncounted, remove their finalizers, then count them.
    const tracked = trackFinishedPods(job, pods, now);
    if (tracked.pendingChanged) current = await jobs.updateStatus({ ...current, status: tracked.pending }, { signal });
    await this.#removeFinalizers(job, tracked.release, signal);
    if (tracked.finished.length) this.#backoff.set(key, nextBackoffRecord(this.#backoff.get(key), tracked.finished));
    const status: JobStatus = countUncounted(job, tracked.pending);
    const conditions = [...(status.conditions ?? [])];

    // 2. Suspension and the start time (resuming restarts the activeDeadlineSeconds clock).
    if (isSuspended(job)) {
      if (ensureCondition(conditions, 'Suspended', 'True', 'JobSuspended', 'Job suspended', now)) void this.event(job, 'Normal', 'Suspended', 'Job suspended');
    } else {
      if (ensureCondition(conditions, 'Suspended', 'False', 'JobResumed', 'Job resumed', now)) {
        void this.event(job, 'Normal', 'Resumed', 'Job resumed');
        status.startTime = rfc3339(now);
      }
      status.startTime ??= rfc3339(now);
    }
    const withStatus: Job = { ...job, status: { ...status, conditions } };

    // 3. Failure and success criteria: the interim condition first, the terminal one once no pod is left.
    let active = pods.filter(isPodActive);
    const succeeded = status.succeeded ?? 0;
    const failed = status.failed ?? 0;
    const deadlineLeft = activeDeadlineRemainingMs(withStatus, now);
    if (!hasCondition(withStatus, 'FailureTarget') && !hasCondition(withStatus, 'SuccessCriteriaMet')) {
      if (tracked.failJobMessage) ensureCondition(conditions, 'FailureTarget', 'True', REASON_POD_FAILURE_POLICY, tracked.failJobMessage, now);
      else if (failed > (job.spec?.backoffLimit ?? 6)) ensureCondition(conditions, 'FailureTarget', 'True', REASON_BACKOFF_LIMIT_EXCEEDED, MESSAGE_BACKOFF_LIMIT, now);
      else if (deadlineLeft !== undefined && deadlineLeft <= 0) ensureCondition(conditions, 'FailureTarget', 'True', REASON_DEADLINE_EXCEEDED, MESSAGE_DEADLINE, now);
      else if (this.#complete(job, status, active.length)) ensureCondition(conditions, 'SuccessCriteriaMet', 'True', REASON_COMPLETIONS_REACHED, MESSAGE_COMPLETIONS, now);
    }
    const failureTarget = conditions.find((c) => c.type === 'FailureTarget' && c.status === 'True');
    const successMet = conditions.some((c) => c.type === 'SuccessCriteriaMet' && c.status === 'True');
    let requeueAfterMs: number | undefined;
    if (failureTarget || successMet) {
      active = await this.#deletePods(key, job, active, active.length, signal);
      const lingering = this.#ownedPods(job).some((p) => hasTrackingFinalizer(p) || (p.metadata.deletionTimestamp && !isPodTerminal(p)));
      if (!lingering && active.length === 0) {
        if (failureTarget) {
          ensureCondition(conditions, 'Failed', 'True', failureTarget.reason ?? '', failureTarget.message ?? '', now);
          void this.event(job, 'Warning', failureTarget.reason ?? 'Failed', failureTarget.message ?? '');
        } else {
          ensureCondition(conditions, 'Complete', 'True', REASON_COMPLETIONS_REACHED, MESSAGE_COMPLETIONS, now);
          status.completionTime = rfc3339(now);
          void this.event(job, 'Normal', 'Completed', 'Job completed');
        }
      }
    } else if (isSuspended(job)) {
      active = await this.#deletePods(key, job, active, active.length, signal);
    } else if (this.#expect.satisfied(key)) {
      // 4. Toward the wanted number of running pods.
      const r = await this.#managePods(key, job, status, active, now, signal);
      active = r.active;
      requeueAfterMs = r.requeueAfterMs;
    }
    if (deadlineLeft !== undefined && deadlineLeft > 0) requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, deadlineLeft + 1);

    // 5. Status.
    const owned = this.#ownedPods(job);
    const next: JobStatus = {
      ...status,
      conditions: conditions.length ? conditions : undefined,
      active: active.length,
      ready: active.filter(isPodReady).length,
      terminating: owned.filter((p) => p.metadata.deletionTimestamp && !isPodTerminal(p)).length,
      succeeded,
      failed,
    };
    if (JSON.stringify(next) !== JSON.stringify(current.status ?? {})) {
      try {
        await jobs.updateStatus({ ...current, status: next }, { signal });
      } catch (err) {
        if (!hasCode(err, 'ERR_NOT_FOUND')) throw err;
      }
    }
    if (requeueAfterMs !== undefined && Number.isFinite(requeueAfterMs)) return { requeueAfterMs };
  }

  #complete(job: Job, status: JobStatus, active: number): boolean {
    const completions = job.spec?.completions;
    if (job.spec?.completionMode === 'Indexed') return parseIndexes(status.completedIndexes, completions ?? 0).size >= (completions ?? 0);
    if (completions === undefined || completions === null) return (status.succeeded ?? 0) > 0 && active === 0;
    return (status.succeeded ?? 0) >= completions;
  }

  /** Creates or deletes pods toward the wanted count; returns the active pods after it. */
  async #managePods(key: string, job: Job, status: JobStatus, active: Pod[], now: number, signal: AbortSignal): Promise<{ active: Pod[]; requeueAfterMs?: number }> {
    const indexed = job.spec?.completionMode === 'Indexed';
    const completions = job.spec?.completions ?? 0;
    // Indexed: pods without a valid index, or with an index already done or duplicated, go first.
    let surplus: Pod[] = [];
    if (indexed) {
      const done = parseIndexes(status.completedIndexes, completions);
      const seen = new Set<number>();
      for (const p of [...active].sort(comparePodsForDeletion).reverse()) {
        const i = podCompletionIndex(p);
        if (i === undefined || i >= completions || done.has(i) || seen.has(i)) surplus.push(p);
        else seen.add(i);
      }
      if (surplus.length) active = await this.#deletePods(key, job, active, 0, signal, surplus);
      surplus = [];
    }
    const want = wantActive(job, status.succeeded ?? 0, active.length);
    if (active.length > want) return { active: await this.#deletePods(key, job, active, active.length - want, signal) };
    if (active.length === want) return { active };
    const wait = backoffRemainingMs(this.#backoff.get(key), now);
    if (wait > 0) return { active, requeueAfterMs: wait };
    let count = Math.min(want - active.length, MAX_POD_CREATE_DELETE_PER_SYNC);
    let indexes: Array<number | undefined> = Array.from({ length: count }, () => undefined);
    if (indexed) {
      const taken = new Set([...parseIndexes(status.completedIndexes, completions), ...active.map(podCompletionIndex).filter((i): i is number => i !== undefined)]);
      indexes = firstPendingIndexes(taken, count, completions);
      count = indexes.length;
    }
    if (count === 0) return { active };
    this.#expect.expect(key, count, 0);
    const created = await this.#createPods(key, job, indexes, signal);
    return { active: [...active, ...created] };
  }

  /** Slow-start batches (1, 2, 4, …), as upstream, so a failing template fails fast. */
  async #createPods(key: string, job: Job, indexes: Array<number | undefined>, signal: AbortSignal): Promise<Pod[]> {
    const pods = this.client.resource(PODS, job.metadata.namespace);
    return this.createPodsInBatches(job, key, indexes, (i) => pods.create(podForJob(job, i), { signal }), this.#expect);
  }

  /** Deletes `n` of `active` (or exactly `victims`), cheapest first; returns the pods left active. */
  async #deletePods(key: string, job: Job, active: Pod[], n: number, signal: AbortSignal, victims?: Pod[]): Promise<Pod[]> {
    const chosen = victims ?? [...active].sort(comparePodsForDeletion).slice(0, Math.min(n, MAX_POD_CREATE_DELETE_PER_SYNC));
    if (chosen.length === 0) return active;
    this.#expect.expect(key, 0, chosen.length);
    await this.deleteOwnedPods(job, key, chosen, this.#expect, signal);
    const gone = new Set(chosen.map((p) => p.metadata.uid));
    return active.filter((p) => !gone.has(p.metadata.uid));
  }

  /** The Job's pods: controlled by it and still selected (upstream also adopts orphans; Jobs rarely have any). */
  #ownedPods(job: Job): Pod[] {
    const sel = job.spec?.selector;
    return this.#pods
      .list()
      .filter((p) => p.metadata.namespace === job.metadata.namespace && controllerRef(p)?.uid === job.metadata.uid && !!sel && matchLabels(labelSelectorFromObject(sel), p.metadata.labels));
  }

  async #removeFinalizers(job: Job, pods: readonly Pod[], signal: AbortSignal): Promise<void> {
    const client = this.client.resource(PODS, job.metadata.namespace);
    const results = await Promise.allSettled(
      pods
        .filter(hasTrackingFinalizer)
        .map((p) => client.patch(p.metadata.name ?? '', { metadata: { '$deleteFromPrimitiveList/finalizers': [JOB_TRACKING_FINALIZER] } }, { type: 'strategic', signal })),
    );
    const err = results.find((r): r is PromiseRejectedResult => r.status === 'rejected' && !hasCode(r.reason, 'ERR_NOT_FOUND'));
    if (err) throw err.reason;
  }

  /** A deleted Job's pods may still carry the tracking finalizer: remove it once the Job is confirmed gone. */
  async #releaseOrphans(key: string, signal: AbortSignal): Promise<void> {
    const [ns, name] = [key.slice(0, key.indexOf('/')), key.slice(key.indexOf('/') + 1)];
    const orphans = this.#pods.list().filter((p) => p.metadata.namespace === ns && jobKeyOf(p) === key && hasTrackingFinalizer(p));
    if (!orphans.length) return;
    try {
      const live = await this.client.resource(JOBS, ns).get(name, { signal });
      const stillOwned = orphans.filter((p) => controllerRef(p)?.uid === live.metadata.uid);
      if (stillOwned.length === orphans.length) return;
      await this.#removeFinalizers(live, orphans.filter((p) => !stillOwned.includes(p)), signal);
    } catch (err) {
      if (!hasCode(err, 'ERR_NOT_FOUND')) throw err;
      await this.#removeFinalizers({ metadata: { name, namespace: ns } }, orphans, signal);
    }
  }
}
