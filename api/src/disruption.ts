/**
 * PodDisruptionBudget rules shared by the eviction subresource (API server) and the disruption
 * controller, as upstream shares them through component-helpers/apps/poddisruptionbudget:
 * which pods a budget covers and how its DisruptionAllowed condition follows the counts.
 * Pure; callers pass the time.
 */
import { labelSelectorFromObject, matchLabels } from './selectors.js';
import type { Condition, Pod, PodDisruptionBudget, PodDisruptionBudgetStatus } from './types/index.js';
import {
  DISRUPTION_ALLOWED_CONDITION,
  PDB_INSUFFICIENT_PODS_REASON,
  PDB_SUFFICIENT_PODS_REASON,
} from './types/policy.js';

/**
 * True when `pdb`'s selector selects `pod` (same namespace). A nil selector selects nothing.
 * An empty selector (`{}`) selects every pod for the disruption controller (policy/v1), but the
 * eviction subresource ignores such budgets (`emptySelectsAll: false`), as upstream does.
 * A selector that does not parse selects nothing.
 */
export function pdbSelectsPod(pdb: PodDisruptionBudget, pod: Pod, opts: { emptySelectsAll: boolean }): boolean {
  if (pdb.metadata.namespace !== pod.metadata.namespace) return false;
  const sel = pdb.spec?.selector;
  if (!sel) return false;
  const empty = !Object.keys(sel.matchLabels ?? {}).length && !(sel.matchExpressions ?? []).length;
  if (empty) return opts.emptySelectsAll;
  try {
    return matchLabels(labelSelectorFromObject(sel), pod.metadata.labels);
  } catch {
    return false; // an invalid selector matches no pod (upstream skips the budget)
  }
}

/** The pod's Ready condition is True (upstream's IsPodReady, the PDB's notion of healthy). */
export function podIsReady(pod: Pod): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/**
 * apimeta.SetStatusCondition: adds or updates the condition of `next.type`; the transition time
 * moves only when the status changes. Returns whether anything changed.
 */
export function setStatusCondition(conditions: Condition[], next: Omit<Condition, 'lastTransitionTime'>, nowRfc3339: string): boolean {
  const i = conditions.findIndex((c) => c.type === next.type);
  if (i < 0) {
    conditions.push({ ...next, message: next.message ?? '', lastTransitionTime: nowRfc3339 });
    return true;
  }
  const cur = conditions[i]!;
  const updated: Condition = {
    ...cur,
    status: next.status,
    reason: next.reason,
    message: next.message ?? '',
    observedGeneration: next.observedGeneration,
    lastTransitionTime: cur.status !== next.status ? nowRfc3339 : cur.lastTransitionTime,
  };
  if (JSON.stringify(updated) === JSON.stringify(cur)) return false;
  conditions[i] = updated;
  return true;
}

/** UpdateDisruptionAllowedCondition: True/SufficientPods when disruptions are allowed, else False/InsufficientPods. */
export function updateDisruptionAllowedCondition(status: PodDisruptionBudgetStatus, nowRfc3339: string): void {
  status.conditions ??= [];
  const allowed = status.disruptionsAllowed > 0;
  setStatusCondition(
    status.conditions,
    {
      type: DISRUPTION_ALLOWED_CONDITION,
      status: allowed ? 'True' : 'False',
      reason: allowed ? PDB_SUFFICIENT_PODS_REASON : PDB_INSUFFICIENT_PODS_REASON,
      observedGeneration: status.observedGeneration,
    },
    nowRfc3339,
  );
}

/** ConditionsAreUpToDate: the DisruptionAllowed condition agrees with the counts of the current generation. */
export function disruptionConditionUpToDate(pdb: PodDisruptionBudget): boolean {
  const st = pdb.status;
  const cond = st?.conditions?.find((c) => c.type === DISRUPTION_ALLOWED_CONDITION);
  if (!st || !cond || st.observedGeneration !== pdb.metadata.generation) return false;
  return st.disruptionsAllowed > 0
    ? cond.status === 'True' && cond.reason === PDB_SUFFICIENT_PODS_REASON
    : cond.status === 'False' && cond.reason === PDB_INSUFFICIENT_PODS_REASON;
}
