/**
 * One scheduling decision, pure: filter every node, explain failures like kube-scheduler, score the
 * feasible nodes and pick one. The caller supplies the snapshot (nodes + bound/assumed pods).
 *
 *   pod ──▶ filters (first rejection per node) ──▶ feasible? ──yes──▶ scores ──▶ selectHost ──▶ node
 *                                                      │no
 *                                                      ▼
 *                                  FitError message + "preemption:" dry run (no victims evicted)
 */
import type { Pod } from '@nodelet/api';
import { DEFAULT_FILTERS, newPodContext, runFilters, type FilterPlugin, type FilterStatus } from './filters.js';
import { formatFailedScheduling, formatFitError, NO_PREEMPTION_VICTIMS, PREEMPTION_NOT_HELPFUL } from './fit-error.js';
import { newNodeInfo, type NodeInfo } from './node-info.js';
import { scoreNodes, selectHost } from './scores.js';

export type ScheduleResult =
  | { ok: true; node: string; feasible: number }
  | { ok: false; message: string; statuses: Map<string, FilterStatus> };

export interface ScheduleOptions {
  filters?: readonly FilterPlugin[];
  random?: () => number;
}

export function schedulePod(pod: Pod, nodes: readonly NodeInfo[], opts: ScheduleOptions = {}): ScheduleResult {
  const filters = opts.filters ?? DEFAULT_FILTERS;
  const ctx = newPodContext(pod);
  const feasible: NodeInfo[] = [];
  const statuses = new Map<string, FilterStatus>();
  for (const n of nodes) {
    const s = runFilters(ctx, n, filters);
    if (s) statuses.set(n.name, s);
    else feasible.push(n);
  }
  if (feasible.length === 0) {
    const preemption = preemptionMessage(pod, nodes, statuses, filters);
    return { ok: false, message: formatFailedScheduling(nodes.length, statuses.values(), preemption), statuses };
  }
  if (feasible.length === 1) return { ok: true, node: feasible[0]!.name, feasible: 1 };
  const node = selectHost(scoreNodes(pod, feasible), opts.random ?? Math.random);
  return { ok: true, node: node!, feasible: feasible.length };
}

const priorityOf = (p: Pod): number => (p.spec as { priority?: number } | undefined)?.priority ?? 0;

/**
 * The DefaultPreemption PostFilter's message. Only nodes rejected as `Unschedulable` are
 * candidates; a candidate needs pods of lower priority whose removal makes the pod fit. This
 * scheduler does not evict anyone: when preemption would help it says so instead of preempting.
 */
export function preemptionMessage(pod: Pod, nodes: readonly NodeInfo[], statuses: Map<string, FilterStatus>, filters: readonly FilterPlugin[]): string {
  if ((pod.spec as { preemptionPolicy?: string } | undefined)?.preemptionPolicy === 'Never') {
    return 'preemption: not eligible due to preemptionPolicy=Never.';
  }
  const prio = priorityOf(pod);
  const ctx = newPodContext(pod);
  const candidateStatuses: FilterStatus[] = [];
  for (const n of nodes) {
    if (statuses.get(n.name)?.code !== 'Unschedulable') continue;
    const remaining = n.pods.filter((p) => priorityOf(p) >= prio);
    if (remaining.length === n.pods.length) {
      candidateStatuses.push({ plugin: 'DefaultPreemption', code: 'UnschedulableAndUnresolvable', reasons: [NO_PREEMPTION_VICTIMS] });
      continue;
    }
    const after = runFilters(ctx, newNodeInfo(n.node, remaining), filters);
    candidateStatuses.push(
      after ?? { plugin: 'DefaultPreemption', code: 'Unschedulable', reasons: ['preemption of lower-priority pods would help, but this scheduler does not preempt'] },
    );
  }
  return `preemption: ${formatFitError(nodes.length, candidateStatuses, PREEMPTION_NOT_HELPFUL)}`;
}
