/**
 * One scheduling decision, pure: PreFilter narrows the candidates, filters run from a rotating
 * start node until enough feasible nodes are found, failures are explained like kube-scheduler,
 * the feasible nodes are scored and one is picked. The caller supplies the snapshot.
 *
 *   pod ─▶ PreFilter (DaemonSet pods: their named node only)
 *            │
 *            ├─ nominated node (an earlier preemption's) fits? ──yes──▶ node
 *            ▼
 *          filters over candidates[start], candidates[start+1], …  (first rejection per node)
 *            │ stop once numFeasibleNodesToFind nodes fit (percentageOfNodesToScore)
 *            ▼
 *          feasible? ──yes──▶ scores ──▶ selectHost ──▶ node      (+ processed, to advance start)
 *            │no
 *            ▼
 *          FitError message + PostFilter (preemption.ts): a candidate node and its victims,
 *          or the "preemption: …" part saying why none
 */
import type { Pod, PodDisruptionBudget } from '@nodelet/api';
import { DEFAULT_FILTERS, newPodContext, nodeAffinityPreFilter, REASON_AFFINITY_TERMS_CONFLICT, type FilterPlugin, type FilterStatus } from './filters.js';
import { formatFailedScheduling, formatFitError, PREEMPTION_NOT_HELPFUL } from './fit-error.js';
import type { NodeInfo } from './node-info.js';
import { runFiltersWithNominated, type NominatedLookup } from './nominator.js';
import type { PodInfo } from './pod-info.js';
import { preempt, type Candidate } from './preemption.js';
import { scoreNodes, selectHost, type ScorePlugin } from './scores.js';

export type ScheduleResult =
  | { ok: true; node: string; feasible: number; processed: number }
  /**
   * `preemption`: the PostFilter's choice (the message then has no "preemption:" part, as
   * upstream); `clearNomination`: preemption can help nowhere, the pod's nomination is void.
   */
  | { ok: false; message: string; statuses: Map<string, FilterStatus>; processed: number; preemption?: Candidate; clearNomination?: boolean };

/** The nodes a cycle sees: a list in a stable order, and lookup by name. */
export interface NodeSnapshot {
  readonly list: readonly NodeInfo[];
  get(name: string): NodeInfo | undefined;
}

export interface ScheduleOptions {
  filters?: readonly FilterPlugin[];
  /** Score plugins beyond the built-in ones (scores.ts). */
  scorers?: readonly ScorePlugin[];
  random?: () => number;
  /**
   * kube-scheduler's `percentageOfNodesToScore`: stop filtering once this share of the nodes
   * fits. Unset or 0 = upstream's adaptive default (50 % minus 1 % per 125 nodes, at least 5 %);
   * 100 = every node. At least 100 nodes are looked for either way.
   */
  percentageOfNodesToScore?: number;
  /** Index in the node list where filtering starts (round robin across cycles). */
  startIndex?: number;
  /** Pods nominated to each node (they count for pods of lower or equal priority). */
  nominated?: NominatedLookup;
  /**
   * Where the pod is nominated (our record, ahead of `status.nominatedNodeName` reaching the
   * informer): tried first, and taken when it fits.
   */
  nominatedNode?: string;
  /** The budgets preemption weighs its victims against. */
  pdbs?: readonly PodDisruptionBudget[];
}

/** Upstream minFeasibleNodesToFind and minFeasibleNodesPercentageToFind. */
export const MIN_FEASIBLE_NODES_TO_FIND = 100;
export const MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5;

export const reasonPreFilterRejected = (plugins: readonly string[]): string => `node(s) didn't satisfy plugin(s) [${plugins.join(' ')}]`;

/** How many feasible nodes end the search (upstream `numFeasibleNodesToFind`, integer arithmetic). */
export function numFeasibleNodesToFind(numAllNodes: number, percentage = 0): number {
  if (numAllNodes < MIN_FEASIBLE_NODES_TO_FIND) return numAllNodes;
  let pct = percentage;
  if (pct <= 0) pct = Math.max(MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND, 50 - Math.trunc(numAllNodes / 125));
  const n = Math.trunc((numAllNodes * pct) / 100);
  return n < MIN_FEASIBLE_NODES_TO_FIND ? MIN_FEASIBLE_NODES_TO_FIND : n;
}

function toSnapshot(nodes: readonly NodeInfo[] | NodeSnapshot): NodeSnapshot {
  if (!Array.isArray(nodes)) return nodes as NodeSnapshot;
  const list = nodes as readonly NodeInfo[];
  return { list, get: (name) => list.find((n) => n.name === name) };
}

export function schedulePod(pod: Pod | PodInfo, nodes: readonly NodeInfo[] | NodeSnapshot, opts: ScheduleOptions = {}): ScheduleResult {
  const filters = opts.filters ?? DEFAULT_FILTERS;
  const snapshot = toSnapshot(nodes);
  const all = snapshot.list;
  const ctx = newPodContext(pod);
  const statuses = new Map<string, FilterStatus>();
  if (all.length === 0) return { ok: false, message: formatFailedScheduling(0, [], ''), statuses, processed: 0 };

  // 1. PreFilter.
  const pre = nodeAffinityPreFilter(ctx.pod);
  if (pre === 'conflict') {
    const s: FilterStatus = { plugin: 'NodeAffinity', code: 'UnschedulableAndUnresolvable', reasons: [REASON_AFFINITY_TERMS_CONFLICT] };
    for (const n of all) statuses.set(n.name, s);
    const preemption = `preemption: ${formatFitError(all.length, [], PREEMPTION_NOT_HELPFUL)}`;
    return { ok: false, message: formatFailedScheduling(all.length, [], preemption, REASON_AFFINITY_TERMS_CONFLICT), statuses, processed: 0 };
  }
  let candidates = all;
  let absentReason: string | undefined;
  if (pre !== undefined) {
    candidates = [...pre].map((name) => snapshot.get(name)).filter((n): n is NodeInfo => n !== undefined);
    absentReason = reasonPreFilterRejected(['NodeAffinity']);
  }

  for (const f of filters) f.preFilter?.(ctx);

  // The node a preemption made room on is tried first and taken when it fits (upstream evaluateNominatedNode).
  const nominatedNode = opts.nominatedNode ?? ctx.pod.status?.nominatedNodeName;
  const nominated = nominatedNode === undefined ? undefined : candidates.find((n) => n.name === nominatedNode);
  if (nominated && !runFiltersWithNominated(ctx, nominated, filters, opts.nominated)) return { ok: true, node: nominated.name, feasible: 1, processed: 0 };

  // 2. Filter from the rotating start until enough nodes fit.
  const want = numFeasibleNodesToFind(candidates.length, opts.percentageOfNodesToScore);
  const start = candidates.length > 0 ? (opts.startIndex ?? 0) % candidates.length : 0;
  const feasible: NodeInfo[] = [];
  let processed = 0;
  for (let i = 0; i < candidates.length && feasible.length < want; i++) {
    const n = candidates[(start + i) % candidates.length]!;
    processed++;
    const s = runFiltersWithNominated(ctx, n, filters, opts.nominated);
    if (s) statuses.set(n.name, s);
    else feasible.push(n);
  }

  // 3. No fit: PostFilter (preemption), and the explanation.
  if (feasible.length === 0) {
    const p = preempt(ctx, snapshot, statuses, { filters, pdbs: opts.pdbs, nominated: opts.nominated, nominatedNode: opts.nominatedNode, random: opts.random, numAllNodes: all.length });
    const message = formatFailedScheduling(all.length, statuses.values(), p.ok ? '' : p.message, undefined, absentReason);
    return { ok: false, message, statuses, processed, ...(p.ok ? { preemption: p.candidate } : p.clearNomination ? { clearNomination: true } : {}) };
  }
  // 4. Score and pick.
  if (feasible.length === 1) return { ok: true, node: feasible[0]!.name, feasible: 1, processed };
  const node = selectHost(scoreNodes(ctx, feasible, opts.scorers), opts.random ?? Math.random);
  return { ok: true, node: node!, feasible: feasible.length, processed };
}
