/**
 * The pure rules of the Job controller (pkg/controller/job): which pods count as failed, the
 * pod failure policy, the pod-failure backoff, deadlines and the status conditions.
 */
import { rfc3339, type ContainerStatus, type Job, type JobCondition, type Pod, type PodFailurePolicyRule } from '@nodelet/api';

export const JOB_TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking';
/** Upstream DefaultJobPodFailureBackOff and MaxJobPodFailureBackOff. */
export const DEFAULT_POD_FAILURE_BACKOFF_MS = 10_000;
export const MAX_POD_FAILURE_BACKOFF_MS = 10 * 60_000;
/** Upstream MaxPodCreateDeletePerSync. */
export const MAX_POD_CREATE_DELETE_PER_SYNC = 500;

export const REASON_BACKOFF_LIMIT_EXCEEDED = 'BackoffLimitExceeded';
export const REASON_DEADLINE_EXCEEDED = 'DeadlineExceeded';
export const REASON_POD_FAILURE_POLICY = 'PodFailurePolicy';
export const REASON_COMPLETIONS_REACHED = 'CompletionsReached';
export const MESSAGE_BACKOFF_LIMIT = 'Job has reached the specified backoff limit';
export const MESSAGE_DEADLINE = 'Job was active longer than specified deadline';
export const MESSAGE_COMPLETIONS = 'Reached expected number of succeeded pods';

export function hasCondition(job: Job, type: string): boolean {
  return (job.status?.conditions ?? []).some((c) => c.type === type && c.status === 'True');
}

/** Complete or Failed: the Job is done and the controller leaves it alone. */
export function finishedType(job: Job): 'Complete' | 'Failed' | undefined {
  if (hasCondition(job, 'Complete')) return 'Complete';
  if (hasCondition(job, 'Failed')) return 'Failed';
  return undefined;
}

export const isSuspended = (job: Job): boolean => job.spec?.suspend === true;
const onlyReplaceFailedPods = (job: Job): boolean => job.spec?.podReplacementPolicy === 'Failed' || !!job.spec?.podFailurePolicy;

/**
 * Upstream isPodFailed: phase Failed; or, unless only failed pods are replaced, a pod deleted
 * before it succeeded (an orphan that never reaches Failed still counts).
 */
export function isPodFailed(p: Pod, job: Job): boolean {
  if (p.status?.phase === 'Failed') return true;
  if (onlyReplaceFailedPods(job)) return false;
  return !!p.metadata.deletionTimestamp && p.status?.phase !== 'Succeeded';
}

export const isPodTerminal = (p: Pod): boolean => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';
export const isPodActive = (p: Pod): boolean => !isPodTerminal(p) && !p.metadata.deletionTimestamp;

export interface FailurePolicyMatch {
  action: PodFailurePolicyRule['action'];
  /** For FailJob: the condition message upstream writes. */
  message?: string;
}

function matchingContainer(statuses: ContainerStatus[] | undefined, rule: NonNullable<PodFailurePolicyRule['onExitCodes']>): ContainerStatus | undefined {
  for (const cs of statuses ?? []) {
    const t = cs.state?.terminated;
    if (!t || t.exitCode === 0) continue;
    if (rule.containerName && rule.containerName !== cs.name) continue;
    const inValues = rule.values.includes(t.exitCode);
    if (rule.operator === 'In' ? inValues : !inValues) return cs;
  }
  return undefined;
}

/** The first rule of the Job's podFailurePolicy a failed pod matches (upstream matchPodFailurePolicy). */
export function matchPodFailurePolicy(job: Job, p: Pod): FailurePolicyMatch | undefined {
  const rules = job.spec?.podFailurePolicy?.rules ?? [];
  for (const [i, rule] of rules.entries()) {
    if (rule.onExitCodes) {
      const cs = matchingContainer(p.status?.containerStatuses, rule.onExitCodes) ?? matchingContainer(p.status?.initContainerStatuses, rule.onExitCodes);
      if (!cs) continue;
      const message = rule.action === 'FailJob'
        ? `Container ${cs.name} for pod ${p.metadata.namespace}/${p.metadata.name} failed with exit code ${cs.state!.terminated!.exitCode} matching ${rule.action} rule at index ${i}`
        : undefined;
      return { action: rule.action, message };
    }
    for (const pattern of rule.onPodConditions ?? []) {
      const c = (p.status?.conditions ?? []).find((x) => x.type === pattern.type && x.status === (pattern.status || 'True'));
      if (!c) continue;
      const message = rule.action === 'FailJob' ? `Pod ${p.metadata.namespace}/${p.metadata.name} has condition ${c.type} matching ${rule.action} rule at index ${i}` : undefined;
      return { action: rule.action, message };
    }
  }
  return undefined;
}

/** When the pod finished: its last container's finishedAt, else its deletion time, else `nowMs`. */
export function podFinishedAtMs(p: Pod, nowMs: number): number {
  let latest = 0;
  for (const cs of [...(p.status?.containerStatuses ?? []), ...(p.status?.initContainerStatuses ?? [])]) {
    const t = Date.parse(cs.state?.terminated?.finishedAt ?? '');
    if (Number.isFinite(t)) latest = Math.max(latest, t);
  }
  if (latest) return latest;
  const del = Date.parse(p.metadata.deletionTimestamp ?? '');
  return Number.isFinite(del) ? del : nowMs;
}

export interface BackoffRecord {
  failuresAfterLastSuccess: number;
  lastFailureMs?: number;
}

/** 10 s × 2^(n−1), at most 10 min, since the last failure (upstream getRemainingTimeForFailuresCount). */
export function backoffRemainingMs(r: BackoffRecord | undefined, nowMs: number): number {
  if (!r || r.failuresAfterLastSuccess === 0 || r.lastFailureMs === undefined) return 0;
  let d = DEFAULT_POD_FAILURE_BACKOFF_MS;
  for (let i = 1; i < r.failuresAfterLastSuccess; i++) {
    d *= 2;
    if (d >= MAX_POD_FAILURE_BACKOFF_MS) {
      d = MAX_POD_FAILURE_BACKOFF_MS;
      break;
    }
  }
  const elapsed = nowMs - r.lastFailureMs;
  return d < elapsed ? 0 : d - elapsed;
}

/** The record after pods finished: a success resets it, each failure counts (in finish order). */
export function nextBackoffRecord(prev: BackoffRecord | undefined, finished: ReadonlyArray<{ failed: boolean; atMs: number }>): BackoffRecord {
  let r: BackoffRecord = prev ? { ...prev } : { failuresAfterLastSuccess: 0 };
  for (const f of [...finished].sort((a, b) => a.atMs - b.atMs)) {
    if (f.failed) r = { failuresAfterLastSuccess: r.failuresAfterLastSuccess + 1, lastFailureMs: Math.max(f.atMs, r.lastFailureMs ?? 0) };
    else r = { failuresAfterLastSuccess: 0 };
  }
  return r;
}

/** Milliseconds of activeDeadlineSeconds left (≤ 0: past it); undefined when no deadline applies. */
export function activeDeadlineRemainingMs(job: Job, nowMs: number): number | undefined {
  const ads = job.spec?.activeDeadlineSeconds;
  const start = Date.parse(job.status?.startTime ?? '');
  if (ads === undefined || !Number.isFinite(start) || isSuspended(job)) return undefined;
  return start + ads * 1000 - nowMs;
}


/**
 * Upstream ensureJobConditionStatus: sets `type` to `status` (a False condition is only written
 * over an existing one); lastTransitionTime moves only when the status changes. Returns whether
 * anything changed.
 */
export function ensureCondition(conditions: JobCondition[], type: string, status: 'True' | 'False', reason: string, message: string, nowMs: number): boolean {
  const i = conditions.findIndex((c) => c.type === type);
  const now = rfc3339(nowMs);
  if (i < 0) {
    if (status === 'False') return false;
    conditions.push({ type, status, lastProbeTime: now, lastTransitionTime: now, reason, message });
    return true;
  }
  const c = conditions[i]!;
  if (c.status === status && c.reason === reason && c.message === message) return false;
  conditions[i] = { type, status, lastProbeTime: now, lastTransitionTime: c.status === status ? c.lastTransitionTime : now, reason, message };
  return true;
}

/** How many pods should be running now (upstream manageJob's wantActive). */
export function wantActive(job: Job, succeeded: number, active: number): number {
  const parallelism = job.spec?.parallelism ?? 1;
  const completions = job.spec?.completions;
  if (completions === undefined || completions === null) return succeeded > 0 ? active : parallelism;
  return Math.max(0, Math.min(completions - succeeded, parallelism));
}
