/**
 * The FailedScheduling message, in kube-scheduler 1.32's exact form (framework `FitError.Error()`
 * plus the DefaultPreemption PostFilter message):
 *
 *   0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint {k: v}.
 *   preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod,
 *   2 Preemption is not helpful for scheduling.
 *
 * Each "<count> <reason>" string is sorted as a plain string (Go `sort.Strings`, so "10 x" sorts
 * before "2 y"), and joined with ", ".
 */
import type { FilterStatus } from './filters.js';

export const NO_NODES_AVAILABLE = 'no nodes available to schedule pods';
export const PREEMPTION_NOT_HELPFUL = 'Preemption is not helpful for scheduling';
export const NO_PREEMPTION_VICTIMS = 'No preemption victims found for incoming pod';

/** Go's sort.Strings order: by UTF-16 code units, not locale. */
function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * `numAllNodes` nodes, `statuses` the rejection of each node that has one, and `absentReason` the
 * reason counted for the nodes without an explicit status.
 */
export function formatFitError(numAllNodes: number, statuses: Iterable<Pick<FilterStatus, 'reasons'>>, absentReason?: string): string {
  const histogram = new Map<string, number>();
  let explicit = 0;
  for (const s of statuses) {
    explicit++;
    for (const r of s.reasons) histogram.set(r, (histogram.get(r) ?? 0) + 1);
  }
  if (absentReason && explicit < numAllNodes) {
    histogram.set(absentReason, (histogram.get(absentReason) ?? 0) + numAllNodes - explicit);
  }
  let msg = `0/${numAllNodes} nodes are available:`;
  const parts = [...histogram].map(([reason, n]) => `${n} ${reason}`).sort(byCodeUnits);
  if (parts.length) msg += ` ${parts.join(', ')}.`;
  return msg;
}

/**
 * The full message: filter histogram (or the PreFilter's message when PreFilter rejected the
 * pod everywhere), then " " + the PostFilter (preemption) message. `absentReason` counts the
 * nodes a PreFilter left out without a status of their own.
 */
export function formatFailedScheduling(
  numAllNodes: number,
  statuses: Iterable<FilterStatus>,
  preemptionMsg: string,
  preFilterMsg?: string,
  absentReason?: string,
): string {
  if (numAllNodes === 0) return NO_NODES_AVAILABLE;
  const base = preFilterMsg ? `0/${numAllNodes} nodes are available: ${preFilterMsg}.` : formatFitError(numAllNodes, statuses, absentReason);
  return preemptionMsg ? `${base} ${preemptionMsg}` : base;
}
