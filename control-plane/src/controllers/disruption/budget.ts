/**
 * The disruption controller's arithmetic (upstream pkg/controller/disruption), pure and
 * table-tested: how many pods a budget expects and needs healthy, which evicted pods still count
 * as disrupted, how many are healthy, and the status that follows.
 */
import {
  DISRUPTION_ALLOWED_CONDITION,
  PDB_SYNC_FAILED_REASON,
  disruptionConditionUpToDate,
  podIsReady,
  setStatusCondition,
  updateDisruptionAllowedCondition,
  type OwnerReference,
  type Pod,
  type PodDisruptionBudget,
  type PodDisruptionBudgetStatus,
} from '@nodelet/api';
import { AgentError } from '@nodelet/base';

/** An evicted pod not deleted within this long counts as healthy again (upstream DeletionTimeout). */
export const DELETION_TIMEOUT_MS = 2 * 60_000;

/** A pod's controller and its desired replicas. */
export interface ControllerScale {
  uid: string;
  replicas: number;
}

/** Resolves a pod's controller reference to the scale of the workload behind it; undefined when it does not know it. */
export type ScaleFinder = (ref: OwnerReference, namespace: string) => Promise<ControllerScale | undefined>;

/** intstr.GetScaledValueFromIntOrPercent with rounding up, as the controller calls it. */
export function scaledValue(v: number | string, total: number): number {
  if (typeof v === 'number') return v;
  const m = /^(\d+)%$/.exec(v);
  if (!m) throw new AgentError('ERR_INVALID_ARGUMENT', `invalid value for IntOrString: invalid type: string is not a percentage`);
  return Math.ceil((Number(m[1]) * total) / 100);
}

export interface Expected {
  expectedCount: number;
  desiredHealthy: number;
  /** Pods without a controller (their budget's percentages cannot be computed). */
  unmanagedPods: string[];
}

/**
 * Sum of the scales of the selected pods' controllers (each counted once); a pod whose
 * controller no finder knows is an error, a pod without one is reported as unmanaged.
 */
async function expectedScale(pods: readonly Pod[], finders: readonly ScaleFinder[]): Promise<{ count: number; unmanagedPods: string[] }> {
  const scales = new Map<string, number>();
  const unmanagedPods: string[] = [];
  for (const pod of pods) {
    const ref = pod.metadata.ownerReferences?.find((r) => r.controller === true);
    if (!ref) {
      unmanagedPods.push(pod.metadata.name!);
      continue;
    }
    if (scales.has(ref.uid)) continue;
    let found: ControllerScale | undefined;
    for (const find of finders) {
      found = await find(ref, pod.metadata.namespace ?? '');
      if (found) break;
    }
    if (!found) throw new AgentError('ERR_NOT_FOUND', `found no controllers for pod "${pod.metadata.name}"`);
    scales.set(found.uid, found.replicas);
  }
  let count = 0;
  for (const n of scales.values()) count += n;
  return { count, unmanagedPods };
}

/**
 * getExpectedPodCount: an integer minAvailable counts the selected pods; maxUnavailable and a
 * percentage minAvailable are relative to the controllers' scale.
 */
export async function expectedPodCount(pdb: PodDisruptionBudget, pods: readonly Pod[], finders: readonly ScaleFinder[]): Promise<Expected> {
  const spec = pdb.spec ?? {};
  if (spec.maxUnavailable !== undefined && spec.maxUnavailable !== null) {
    const { count, unmanagedPods } = await expectedScale(pods, finders);
    return { expectedCount: count, desiredHealthy: Math.max(0, count - scaledValue(spec.maxUnavailable, count)), unmanagedPods };
  }
  if (typeof spec.minAvailable === 'number') return { expectedCount: pods.length, desiredHealthy: spec.minAvailable, unmanagedPods: [] };
  if (typeof spec.minAvailable === 'string') {
    const { count, unmanagedPods } = await expectedScale(pods, finders);
    return { expectedCount: count, desiredHealthy: scaledValue(spec.minAvailable, count), unmanagedPods };
  }
  return { expectedCount: 0, desiredHealthy: 0, unmanagedPods: [] };
}

/**
 * buildDisruptedPodMap: the entries of `disruptedPods` that are still pending — pods that exist,
 * are not yet being deleted and were evicted less than DELETION_TIMEOUT_MS ago — and when the
 * oldest of them expires (the budget must be looked at again then). `expired` lists pods whose
 * eviction never turned into a delete.
 */
export function pendingDisruptions(pdb: PodDisruptionBudget, pods: readonly Pod[], nowMs: number): { pending: Record<string, string>; recheckAtMs?: number; expired: Pod[] } {
  const recorded = pdb.status?.disruptedPods ?? {};
  const pending: Record<string, string> = {};
  const expired: Pod[] = [];
  let recheckAtMs: number | undefined;
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp) continue;
    const at = recorded[pod.metadata.name!];
    if (at === undefined) continue;
    const deadline = Date.parse(at) + DELETION_TIMEOUT_MS;
    if (!(deadline > nowMs)) {
      expired.push(pod);
      continue;
    }
    pending[pod.metadata.name!] = at;
    if (recheckAtMs === undefined || deadline < recheckAtMs) recheckAtMs = deadline;
  }
  return { pending, recheckAtMs, expired };
}

/** countHealthyPods: Ready pods that are neither being deleted nor just evicted. */
export function countHealthy(pods: readonly Pod[], pending: Readonly<Record<string, string>>, nowMs: number): number {
  let n = 0;
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp) continue;
    const at = pending[pod.metadata.name!];
    if (at !== undefined && Date.parse(at) + DELETION_TIMEOUT_MS > nowMs) continue;
    if (podIsReady(pod)) n++;
  }
  return n;
}

/**
 * The status `pdb` should have, or undefined when it has it already (updatePdbStatus). A budget
 * that expects no pods allows nothing, so pods appearing before the next sync are safe.
 */
export function nextStatus(
  pdb: PodDisruptionBudget,
  counts: { currentHealthy: number; desiredHealthy: number; expectedCount: number; disruptedPods: Record<string, string> },
  nowRfc3339: string,
): PodDisruptionBudgetStatus | undefined {
  let allowed = counts.currentHealthy - counts.desiredHealthy;
  if (counts.expectedCount <= 0 || allowed <= 0) allowed = 0;
  const st = pdb.status;
  if (
    st &&
    st.currentHealthy === counts.currentHealthy &&
    st.desiredHealthy === counts.desiredHealthy &&
    st.expectedPods === counts.expectedCount &&
    st.disruptionsAllowed === allowed &&
    JSON.stringify(sortedKeys(st.disruptedPods ?? {})) === JSON.stringify(sortedKeys(counts.disruptedPods)) &&
    disruptionConditionUpToDate(pdb)
  ) {
    return undefined;
  }
  const next: PodDisruptionBudgetStatus = {
    observedGeneration: pdb.metadata.generation,
    ...(Object.keys(counts.disruptedPods).length ? { disruptedPods: counts.disruptedPods } : {}),
    disruptionsAllowed: allowed,
    currentHealthy: counts.currentHealthy,
    desiredHealthy: counts.desiredHealthy,
    expectedPods: counts.expectedCount,
    conditions: structuredClone(st?.conditions ?? []),
  };
  updateDisruptionAllowedCondition(next, nowRfc3339);
  return next;
}

/** failSafe: when the budget cannot be computed, nothing may be disrupted (False/SyncFailed with the error). */
export function failSafeStatus(pdb: PodDisruptionBudget, message: string, nowRfc3339: string): PodDisruptionBudgetStatus {
  const st = structuredClone(pdb.status ?? { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 });
  st.disruptionsAllowed = 0;
  st.conditions ??= [];
  setStatusCondition(st.conditions, { type: DISRUPTION_ALLOWED_CONDITION, status: 'False', reason: PDB_SYNC_FAILED_REASON, message, observedGeneration: st.observedGeneration }, nowRfc3339);
  return st;
}

function sortedKeys(m: Record<string, string>): Array<[string, string]> {
  return Object.entries(m).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** A DisruptionTarget condition older than this on a pod that is not terminating is reset to False. */
export const STALE_DISRUPTION_TIMEOUT_MS = 2 * 60_000;

/**
 * For a pod that is not terminating, not finished and carries DisruptionTarget=True (not the
 * kubelet's own TerminationByKubelet): how long until that condition is stale (0 = now).
 * Undefined when there is nothing to clean.
 */
export function staleDisruptionAfterMs(pod: Pod, nowMs: number): number | undefined {
  if (pod.metadata.deletionTimestamp) return undefined;
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return undefined;
  const cond = pod.status?.conditions?.find((c) => c.type === 'DisruptionTarget');
  if (!cond || cond.status !== 'True' || cond.reason === 'TerminationByKubelet') return undefined;
  const since = Date.parse(cond.lastTransitionTime ?? '');
  return Math.max(0, (Number.isFinite(since) ? since : 0) + STALE_DISRUPTION_TIMEOUT_MS - nowMs);
}
