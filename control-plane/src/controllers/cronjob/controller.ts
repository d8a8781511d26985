/**
 * CronJob controller (upstream cronjob_controllerv2): creates a Job for each activation of the
 * schedule, named `<cronjob>-<scheduled time in minutes since the epoch>` so a retry can never
 * create it twice, and keeps the history.
 *
 *   sync ─▶ delete finished Jobs beyond successfulJobsHistoryLimit / failedJobsHistoryLimit (oldest first)
 *        ─▶ reconcile status.active with the Jobs it owns (SawCompletedJob, MissingJob, UnexpectedJob)
 *        ─▶ suspended? stop ─▶ most recent missed activation (TooManyMissedTimes past 100)
 *        ─▶ too late (startingDeadlineSeconds)? MissSchedule ─▶ Forbid with an active Job? JobAlreadyActive
 *        ─▶ Replace: delete the active Jobs ─▶ create the Job ─▶ status (active, lastScheduleTime)
 *        ─▶ requeue at the next activation + 100 ms
 *
 * Time comes from the injected Clock. Acts as kube-system/cronjob-controller: Jobs are created and
 * deleted, the CronJob written only through `cronjobs/status` (update).
 */
import { CRONJOBS, JOBS, rfc3339, type CronJob, type CronJobStatus, type Job } from '@nodelet/api';
import { hasCode } from '@nodelet/base';
import { mostRecentScheduleTime, nextScheduleDelayMs, parseCronSchedule, type CronSchedule } from '../../cron/schedule.js';
import { ControllerBase, type ControllerDeps } from '../controller-base.js';
import type { ReconcileResult } from '../runtime.js';
import { controllerRef, keyOf, newControllerRef, ownerKey } from '../util/pods.js';

export const SCHEDULED_TIMESTAMP_ANNOTATION = 'batch.kubernetes.io/cronjob-scheduled-timestamp';

const finishedType = (j: Job): 'Complete' | 'Failed' | undefined =>
  (j.status?.conditions ?? []).find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True')?.type as 'Complete' | 'Failed' | undefined;

/** `scheduledMs` as RFC 3339 in `zone` (the scheduled-timestamp annotation carries the zone's offset). */
export function formatInZone(scheduledMs: number, zone: string | undefined): string {
  const tz = zone ?? 'UTC';
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'longOffset' })
      .formatToParts(new Date(scheduledMs))
      .map((p) => [p.type, p.value]),
  );
  const offset = String(parts.timeZoneName ?? 'GMT').replace(/^GMT$/, 'Z').replace(/^GMT/, '');
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}${offset}`;
}

/** The Job for one activation (upstream getJobFromTemplate2). */
export function jobForSchedule(cj: CronJob, scheduledMs: number, schedule: CronSchedule): Job {
  const t = cj.spec!.jobTemplate;
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: `${cj.metadata.name}-${Math.floor(scheduledMs / 60_000)}`,
      namespace: cj.metadata.namespace,
      labels: { ...(t.metadata?.labels ?? {}) },
      annotations: { ...(t.metadata?.annotations ?? {}), [SCHEDULED_TIMESTAMP_ANNOTATION]: formatInZone(scheduledMs, schedule.timeZone) },
      ownerReferences: [newControllerRef(cj, 'batch/v1', 'CronJob')],
    },
    spec: structuredClone(t.spec!),
  };
}

export class CronJobController extends ControllerBase {
  readonly #cronjobs;
  readonly #jobs;

  constructor(d: ControllerDeps) {
    super(d, { name: 'cronjob', eventComponent: 'cronjob-controller' });
    this.#cronjobs = this.watch(CRONJOBS, keyOf, ['add', 'update']);
    this.#jobs = this.watch(JOBS, (j) => ownerKey(j, 'CronJob'));
  }

  async reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    let cached = this.#cronjobs.get(key);
    if (!cached) return;
    const ns = cached.metadata.namespace;
    const uid = cached.metadata.uid;
    const jobs = this.#jobs.list().filter((j) => j.metadata.namespace === ns && controllerRef(j)?.uid === uid);
    // A running Job the cached CronJob does not list may be one this controller listed a moment ago,
    // in a status write the CronJob informer has not delivered yet: re-read the CronJob, as upstream
    // does, or Forbid would start a second Job and lastScheduleTime would be stale.
    if (jobs.some((j) => !finishedType(j) && !cached!.status?.active?.some((r) => r.uid === j.metadata.uid))) {
      try {
        cached = await this.client.resource(CRONJOBS, ns).get(cached.metadata.name ?? '', { signal });
      } catch (err) {
        if (hasCode(err, 'ERR_NOT_FOUND')) return;
        throw err;
      }
      if (cached.metadata.uid !== uid) return;
    }
    const cj: CronJob = structuredClone(cached);
    const status: CronJobStatus = (cj.status ??= {});
    const before = JSON.stringify(status);

    // 1. History limits, oldest finished Jobs first.
    const deleted = await this.#cleanupFinished(cj, jobs, signal);
    const live = jobs.filter((j) => !deleted.has(j.metadata.uid ?? ''));

    // 2. status.active against the Jobs we own.
    status.active ??= [];
    for (const j of live) {
      const listed = status.active!.some((r) => r.uid === j.metadata.uid);
      const done = finishedType(j);
      if (!listed && !done) {
        void this.event(cj, 'Warning', 'UnexpectedJob', `Saw a job that the controller did not create or forgot: ${j.metadata.name}`);
      } else if (listed && done) {
        status.active = status.active!.filter((r) => r.uid !== j.metadata.uid);
        void this.event(cj, 'Normal', 'SawCompletedJob', `Saw completed job: ${j.metadata.name}, condition: ${done}`);
      }
      if (done === 'Complete' && j.status?.completionTime && (!status.lastSuccessfulTime || Date.parse(j.status.completionTime) > Date.parse(status.lastSuccessfulTime))) {
        status.lastSuccessfulTime = j.status.completionTime;
      }
    }
    for (const r of [...status.active!]) {
      if (live.some((j) => j.metadata.uid === r.uid)) continue;
      try {
        await this.client.resource(JOBS, ns).get(r.name ?? '', { signal });
      } catch (err) {
        if (!hasCode(err, 'ERR_NOT_FOUND')) throw err;
        void this.event(cj, 'Normal', 'MissingJob', `Active job went missing: ${r.name}`);
        status.active = status.active!.filter((x) => x.uid !== r.uid);
      }
    }

    const requeue = await this.#schedule(cj, status, signal);
    if (status.active?.length === 0) delete status.active;
    if (JSON.stringify(status) !== before) {
      try {
        await this.client.resource(CRONJOBS, ns).updateStatus({ ...cached, status }, { signal });
      } catch (err) {
        if (!hasCode(err, 'ERR_NOT_FOUND')) throw err;
      }
    }
    if (requeue !== undefined) return { requeueAfterMs: Math.max(0, requeue) };
  }

  /** Steps 3–5: maybe create the Job of the most recent activation; returns the delay to the next one. */
  async #schedule(cj: CronJob, status: CronJobStatus, signal: AbortSignal): Promise<number | undefined> {
    if (cj.metadata.deletionTimestamp) return undefined;
    const spec = cj.spec!;
    if (spec.suspend) return undefined;
    let schedule: CronSchedule;
    try {
      schedule = parseCronSchedule(spec.schedule, spec.timeZone);
    } catch (err) {
      if (spec.timeZone !== undefined && /location/.test((err as Error).message)) {
        void this.event(cj, 'Warning', 'UnknownTimeZone', `invalid timeZone: "${spec.timeZone}": ${(err as Error).message}`);
      } else {
        void this.event(cj, 'Warning', 'UnparseableSchedule', `unparseable schedule: "${spec.schedule}" : ${(err as Error).message}`);
      }
      return undefined;
    }
    const now = this.clock.now();
    const times = {
      creationMs: Date.parse(cj.metadata.creationTimestamp ?? '') || now,
      lastScheduleMs: status.lastScheduleTime ? Date.parse(status.lastScheduleTime) : undefined,
      startingDeadlineSeconds: spec.startingDeadlineSeconds,
      nowMs: now,
    };
    const next = (): number | undefined => nextScheduleDelayMs(schedule, { ...times, lastScheduleMs: status.lastScheduleTime ? Date.parse(status.lastScheduleTime) : undefined });
    const recent = mostRecentScheduleTime(schedule, { ...times, includeStartingDeadline: true });
    if (recent.error) {
      void this.event(cj, 'Warning', 'InvalidSchedule', `invalid schedule: ${spec.schedule} : ${recent.error}`);
      return undefined;
    }
    if (recent.missed === 'many') {
      void this.event(cj, 'Warning', 'TooManyMissedTimes', 'too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew');
    }
    const scheduled = recent.mostRecent;
    if (scheduled === undefined) return next();
    if (spec.startingDeadlineSeconds !== undefined && scheduled + spec.startingDeadlineSeconds * 1000 < now) {
      void this.event(cj, 'Warning', 'MissSchedule', `Missed scheduled time to start a job: ${new Date(scheduled).toUTCString().replace('GMT', '+0000')}`);
      return next();
    }
    const jobName = `${cj.metadata.name}-${Math.floor(scheduled / 60_000)}`;
    if (status.active?.some((r) => r.name === jobName) || (status.lastScheduleTime && Date.parse(status.lastScheduleTime) === scheduled)) return next();
    if (spec.concurrencyPolicy === 'Forbid' && (status.active?.length ?? 0) > 0) {
      void this.event(cj, 'Normal', 'JobAlreadyActive', 'Not starting job because prior execution is running and concurrency policy is Forbid');
      return next();
    }
    const jobsClient = this.client.resource(JOBS, cj.metadata.namespace);
    if (spec.concurrencyPolicy === 'Replace') {
      for (const r of [...(status.active ?? [])]) {
        try {
          await jobsClient.delete(r.name ?? '', { signal, propagationPolicy: 'Background' });
          void this.event(cj, 'Normal', 'SuccessfulDelete', `Deleted job ${r.name}`);
        } catch (err) {
          if (!hasCode(err, 'ERR_NOT_FOUND')) throw err;
        }
        status.active = status.active!.filter((x) => x.uid !== r.uid);
      }
    }
    let created: Job;
    try {
      created = await jobsClient.create(jobForSchedule(cj, scheduled, schedule), { signal });
      void this.event(cj, 'Normal', 'SuccessfulCreate', `Created job ${created.metadata.name}`);
    } catch (err) {
      if (!hasCode(err, 'ERR_ALREADY_EXISTS')) {
        void this.event(cj, 'Warning', 'FailedCreate', `Error creating job: ${err instanceof Error ? err.message : String(err)}`);
        throw err;
      }
      // Created before a crash (or by someone else): adopt it into the status only if it is ours.
      created = await jobsClient.get(jobName, { signal });
      if (controllerRef(created)?.uid !== cj.metadata.uid || status.active?.some((r) => r.uid === created.metadata.uid)) return undefined;
    }
    (status.active ??= []).push({ kind: 'Job', namespace: created.metadata.namespace, name: created.metadata.name, uid: created.metadata.uid, apiVersion: 'batch/v1', resourceVersion: created.metadata.resourceVersion });
    status.lastScheduleTime = rfc3339(scheduled);
    return next();
  }

  /** Upstream cleanupFinishedJobs: keep the newest N successful and M failed Jobs (by start time). */
  async #cleanupFinished(cj: CronJob, jobs: Job[], signal: AbortSignal): Promise<Set<string>> {
    const deleted = new Set<string>();
    const byStart = (a: Job, b: Job): number => {
      const sa = a.status?.startTime ? Date.parse(a.status.startTime) : Infinity;
      const sb = b.status?.startTime ? Date.parse(b.status.startTime) : Infinity;
      return sa !== sb ? sa - sb : (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');
    };
    for (const [type, limit] of [['Complete', cj.spec?.successfulJobsHistoryLimit], ['Failed', cj.spec?.failedJobsHistoryLimit]] as const) {
      if (limit === undefined || limit === null) continue;
      const finished = jobs.filter((j) => finishedType(j) === type && !j.metadata.deletionTimestamp).sort(byStart);
      for (const j of finished.slice(0, Math.max(0, finished.length - limit))) {
        try {
          await this.client.resource(JOBS, cj.metadata.namespace).delete(j.metadata.name ?? '', { signal, propagationPolicy: 'Background', preconditions: { uid: j.metadata.uid } });
          void this.event(cj, 'Normal', 'SuccessfulDelete', `Deleted job ${j.metadata.name}`);
        } catch (err) {
          if (!hasCode(err, 'ERR_NOT_FOUND') && !hasCode(err, 'ERR_CONFLICT')) throw err;
        }
        deleted.add(j.metadata.uid ?? '');
        if (cj.status?.active) cj.status.active = cj.status.active.filter((r) => r.uid !== j.metadata.uid);
      }
    }
    return deleted;
  }
}
