/**
 * The `DisruptionTarget` condition the agent writes when it ends a pod the user did not delete —
 * node-pressure eviction and graceful node shutdown (kubelet's reason `TerminationByKubelet`).
 * The condition tells controllers (Job podFailurePolicy, PodDisruptionBudgets) that the pod was
 * disrupted, not broken.
 */
import { rfc3339, type PodCondition, type PodStatus } from '@nodelet/api/agent';

/**
 * Sets phase (unless `keepSucceeded` and the pod already succeeded), reason and message, and
 * replaces any DisruptionTarget condition (its message `conditionMessage` when the kubelet words it
 * differently from the status message); a condition that was already True keeps its
 * transition time, so a status re-written on every sync does not look like a new disruption.
 */
export function markDisruptedByKubelet(status: PodStatus, o: { reason: string; message: string; now: number; keepSucceeded?: boolean; conditionMessage?: string }): void {
  if (!(o.keepSucceeded && status.phase === 'Succeeded')) status.phase = 'Failed';
  status.reason = o.reason;
  status.message = o.message;
  const conditions = status.conditions ?? [];
  const old = conditions.find((c) => c.type === 'DisruptionTarget');
  const cond: PodCondition = {
    type: 'DisruptionTarget',
    status: 'True',
    reason: 'TerminationByKubelet',
    message: o.conditionMessage ?? o.message,
    lastProbeTime: null,
    lastTransitionTime: old?.status === 'True' && old.lastTransitionTime ? old.lastTransitionTime : rfc3339(o.now),
  };
  status.conditions = [...conditions.filter((c) => c.type !== 'DisruptionTarget'), cond];
}
