/**
 * The pure rollout planner of the Deployment controller (upstream `rolling.go`, `recreate.go`,
 * `sync.go`). One call plans one step, like one pass of upstream's sync: scale the new ReplicaSet up,
 * or else scale old ones down, or else clean up history. The loop re-runs it after every change.
 *
 *   RollingUpdate                          Recreate
 *   ─────────────                          ────────
 *   1. new RS up to desired, but the       1. every old RS to 0
 *      total ≤ desired + maxSurge          2. wait until no old pod is left
 *   2. old RSs down, but available pods    3. new RS to desired
 *      stay ≥ desired − maxUnavailable
 *      (unhealthy old pods go first)
 */
import type { Deployment, ReplicaSet } from '@nodelet/api';
import { byCreation, maxUnavailableOf, resolveFenceposts, revisionOf } from './util.js';

export interface ScaleAction {
  name: string;
  replicas: number;
}

export interface RolloutPlan {
  /** Create the new ReplicaSet with this many replicas (undefined: it exists or must wait). */
  createNew?: number;
  scale: ScaleAction[];
  /** Old ReplicaSets to delete (revision history beyond revisionHistoryLimit). */
  cleanup: string[];
}

const replicasOf = (rs: ReplicaSet): number => rs.spec?.replicas ?? 0;
const availableOf = (rs: ReplicaSet): number => rs.status?.availableReplicas ?? 0;
const sum = (xs: readonly ReplicaSet[], f: (rs: ReplicaSet) => number): number => xs.reduce((n, rs) => n + f(rs), 0);

/** Upstream `NewRSNewReplicas`: how far the new ReplicaSet may grow now. */
export function newRSNewReplicas(d: Deployment, all: readonly ReplicaSet[], newReplicas: number): number {
  const desired = d.spec?.replicas ?? 1;
  if (d.spec?.strategy?.type === 'Recreate') return desired;
  const { maxSurge } = resolveFenceposts(d);
  const current = sum(all, replicasOf);
  const maxTotal = desired + maxSurge;
  if (current >= maxTotal) return newReplicas;
  return newReplicas + Math.min(maxTotal - current, desired - newReplicas);
}

/** Upstream `reconcileOldReplicaSets`: scale-downs keeping `desired - maxUnavailable` available. */
export function planOldScaleDown(d: Deployment, newRS: { replicas: number; available: number }, old: readonly ReplicaSet[]): ScaleAction[] {
  const desired = d.spec?.replicas ?? 1;
  const olds = [...old].sort(byCreation);
  const oldCount = sum(olds, replicasOf);
  if (oldCount === 0) return [];
  let allPods = oldCount + newRS.replicas;
  const minAvailable = desired - maxUnavailableOf(d);
  const newUnavailable = newRS.replicas - newRS.available;
  const maxScaledDown = allPods - minAvailable - newUnavailable;
  if (maxScaledDown <= 0) return [];

  const target = new Map(olds.map((rs) => [rs.metadata.name ?? '', replicasOf(rs)]));
  // 1. Unhealthy old replicas (not available) cost no availability: remove them first.
  let cleaned = 0;
  for (const rs of olds) {
    if (cleaned >= maxScaledDown) break;
    const r = replicasOf(rs);
    if (r === 0 || r <= availableOf(rs)) continue;
    const n = Math.min(maxScaledDown - cleaned, r - availableOf(rs));
    target.set(rs.metadata.name ?? '', r - n);
    cleaned += n;
  }
  allPods -= cleaned;
  // 2. Then available ones, oldest first, down to minAvailable.
  const available = newRS.available + sum(olds, (rs) => Math.min(availableOf(rs), target.get(rs.metadata.name ?? '') ?? 0));
  if (available > minAvailable) {
    const total = available - minAvailable;
    let done = 0;
    for (const rs of olds) {
      if (done >= total) break;
      const r = target.get(rs.metadata.name ?? '') ?? 0;
      if (r === 0) continue;
      const n = Math.min(r, total - done);
      target.set(rs.metadata.name ?? '', r - n);
      done += n;
    }
  }
  return olds.filter((rs) => target.get(rs.metadata.name ?? '') !== replicasOf(rs)).map((rs) => ({ name: rs.metadata.name ?? '', replicas: target.get(rs.metadata.name ?? '') ?? 0 }));
}

/** Old ReplicaSets beyond revisionHistoryLimit (default 10) that have no pods left, lowest revision first. */
export function planCleanup(d: Deployment, old: readonly ReplicaSet[]): string[] {
  const limit = d.spec?.revisionHistoryLimit ?? 10;
  const cleanable = old
    .filter((rs) => replicasOf(rs) === 0 && (rs.status?.replicas ?? 0) === 0 && !rs.metadata.deletionTimestamp)
    .sort((a, b) => revisionOf(a) - revisionOf(b));
  const excess = cleanable.length - limit;
  return excess > 0 ? cleanable.slice(0, excess).map((rs) => rs.metadata.name ?? '') : [];
}

export interface RolloutInput {
  deployment: Deployment;
  newRS: ReplicaSet | undefined;
  oldRSs: readonly ReplicaSet[];
  /** Recreate only: pods of old ReplicaSets still exist (including terminating ones). */
  oldPodsRunning: boolean;
  /** The status the controller would write now (for the completeness check before cleanup). */
  complete: boolean;
}

export function planRollout(input: RolloutInput): RolloutPlan {
  const { deployment: d, newRS, oldRSs } = input;
  const desired = d.spec?.replicas ?? 1;
  const plan: RolloutPlan = { scale: [], cleanup: [] };
  const all = newRS ? [newRS, ...oldRSs] : [...oldRSs];

  if (d.spec?.paused) {
    // A paused Deployment only follows scaling of the current ReplicaSet, never rolls out.
    if (newRS && replicasOf(newRS) !== desired && oldRSs.every((rs) => replicasOf(rs) === 0)) plan.scale.push({ name: newRS.metadata.name ?? '', replicas: desired });
    return plan;
  }

  if (d.spec?.strategy?.type === 'Recreate') {
    const down = oldRSs.filter((rs) => replicasOf(rs) > 0).map((rs) => ({ name: rs.metadata.name ?? '', replicas: 0 }));
    if (down.length) return { ...plan, scale: down };
    if (input.oldPodsRunning) return plan;
    if (!newRS) return { ...plan, createNew: desired };
    if (replicasOf(newRS) !== desired) return { ...plan, scale: [{ name: newRS.metadata.name ?? '', replicas: desired }] };
    if (input.complete) plan.cleanup = planCleanup(d, oldRSs);
    return plan;
  }

  // RollingUpdate.
  if (!newRS) {
    const replicas = newRSNewReplicas(d, all, 0);
    return { ...plan, createNew: replicas, scale: planOldScaleDown(d, { replicas, available: 0 }, oldRSs) };
  }
  const current = replicasOf(newRS);
  if (current > desired) return { ...plan, scale: [{ name: newRS.metadata.name ?? '', replicas: desired }] };
  if (current < desired) {
    const next = newRSNewReplicas(d, all, current);
    if (next !== current) return { ...plan, scale: [{ name: newRS.metadata.name ?? '', replicas: next }] };
  }
  const down = planOldScaleDown(d, { replicas: current, available: availableOf(newRS) }, oldRSs);
  if (down.length) return { ...plan, scale: down };
  if (input.complete) plan.cleanup = planCleanup(d, oldRSs);
  return plan;
}
