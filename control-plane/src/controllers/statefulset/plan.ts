/**
 * The pure half of the StatefulSet controller (upstream stateful_set_control.go): the next
 * actions for the pods by ordinal. With OrderedReady (`monotonic`) it returns at most one action
 * and waits whenever a pod is not yet Running and Ready:
 *
 *   failed pod ─▶ delete (recreated next round)
 *   ordinal 0…replicas−1 missing ─▶ create, lowest first; a pod not Running+Ready ─▶ wait
 *   ordinal ≥ replicas ─▶ delete, highest first, only while all others are healthy
 *   RollingUpdate ─▶ highest ordinal ≥ partition not at the update revision ─▶ delete (recreated
 *                    at the update revision); wait until it is healthy before the next
 *
 * Parallel does every create and delete at once and never waits.
 */
import type { Pod, StatefulSet, StatefulSetStatus } from '@nodelet/api';
import { isPodAvailable, isPodReady } from '../util/pods.js';
import { CONTROLLER_REVISION_HASH_LABEL } from '../util/history.js';

export type StatefulAction =
  | { kind: 'create'; ordinal: number; revision: 'current' | 'update' }
  | { kind: 'delete'; pod: Pod; why: 'failed' | 'condemned' | 'update' };

export const revisionOf = (p: Pod): string | undefined => p.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL];
const terminating = (p: Pod): boolean => !!p.metadata.deletionTimestamp;
export const runningAndReady = (p: Pod): boolean => p.status?.phase === 'Running' && isPodReady(p);

export interface PlanInput {
  set: StatefulSet;
  /** Pods by ordinal (in range or not). */
  pods: ReadonlyMap<number, Pod>;
  currentRevision: string;
  updateRevision: string;
}

export function planStatefulSet({ set, pods, updateRevision }: PlanInput): StatefulAction[] {
  const monotonic = set.spec?.podManagementPolicy !== 'Parallel';
  const start = set.spec?.ordinals?.start ?? 0;
  const replicas = set.spec?.replicas ?? 1;
  const end = start + replicas;
  const rolling = set.spec?.updateStrategy?.type !== 'OnDelete';
  const partition = set.spec?.updateStrategy?.rollingUpdate?.partition ?? 0;
  const out: StatefulAction[] = [];
  const done = (): boolean => monotonic && out.length > 0;

  // 1. Failed pods are replaced.
  for (let o = start; o < end; o++) {
    const p = pods.get(o);
    if (p && !terminating(p) && p.status?.phase === 'Failed') {
      out.push({ kind: 'delete', pod: p, why: 'failed' });
      if (done()) return out;
    }
  }
  if (out.length) return out;
  // 2. Missing ordinals, in order; OrderedReady waits for each to be Running and Ready.
  for (let o = start; o < end; o++) {
    const p = pods.get(o);
    if (!p) {
      out.push({ kind: 'create', ordinal: o, revision: rolling && o < start + partition ? 'current' : 'update' });
      if (done()) return out;
      continue;
    }
    if (monotonic && (terminating(p) || !runningAndReady(p))) return out;
  }
  if (monotonic && out.length) return out;
  // 3. Ordinals beyond replicas go, highest first.
  const condemned = [...pods.entries()].filter(([o]) => o < start || o >= end).sort((a, b) => b[0] - a[0]).map(([, p]) => p);
  for (const p of condemned) {
    if (terminating(p)) {
      if (monotonic) return out;
      continue;
    }
    if (monotonic && [...pods.values()].some((x) => x !== p && !condemned.includes(x) && !runningAndReady(x))) return out;
    out.push({ kind: 'delete', pod: p, why: 'condemned' });
    if (done()) return out;
  }
  if (monotonic && out.length) return out;
  // 4. RollingUpdate: from the highest ordinal down to the partition, one pod at a time.
  if (!rolling) return out;
  for (let o = end - 1; o >= start + partition; o--) {
    const p = pods.get(o);
    if (!p) return out;
    if (revisionOf(p) !== updateRevision && !terminating(p)) {
      out.push({ kind: 'delete', pod: p, why: 'update' });
      return out;
    }
    if (!runningAndReady(p)) return out;
  }
  return out;
}

/** Status from the pods (upstream computeReplicaStatus + completeRollingUpdate). */
export function statefulSetStatus(set: StatefulSet, pods: readonly Pod[], currentRevision: string, updateRevision: string, nowMs: number): StatefulSetStatus {
  const live = pods.filter((p) => !terminating(p));
  const ready = live.filter(runningAndReady);
  const status: StatefulSetStatus = {
    observedGeneration: set.metadata.generation,
    replicas: live.length,
    readyReplicas: ready.length,
    currentReplicas: live.filter((p) => revisionOf(p) === currentRevision).length,
    updatedReplicas: live.filter((p) => revisionOf(p) === updateRevision).length,
    currentRevision,
    updateRevision,
    collisionCount: set.status?.collisionCount ?? 0,
    availableReplicas: ready.filter((p) => isPodAvailable(p, set.spec?.minReadySeconds ?? 0, nowMs)).length,
  };
  if (set.spec?.updateStrategy?.type !== 'OnDelete' && status.updatedReplicas === status.replicas && status.readyReplicas === status.replicas && status.replicas === (set.spec?.replicas ?? 1)) {
    status.currentReplicas = status.updatedReplicas;
    status.currentRevision = updateRevision;
  }
  return status;
}
