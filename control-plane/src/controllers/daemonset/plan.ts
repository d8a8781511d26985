/**
 * The pure half of the DaemonSet controller: per node, which daemon pods to create and delete
 * (upstream podsShouldBeOnNode + rollingUpdate), and the status. The controller executes it.
 *
 *   per node: should run & no pod ─▶ create     should not continue & pods ─▶ delete them
 *             failed pod ─▶ delete (after a per-node backoff)   two running pods ─▶ keep the oldest
 *   RollingUpdate, maxSurge 0: delete old pods while at most maxUnavailable nodes lack an available
 *             pod (unavailable old pods go first); the manage step then creates the new ones
 *   RollingUpdate, maxSurge > 0: create the new pod beside an available old one on up to maxSurge
 *             nodes; delete the old pod once the new one is available
 */
import type { DaemonSet, DaemonSetStatus, Node, Pod } from '@nodelet/api';
import { resolveIntOrPercent } from '../deployment/util.js';
import { isPodAvailable, isPodReady } from '../util/pods.js';
import { isPodUpdated, nodeShouldRunDaemonPod, type Eligibility } from './eligibility.js';

export interface NodeState {
  node: Node;
  eligibility: Eligibility;
  /** Daemon pods targeting the node, without those being deleted. */
  pods: Pod[];
}

export interface DaemonSetPlan {
  createOn: string[];
  delete: Pod[];
  /** Nodes whose failed pods were deleted (the caller backs those nodes off). */
  failedOn: string[];
}

const byAge = (a: Pod, b: Pod): number =>
  (Date.parse(a.metadata.creationTimestamp ?? '') || 0) - (Date.parse(b.metadata.creationTimestamp ?? '') || 0) || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');

export const surgeOf = (ds: DaemonSet, desired: number): number =>
  ds.spec?.updateStrategy?.type === 'RollingUpdate' ? resolveIntOrPercent(ds.spec.updateStrategy.rollingUpdate?.maxSurge, desired, true, '0') : 0;

/** maxSurge and maxUnavailable against the desired count (both round up; both 0 would block, so unavailable becomes 1). */
export function updateBudget(ds: DaemonSet, desired: number): { maxSurge: number; maxUnavailable: number } {
  const ru = ds.spec?.updateStrategy?.rollingUpdate;
  const maxSurge = surgeOf(ds, desired);
  let maxUnavailable = resolveIntOrPercent(ru?.maxUnavailable, desired, true, '1');
  if (maxSurge === 0 && maxUnavailable === 0) maxUnavailable = 1;
  return { maxSurge, maxUnavailable };
}

/** Step 1, the manage loop: pods that must exist or go whatever the update strategy. */
export function planNodes(ds: DaemonSet, nodes: readonly NodeState[], hash: string, gen: string | undefined, canRetryFailed: (node: string) => boolean): DaemonSetPlan {
  const plan: DaemonSetPlan = { createOn: [], delete: [], failedOn: [] };
  const surge = surgeOf(ds, nodes.length) > 0;
  for (const { node, eligibility, pods } of nodes) {
    const name = node.metadata.name ?? '';
    if (!eligibility.shouldContinueRunning) {
      plan.delete.push(...pods);
      continue;
    }
    if (!eligibility.shouldRun && pods.length === 0) continue;
    const failed = pods.filter((p) => p.status?.phase === 'Failed');
    const running = pods.filter((p) => p.status?.phase !== 'Failed' && p.status?.phase !== 'Succeeded');
    if (failed.length && canRetryFailed(name)) {
      plan.delete.push(...failed);
      plan.failedOn.push(name);
    }
    if (eligibility.shouldRun && running.length === 0 && !failed.length) plan.createOn.push(name);
    if (running.length <= 1) continue;
    const sorted = [...running].sort(byAge);
    if (!surge) {
      plan.delete.push(...sorted.slice(1));
      continue;
    }
    // Surging: one new and one old may overlap; anything beyond that goes.
    const fresh = sorted.filter((p) => isPodUpdated(p, hash, gen));
    const old = sorted.filter((p) => !isPodUpdated(p, hash, gen));
    plan.delete.push(...fresh.slice(1), ...old.slice(1));
  }
  return plan;
}

/** Step 2, RollingUpdate: old pods to delete and nodes to surge onto. */
export function planRollingUpdate(ds: DaemonSet, nodes: readonly NodeState[], hash: string, gen: string | undefined, nowMs: number): { delete: Pod[]; createOn: string[] } {
  if (ds.spec?.updateStrategy?.type !== 'RollingUpdate') return { delete: [], createOn: [] };
  const minReady = ds.spec.minReadySeconds ?? 0;
  const desired = nodes.filter((n) => n.eligibility.shouldRun).length;
  const { maxSurge, maxUnavailable } = updateBudget(ds, desired);
  const available = (p: Pod): boolean => isPodAvailable(p, minReady, nowMs);
  const live = (ps: Pod[]): Pod[] => ps.filter((p) => p.status?.phase !== 'Failed' && p.status?.phase !== 'Succeeded');
  const split = (ps: Pod[]): { fresh?: Pod; old?: Pod; ok: boolean } => {
    const fresh = ps.filter((p) => isPodUpdated(p, hash, gen));
    const old = ps.filter((p) => !isPodUpdated(p, hash, gen));
    return { fresh: fresh[0], old: old[0], ok: fresh.length <= 1 && old.length <= 1 };
  };
  // Nodes with daemon pods, and nodes that should have one (upstream updatedDesiredNodeCounts).
  const relevant = nodes.filter((n) => n.eligibility.shouldRun || n.pods.length > 0);
  if (maxSurge === 0) {
    let unavailable = 0;
    const replace: Pod[] = [];
    const candidates: Pod[] = [];
    for (const n of relevant) {
      const { fresh, old, ok } = split(live(n.pods));
      if (!ok || (!fresh && !old) || (fresh && old)) unavailable++;
      else if (fresh) {
        if (!available(fresh)) unavailable++;
      } else if (old && !available(old)) replace.push(old);
      else if (old && unavailable < maxUnavailable) candidates.push(old);
    }
    const room = Math.min(Math.max(0, maxUnavailable - unavailable), candidates.length);
    return { delete: [...replace, ...candidates.slice(0, room)], createOn: [] };
  }
  let surging = 0;
  const toDelete: Pod[] = [];
  const allowed: string[] = [];
  const candidates: string[] = [];
  for (const n of relevant) {
    const { fresh, old, ok } = split(live(n.pods));
    if (!ok || !old) continue;
    const name = n.node.metadata.name ?? '';
    if (!fresh) {
      if (!available(old)) {
        if (n.eligibility.shouldRun) allowed.push(name);
      } else if (surging < maxSurge) candidates.push(name);
    } else if (!available(fresh)) surging++;
    else toDelete.push(old);
  }
  const room = Math.min(Math.max(0, maxSurge - surging), candidates.length);
  return { delete: toDelete, createOn: [...allowed, ...candidates.slice(0, room)] };
}

/** Upstream updateDaemonSetStatus: per node, the oldest daemon pod counts. */
export function daemonSetStatus(ds: DaemonSet, nodes: readonly NodeState[], hash: string, gen: string | undefined, nowMs: number): DaemonSetStatus {
  let desired = 0, current = 0, misscheduled = 0, ready = 0, available = 0, updated = 0;
  for (const n of nodes) {
    const scheduled = n.pods.length > 0;
    if (!n.eligibility.shouldRun) {
      if (scheduled) misscheduled++;
      continue;
    }
    desired++;
    if (!scheduled) continue;
    current++;
    const pod = [...n.pods].sort((a, b) => phaseRank(a) - phaseRank(b) || byAge(a, b))[0]!;
    if (isPodReady(pod)) {
      ready++;
      if (isPodAvailable(pod, ds.spec?.minReadySeconds ?? 0, nowMs)) available++;
    }
    if (isPodUpdated(pod, hash, gen)) updated++;
  }
  return {
    currentNumberScheduled: current,
    numberMisscheduled: misscheduled,
    desiredNumberScheduled: desired,
    numberReady: ready,
    observedGeneration: ds.metadata.generation,
    updatedNumberScheduled: updated,
    numberAvailable: available,
    ...(desired - available > 0 ? { numberUnavailable: desired - available } : {}),
    ...(ds.status?.collisionCount ? { collisionCount: ds.status.collisionCount } : {}),
  };
}

/** podByCreationTimestampAndPhase: running pods before pending ones, then the oldest. */
function phaseRank(p: Pod): number {
  return p.status?.phase === 'Running' ? 0 : 1;
}

export function nodeStates(ds: DaemonSet, nodes: readonly Node[], podsByNode: ReadonlyMap<string, Pod[]>): NodeState[] {
  return nodes.map((node) => ({ node, eligibility: nodeShouldRunDaemonPod(node, ds), pods: podsByNode.get(node.metadata.name ?? '') ?? [] }));
}
