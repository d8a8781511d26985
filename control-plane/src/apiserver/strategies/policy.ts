/**
 * Strategy of policy/v1 PodDisruptionBudgets (pkg/registry/policy/poddisruptionbudget): a new
 * budget starts with a zeroed status (the four counts are always present on the wire), spec
 * changes bump the generation (the eviction subresource refuses to trust a status whose
 * observedGeneration lags), and spec/status are validated as upstream does.
 */
import { validatePodDisruptionBudgetSpec, validatePodDisruptionBudgetStatus } from '@nodelet/api';
import type { Strategy } from '../resource.js';

/** The status of a budget the disruption controller has not looked at yet. */
export const EMPTY_PDB_STATUS = { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 };

export const podDisruptionBudgetStrategy: Strategy = {
  prepareForCreate(obj) {
    obj.status = { ...EMPTY_PDB_STATUS };
  },
  validate(obj) {
    return [...validatePodDisruptionBudgetSpec(obj.spec), ...validatePodDisruptionBudgetStatus(obj.status)];
  },
};
