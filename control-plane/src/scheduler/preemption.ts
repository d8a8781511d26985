/**
 * DefaultPreemption's PostFilter, after kube-scheduler: when no node fits a pod, find nodes where
 * evicting pods of lower priority would make it fit, and pick one.
 *
 *   eligible? (preemptionPolicy Never, or victims of an earlier preemption still terminating on
 *      │       the nominated node: no)
 *      ▼
 *   nodes rejected as Unschedulable (UnschedulableAndUnresolvable: eviction cannot help)
 *      │ from a random offset, until enough candidates (10 % of the nodes, at least 100)
 *      ▼
 *   per node: remove every lower-priority pod (node copy + PreFilter state copy), filter again
 *      │        (with nominated pods), then reprieve victims one by one, most important first,
 *      │        PDB-violating ones before the others; those that must go are the victims
 *      ▼
 *   pick: fewest PDB violations, lowest highest-victim priority, smallest priority sum,
 *         fewest victims, latest start of the highest-priority victims, first found
 *
 * Pure: acting on the choice (DisruptionTarget condition, deletion, nomination) is the scheduler's.
 */
import { labelSelectorFromObject, matchLabels, type Pod, type PodDisruptionBudget } from '@nodelet/api';
import type { NodeSnapshot } from './algorithm.js';
import type { FilterPlugin, FilterStatus, PodContext } from './filters.js';
import { formatFitError, NO_PREEMPTION_VICTIMS, PREEMPTION_NOT_HELPFUL } from './fit-error.js';
import { newNodeInfo, type NodeInfo } from './node-info.js';
import { runFiltersWithNominated, type NominatedLookup } from './nominator.js';
import type { PodInfo } from './pod-info.js';

/** Upstream DefaultPreemptionArgs defaults. */
export const MIN_CANDIDATE_NODES_PERCENTAGE = 10;
export const MIN_CANDIDATE_NODES_ABSOLUTE = 100;
export const NOT_ELIGIBLE_NEVER = 'not eligible due to preemptionPolicy=Never.';
export const NOT_ELIGIBLE_TERMINATING = 'not eligible due to a terminating pod on the nominated node.';
export const REASON_PREEMPTION_BY_SCHEDULER = 'PreemptionByScheduler';

export interface Candidate {
  node: string;
  /** Most important first. */
  victims: PodInfo[];
  numPDBViolations: number;
}

export type PreemptionResult =
  | { ok: true; candidate: Candidate }
  /**
   * `message` is the PostFilter's part of FailedScheduling ("preemption: …"); `clearNomination`:
   * preemption cannot help on any node, so a nomination the pod holds is void (upstream clears it).
   */
  | { ok: false; message: string; clearNomination?: boolean };

export interface PreemptionOptions {
  filters: readonly FilterPlugin[];
  pdbs?: readonly PodDisruptionBudget[];
  nominated?: NominatedLookup;
  /** The pod's nomination when newer than `status.nominatedNodeName`. */
  nominatedNode?: string;
  random?: () => number;
  /** Every node of the snapshot, PreFilter-excluded ones too (the message counts them). */
  numAllNodes: number;
}

/** Pods with `preemptionPolicy: Never` wait for room instead of making it. */
export function preemptionPolicyNever(pod: Pod): boolean {
  return pod.spec?.preemptionPolicy === 'Never';
}

/** The pod is going away because the scheduler preempted it (upstream podTerminatingByPreemption). */
export function terminatingByPreemption(pod: Pod): boolean {
  if (!pod.metadata.deletionTimestamp) return false;
  const c = pod.status?.conditions?.find((x) => x.type === 'DisruptionTarget');
  return c?.status === 'True' && c.reason === REASON_PREEMPTION_BY_SCHEDULER;
}

/** Upstream calculateNumCandidates. */
export function numCandidates(numNodes: number): number {
  const n = Math.trunc((numNodes * MIN_CANDIDATE_NODES_PERCENTAGE) / 100);
  return Math.min(Math.max(n, MIN_CANDIDATE_NODES_ABSOLUTE), numNodes);
}

/** `status.startTime` in ms; a pod that has not started counts as starting now (upstream GetPodStartTime). */
function startTime(p: PodInfo, now: number): number {
  const t = p.pod.status?.startTime;
  const ms = t ? Date.parse(t) : NaN;
  return Number.isNaN(ms) ? now : ms;
}

/** Upstream MoreImportantPod: higher priority, then the one that started first. */
function moreImportantFirst(now: number): (a: PodInfo, b: PodInfo) => number {
  return (a, b) => (a.priority !== b.priority ? b.priority - a.priority : startTime(a, now) - startTime(b, now));
}

/**
 * Upstream filterPodsWithPDBViolation: each budget has `status.disruptionsAllowed` evictions to
 * give; a victim it selects (and has not already counted in `disruptedPods`) uses one, and is
 * violating once a budget has none left. Order is kept.
 */
export function splitByPDBViolation(victims: readonly PodInfo[], pdbs: readonly PodDisruptionBudget[]): { violating: PodInfo[]; nonViolating: PodInfo[] } {
  const allowed = pdbs.map((b) => b.status?.disruptionsAllowed ?? 0);
  const selectors = pdbs.map((b) => {
    const sel = b.spec?.selector;
    // A nil or empty selector matches nothing here; an invalid one too.
    if (!sel || (!Object.keys(sel.matchLabels ?? {}).length && !(sel.matchExpressions ?? []).length)) return undefined;
    try {
      return labelSelectorFromObject(sel);
    } catch {
      return undefined;
    }
  });
  const violating: PodInfo[] = [];
  const nonViolating: PodInfo[] = [];
  for (const v of victims) {
    let isViolating = false;
    if (Object.keys(v.labels).length > 0) {
      pdbs.forEach((b, i) => {
        const sel = selectors[i];
        if (isViolating || !sel || b.metadata.namespace !== v.namespace || !matchLabels(sel, v.labels)) return;
        if (b.status?.disruptedPods?.[v.pod.metadata.name ?? ''] !== undefined) return;
        allowed[i]!--;
        if (allowed[i]! < 0) isViolating = true;
      });
    }
    (isViolating ? violating : nonViolating).push(v);
  }
  return { violating, nonViolating };
}

/**
 * Upstream SelectVictimsOnNode: the fewest lower-priority pods whose removal lets the pod fit,
 * or the status saying why none does.
 */
export function selectVictimsOnNode(
  ctx: PodContext,
  node: NodeInfo,
  o: Pick<PreemptionOptions, 'filters' | 'pdbs' | 'nominated'>,
  now = Date.now(),
): { victims: PodInfo[]; numPDBViolations: number } | { status: FilterStatus } {
  const potential = [...node.pods()].filter((p) => p.priority < ctx.info.priority);
  if (potential.length === 0) return { status: { plugin: 'DefaultPreemption', code: 'UnschedulableAndUnresolvable', reasons: [NO_PREEMPTION_VICTIMS] } };
  const copy = newNodeInfo(node.node, [...node.pods()]);
  const c: PodContext = { ...ctx, state: new Map(ctx.state) };
  const move = (p: PodInfo, delta: 1 | -1): void => {
    if (delta < 0) copy.removePod(p.key);
    else copy.addPod(p);
    for (const f of o.filters) f.updatePod?.(c, p, copy, delta);
  };
  for (const p of potential) move(p, -1);
  const fits = (): FilterStatus | undefined => runFiltersWithNominated(c, copy, o.filters, o.nominated);
  const failed = fits();
  if (failed) return { status: failed };
  potential.sort(moreImportantFirst(now));
  const { violating, nonViolating } = splitByPDBViolation(potential, o.pdbs ?? []);
  const victims: PodInfo[] = [];
  let numPDBViolations = 0;
  const reprieve = (p: PodInfo): boolean => {
    move(p, 1);
    if (!fits()) return true;
    move(p, -1);
    victims.push(p);
    return false;
  };
  for (const p of violating) if (!reprieve(p)) numPDBViolations++;
  for (const p of nonViolating) reprieve(p);
  if (violating.length > 0 && nonViolating.length > 0) victims.sort(moreImportantFirst(now));
  return { victims, numPDBViolations };
}

/**
 * Upstream pickOneNodeForPreemption over candidates in the order they were found: each rule
 * keeps the candidates best on it; the first left wins.
 */
export function pickOneNodeForPreemption(candidates: readonly Candidate[], now = Date.now()): Candidate | undefined {
  if (candidates.length === 0) return undefined;
  // Priorities are shifted to be positive as upstream's sum (MaxInt32 + 1), so more victims cost more.
  const shift = 2 ** 31;
  const rules: Array<(c: Candidate) => number> = [
    (c) => -c.numPDBViolations,
    (c) => -(c.victims[0]?.priority ?? -shift),
    (c) => -c.victims.reduce((s, v) => s + v.priority + shift, 0),
    (c) => -c.victims.length,
    (c) => {
      // The earliest start among the highest-priority victims; the latest such start wins.
      const top = c.victims[0]?.priority;
      let earliest = Infinity;
      for (const v of c.victims) if (v.priority === top) earliest = Math.min(earliest, startTime(v, now));
      return earliest;
    },
  ];
  let left = [...candidates];
  for (const score of rules) {
    if (left.length === 1) break;
    const scores = left.map(score);
    const best = Math.max(...scores);
    left = left.filter((_, i) => scores[i] === best);
  }
  return left[0];
}

/**
 * The whole PostFilter. `statuses` are the filter verdicts of the failed cycle; nodes without
 * one (left out by a PreFilter) are not candidates.
 */
export function preempt(ctx: PodContext, snapshot: NodeSnapshot, statuses: ReadonlyMap<string, FilterStatus>, o: PreemptionOptions, now = Date.now()): PreemptionResult {
  const { pod } = ctx;
  if (preemptionPolicyNever(pod)) return { ok: false, message: `preemption: ${NOT_ELIGIBLE_NEVER}` };
  const nominated = o.nominatedNode ?? pod.status?.nominatedNodeName;
  if (nominated && statuses.get(nominated)?.code !== 'UnschedulableAndUnresolvable') {
    const n = snapshot.get(nominated);
    for (const p of n?.pods() ?? []) {
      if (p.priority < ctx.info.priority && terminatingByPreemption(p.pod)) return { ok: false, message: `preemption: ${NOT_ELIGIBLE_TERMINATING}` };
    }
  }
  const potential = snapshot.list.filter((n) => statuses.get(n.name)?.code === 'Unschedulable');
  const dryRun = new Map<string, FilterStatus>();
  const candidates: Candidate[] = [];
  const want = numCandidates(potential.length);
  const offset = potential.length > 0 ? Math.floor((o.random ?? Math.random)() * potential.length) : 0;
  let violatingCandidates = 0;
  for (let i = 0; i < potential.length; i++) {
    const n = potential[(offset + i) % potential.length]!;
    const r = selectVictimsOnNode(ctx, n, o, now);
    if ('status' in r) {
      dryRun.set(n.name, r.status);
      continue;
    }
    candidates.push({ node: n.name, ...r });
    if (r.numPDBViolations > 0) violatingCandidates++;
    // Upstream stops once a candidate without violations is among enough candidates.
    if (candidates.length > violatingCandidates && candidates.length >= want) break;
  }
  const best = pickOneNodeForPreemption(candidates, now);
  if (best) return { ok: true, candidate: best };
  const message = `preemption: ${formatFitError(o.numAllNodes, dryRun.values(), PREEMPTION_NOT_HELPFUL)}`;
  return potential.length === 0 ? { ok: false, message, clearNomination: true } : { ok: false, message };
}
