/**
 * Finished-pod accounting of the Job controller (upstream trackJobStatusAndRemoveFinalizers),
 * pure: which pods with the `batch.kubernetes.io/job-tracking` finalizer have finished, how each
 * counts (succeeded, failed, ignored by the pod failure policy), and the status after counting.
 *
 *   pod finished ─▶ uid in status.uncountedTerminatedPods ─▶ finalizer removed ─▶ counted in
 *                   (status write 1)                          (pod patch)          succeeded/failed
 *                                                                                  (status write 2)
 *
 * A crash between the steps repeats the later ones and never counts a pod twice: a uid is counted
 * in the same write that removes it from the uncounted list.
 */
import type { Job, JobStatus, Pod } from '@nodelet/api';
import { formatIndexes, parseIndexes, podCompletionIndex } from './indexes.js';
import { isPodFailed, isSuspended, JOB_TRACKING_FINALIZER, matchPodFailurePolicy, podFinishedAtMs } from './policy.js';

export const hasTrackingFinalizer = (p: Pod): boolean => (p.metadata.finalizers ?? []).includes(JOB_TRACKING_FINALIZER);

export interface TrackResult {
  /** Status with the newly finished pods in uncountedTerminatedPods (and, for Indexed Jobs, completedIndexes). */
  pending: JobStatus;
  /** Whether `pending` differs from the stored status (write it before removing finalizers). */
  pendingChanged: boolean;
  /** Pods whose finalizer can go once `pending` is stored. */
  release: Pod[];
  /** Newly finished pods for the backoff record (ignored failures excluded). */
  finished: Array<{ failed: boolean; atMs: number }>;
  /** Set when a failure matched a FailJob rule. */
  failJobMessage?: string;
}

export function trackFinishedPods(job: Job, pods: readonly Pod[], nowMs: number): TrackResult {
  const status: JobStatus = structuredClone(job.status ?? {});
  const uncounted = { succeeded: [...(status.uncountedTerminatedPods?.succeeded ?? [])], failed: [...(status.uncountedTerminatedPods?.failed ?? [])] };
  const known = new Set([...uncounted.succeeded, ...uncounted.failed]);
  const indexed = job.spec?.completionMode === 'Indexed';
  const completions = job.spec?.completions ?? 0;
  const completed = indexed ? parseIndexes(status.completedIndexes, completions) : new Set<number>();
  const release: Pod[] = [];
  const finished: TrackResult['finished'] = [];
  let failJobMessage: string | undefined;
  let changed = false;
  for (const p of pods) {
    if (!hasTrackingFinalizer(p)) continue;
    const uid = p.metadata.uid ?? '';
    if (known.has(uid)) {
      release.push(p);
      continue;
    }
    if (p.status?.phase === 'Succeeded') {
      uncounted.succeeded.push(uid);
      const i = podCompletionIndex(p);
      if (indexed && i !== undefined && i < completions) completed.add(i);
      finished.push({ failed: false, atMs: podFinishedAtMs(p, nowMs) });
    } else if (isPodFailed(p, job)) {
      // Pods removed because the Job was suspended are not failures.
      if (isSuspended(job) && p.status?.phase !== 'Failed') {
        release.push(p);
        continue;
      }
      const match = p.status?.phase === 'Failed' ? matchPodFailurePolicy(job, p) : undefined;
      if (match?.action === 'Ignore') {
        release.push(p);
        continue;
      }
      if (match?.action === 'FailJob') failJobMessage ??= match.message;
      uncounted.failed.push(uid);
      finished.push({ failed: true, atMs: podFinishedAtMs(p, nowMs) });
    } else {
      continue;
    }
    changed = true;
    release.push(p);
  }
  status.uncountedTerminatedPods = uncounted;
  if (indexed) {
    const formatted = formatIndexes(completed);
    if (formatted !== (status.completedIndexes ?? '')) changed = true;
    status.completedIndexes = formatted;
  }
  return { pending: status, pendingChanged: changed, release, finished, failJobMessage };
}

/** Moves the uncounted uids into the counters (step 3): the status to write after the finalizers are gone. */
export function countUncounted(job: Job, status: JobStatus): JobStatus {
  const out = structuredClone(status);
  const u = out.uncountedTerminatedPods ?? {};
  if (job.spec?.completionMode === 'Indexed') {
    out.succeeded = parseIndexes(out.completedIndexes, job.spec.completions ?? 0).size;
  } else {
    out.succeeded = (out.succeeded ?? 0) + (u.succeeded?.length ?? 0);
  }
  out.failed = (out.failed ?? 0) + (u.failed?.length ?? 0);
  out.uncountedTerminatedPods = {};
  return out;
}
