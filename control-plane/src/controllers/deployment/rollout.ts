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
import { DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION, byCreation, maxUnavailableOf, resolveFenceposts, revisionOf } from './util.js';

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

const annotationInt = (rs: ReplicaSet, key: string): number | undefined => {
  const v = Number.parseInt(rs.metadata.annotations?.[key] ?? '', 10);
  return Number.isFinite(v) ? v : undefined;
};

/** Upstream isScalingEvent: an active ReplicaSet was sized for a different `spec.replicas`. */
export function isScalingEvent(d: Deployment, all: readonly ReplicaSet[]): boolean {
  const desired = d.spec?.replicas ?? 1;
  return all.some((rs) => replicasOf(rs) > 0 && (annotationInt(rs, DESIRED_REPLICAS_ANNOTATION) ?? desired) !== desired);
}

/** Upstream getReplicaSetFraction: this ReplicaSet's share of the change, from its max-replicas annotation. */
function fraction(rs: ReplicaSet, d: Deployment): number {
  const desired = d.spec?.replicas ?? 1;
  if (desired === 0) return -replicasOf(rs);
  const maxNow = desired + resolveFenceposts(d).maxSurge;
  let before = annotationInt(rs, MAX_REPLICAS_ANNOTATION) ?? 0;
  if (before === 0) before = d.status?.replicas ?? 0;
  if (before === 0) return 0;
  return Math.round((replicasOf(rs) * maxNow) / before) - replicasOf(rs);
}

/**
 * Upstream `scale()` for a Deployment resized mid-rollout: one active ReplicaSet takes the new size;
 * a saturated new ReplicaSet means old ones go to 0; otherwise (RollingUpdate) the change is
 * shared among the active ReplicaSets in proportion to their size, leftovers to the largest.
 * Returns no actions when nothing needs to change (the rollout planner then runs).
 */
export function planProportionalScale(d: Deployment, newRS: ReplicaSet | undefined, oldRSs: readonly ReplicaSet[]): ScaleAction[] {
  const desired = d.spec?.replicas ?? 1;
  const newestFirst = [...oldRSs].sort(byCreation).reverse();
  const active = [...newestFirst, ...(newRS ? [newRS] : [])].filter((rs) => replicasOf(rs) > 0);
  const name = (rs: ReplicaSet): string => rs.metadata.name ?? '';
  if (active.length <= 1) {
    const target = active[0] ?? newRS ?? newestFirst[0];
    if (!target) return [];
    const stale = annotationInt(target, DESIRED_REPLICAS_ANNOTATION) !== desired;
    return replicasOf(target) !== desired || stale ? [{ name: name(target), replicas: desired }] : [];
  }
  const saturated = newRS && replicasOf(newRS) === desired && annotationInt(newRS, DESIRED_REPLICAS_ANNOTATION) === desired && availableOf(newRS) === desired;
  if (saturated) return oldRSs.filter((rs) => replicasOf(rs) > 0).map((rs) => ({ name: name(rs), replicas: 0 }));
  if (d.spec?.strategy?.type === 'Recreate') return [];

  const allowed = desired > 0 ? desired + resolveFenceposts(d).maxSurge : 0;
  const toAdd = allowed - sum(active, replicasOf);
  const created = (rs: ReplicaSet): number => Date.parse(rs.metadata.creationTimestamp ?? '') || 0;
  // Larger first; on equal size newer first when growing, older first when shrinking.
  active.sort((a, b) => replicasOf(b) - replicasOf(a) || (toAdd > 0 ? created(b) - created(a) : created(a) - created(b)));
  const size = new Map<string, number>();
  let added = 0;
  for (const rs of active) {
    let p = 0;
    if (toAdd !== 0 && toAdd !== added) {
      const f = fraction(rs, d);
      p = toAdd > 0 ? Math.min(f, toAdd - added) : Math.max(f, toAdd - added);
    }
    size.set(name(rs), replicasOf(rs) + p);
    added += p;
  }
  if (toAdd !== 0) size.set(name(active[0]!), Math.max(0, (size.get(name(active[0]!)) ?? 0) + toAdd - added));
  return active.map((rs) => ({ name: name(rs), replicas: size.get(name(rs)) ?? replicasOf(rs) }));
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

  // A paused Deployment only follows scaling, never rolls out; a resize is handled before any rollout step.
  if (d.spec?.paused || isScalingEvent(d, all)) {
    const scale = planProportionalScale(d, newRS, oldRSs);
    if (scale.length || d.spec?.paused) return { ...plan, scale };
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
