/**
 * policy/v1 PodDisruptionBudget and Eviction: JSON names and optionality as in k8s.io/api/policy/v1.
 * The disruption controller writes the status; the eviction subresource reads it and records
 * the pods it let go in `disruptedPods` (docs/workloads.md, "Disruption budgets").
 */
import type { Condition, DeleteOptions, KubeObject, LabelSelector, Time } from './meta.js';

export type UnhealthyPodEvictionPolicy = 'IfHealthyBudget' | 'AlwaysAllow';

export interface PodDisruptionBudgetSpec {
  /** An int or a percentage (`"50%"`); mutually exclusive with maxUnavailable. */
  minAvailable?: number | string;
  /** nil selects no pods; `{}` selects every pod of the namespace. */
  selector?: LabelSelector;
  maxUnavailable?: number | string;
  unhealthyPodEvictionPolicy?: UnhealthyPodEvictionPolicy;
}

export interface PodDisruptionBudgetStatus {
  observedGeneration?: number;
  /** Pod name → when the eviction subresource let it go (cleared by the controller). */
  disruptedPods?: Record<string, Time>;
  disruptionsAllowed: number;
  currentHealthy: number;
  desiredHealthy: number;
  expectedPods: number;
  conditions?: Condition[];
}

export interface PodDisruptionBudget extends KubeObject {
  apiVersion?: 'policy/v1';
  kind?: 'PodDisruptionBudget';
  spec?: PodDisruptionBudgetSpec;
  status?: PodDisruptionBudgetStatus;
}

/** The condition the disruption controller keeps, and its reasons (k8s.io/api/policy/v1). */
export const DISRUPTION_ALLOWED_CONDITION = 'DisruptionAllowed';
export const PDB_SYNC_FAILED_REASON = 'SyncFailed';
export const PDB_SUFFICIENT_PODS_REASON = 'SufficientPods';
export const PDB_INSUFFICIENT_PODS_REASON = 'InsufficientPods';
/** The StatusCause type of a refused eviction. */
export const DISRUPTION_BUDGET_CAUSE = 'DisruptionBudget';

/** POST pods/<name>/eviction (what `kubectl drain` sends). */
export interface Eviction extends KubeObject {
  apiVersion?: 'policy/v1';
  kind?: 'Eviction';
  deleteOptions?: DeleteOptions;
}
