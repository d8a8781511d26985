/**
 * Score plugins (0..100 per node, higher is better) and their weights, as kube-scheduler's
 * default profile weighs them:
 * - TaintToleration: fewer untolerated PreferNoSchedule taints, weight 3;
 * - NodeAffinity: sum of matching preferred terms' weights, normalised, weight 2;
 * - SelectorSpread by controller ownerReference (fewer pods of the same owner on a node is better),
 *   weight 2, the weight upstream gives its default spreading (PodTopologySpread);
 * - LeastAllocated (NodeResourcesFit's default strategy, cpu and memory weight 1 each), weight 1;
 * - BalancedAllocation (cpu and memory fractions close to each other), weight 1.
 *
 * {@link scoreNodes} runs once per cycle over the feasible nodes: it reads the pod's side from
 * the PodContext and the node's sums from NodeInfo, and keeps per-plugin scores in arrays
 * indexed like `feasible`. The Map-returning helpers are the same computations, for tests.
 */
import { tolerationsTolerate, type Pod, type PreferredSchedulingTerm, type Toleration } from '@nodelet/api';
import { newPodContext, nodeSelectorTermMatches, type PodContext } from './filters.js';
import type { NodeInfo } from './node-info.js';
import type { Resources } from './resources.js';

export { controllerUid } from './pod-info.js';

export const MAX_NODE_SCORE = 100;

function leastAllocatedPart(requested: number, capacity: number): number {
  if (capacity === 0 || requested > capacity) return 0;
  return Math.floor(((capacity - requested) * MAX_NODE_SCORE) / capacity);
}

/** `(allocatable - requested) * 100 / allocatable` per resource, averaged; requested includes the pod. */
function leastAllocated(pod: Readonly<Resources>, info: NodeInfo): number {
  const cpu = leastAllocatedPart(info.nonZeroRequested.milliCPU + pod.milliCPU, info.allocatable.milliCPU);
  const mem = leastAllocatedPart(info.nonZeroRequested.memory + pod.memory, info.allocatable.memory);
  return Math.floor((cpu + mem) / 2);
}

function fraction(requested: number, capacity: number): number {
  return capacity === 0 ? 1 : Math.min(1, requested / capacity);
}

/** `(1 - |cpuFraction - memFraction| / 2) * 100`: the two-resource standard deviation form. */
function balancedAllocation(pod: Readonly<Resources>, info: NodeInfo): number {
  const cpu = fraction(info.nonZeroRequested.milliCPU + pod.milliCPU, info.allocatable.milliCPU);
  const mem = fraction(info.nonZeroRequested.memory + pod.memory, info.allocatable.memory);
  return Math.floor((1 - Math.abs(cpu - mem) / 2) * MAX_NODE_SCORE);
}

export function leastAllocatedScore(pod: Pod, info: NodeInfo): number {
  return leastAllocated(newPodContext(pod).info.nonZeroRequests, info);
}

export function balancedAllocationScore(pod: Pod, info: NodeInfo): number {
  return balancedAllocation(newPodContext(pod).info.nonZeroRequests, info);
}

/**
 * For each node: `100 * (max - count) / max`, where count is the pods on the node with the same
 * namespace and controller as the pod (upstream SelectorSpread's normalisation). No owner → all 100.
 */
function selectorSpread(ownerKey: string | undefined, nodes: readonly NodeInfo[]): number[] {
  if (ownerKey === undefined) return nodes.map(() => MAX_NODE_SCORE);
  const counts = nodes.map((n) => n.ownerCount(ownerKey));
  let maxCount = 0;
  for (const c of counts) if (c > maxCount) maxCount = c;
  return counts.map((c) => (maxCount === 0 ? MAX_NODE_SCORE : Math.floor((MAX_NODE_SCORE * (maxCount - c)) / maxCount)));
}

/** Upstream DefaultNormalizeScore: scale to 0..100 by the maximum; `reverse` turns "fewer" into "better". */
function normalize(raw: number[], reverse: boolean): number[] {
  let max = 0;
  for (const v of raw) if (v > max) max = v;
  for (let i = 0; i < raw.length; i++) {
    if (max === 0) raw[i] = reverse ? MAX_NODE_SCORE : 0;
    else {
      const s = Math.floor((MAX_NODE_SCORE * raw[i]!) / max);
      raw[i] = reverse ? MAX_NODE_SCORE - s : s;
    }
  }
  return raw;
}

/** The pod's tolerations that matter for scoring (PreferNoSchedule or any effect). */
function preferNoScheduleTolerations(pod: Pod): Toleration[] {
  return (pod.spec?.tolerations ?? []).filter((t) => !t.effect || t.effect === 'PreferNoSchedule');
}

function taintToleration(tolerations: readonly Toleration[], nodes: readonly NodeInfo[]): number[] {
  const raw = nodes.map((n) => {
    let untolerated = 0;
    for (const t of n.node.spec?.taints ?? []) if (t.effect === 'PreferNoSchedule' && !tolerationsTolerate(tolerations, t)) untolerated++;
    return untolerated;
  });
  return normalize(raw, true);
}

function nodeAffinity(terms: readonly PreferredSchedulingTerm[], nodes: readonly NodeInfo[]): number[] {
  if (terms.length === 0) return nodes.map(() => 0);
  const raw = nodes.map((n) => {
    let sum = 0;
    for (const t of terms) if (t.weight > 0 && nodeSelectorTermMatches(t.preference, n.node)) sum += t.weight;
    return sum;
  });
  return normalize(raw, false);
}

const byName = (nodes: readonly NodeInfo[], scores: number[]): Map<string, number> => new Map(nodes.map((n, i) => [n.name, scores[i]!]));

export function selectorSpreadScores(pod: Pod, nodes: readonly NodeInfo[]): Map<string, number> {
  return byName(nodes, selectorSpread(newPodContext(pod).info.ownerKey, nodes));
}

/** Untolerated PreferNoSchedule taints per node, fewer is better. */
export function taintTolerationScores(pod: Pod, nodes: readonly NodeInfo[]): Map<string, number> {
  return byName(nodes, taintToleration(preferNoScheduleTolerations(pod), nodes));
}

/** Sum of the weights of the preferred node-affinity terms each node matches, normalised. */
export function nodeAffinityScores(pod: Pod, nodes: readonly NodeInfo[]): Map<string, number> {
  return byName(nodes, nodeAffinity(pod.spec?.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? [], nodes));
}

export const TAINT_TOLERATION_WEIGHT = 3;
export const NODE_AFFINITY_WEIGHT = 2;
export const SELECTOR_SPREAD_WEIGHT = 2;
export const LEAST_ALLOCATED_WEIGHT = 1;
export const BALANCED_ALLOCATION_WEIGHT = 1;

export interface NodeScore {
  name: string;
  score: number;
}

/**
 * A score plugin that needs more than the pod and the NodeInfo (the cluster-wide counts of
 * InterPodAffinity and PodTopologySpread, ImageLocality's image spread): normalised 0..100 scores
 * indexed like `feasible`, or undefined when it has nothing to say for this pod (upstream Skip).
 */
export interface ScorePlugin {
  name: string;
  weight: number;
  score(ctx: PodContext, feasible: readonly NodeInfo[]): number[] | undefined;
}

/** Weighted sum of every score plugin for each feasible node. */
export function scoreNodes(ctx: PodContext | Pod, feasible: readonly NodeInfo[], plugins: readonly ScorePlugin[] = []): NodeScore[] {
  const c = 'info' in ctx ? ctx : newPodContext(ctx);
  const extra: Array<[number, number[]]> = [];
  for (const p of plugins) {
    const s = p.score(c, feasible);
    if (s) extra.push([p.weight, s]);
  }
  // PodTopologySpread's default constraints supersede the owner spread when the scheduler runs it.
  const spread = plugins.some((p) => p.name === 'PodTopologySpread') ? feasible.map(() => 0) : selectorSpread(c.info.ownerKey, feasible);
  const taints = taintToleration(preferNoScheduleTolerations(c.pod), feasible);
  const affinity = nodeAffinity(c.pod.spec?.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? [], feasible);
  const req = c.info.nonZeroRequests;
  const out: NodeScore[] = new Array(feasible.length);
  for (let i = 0; i < feasible.length; i++) {
    const n = feasible[i]!;
    out[i] = {
      name: n.name,
      score:
        TAINT_TOLERATION_WEIGHT * taints[i]! +
        NODE_AFFINITY_WEIGHT * affinity[i]! +
        SELECTOR_SPREAD_WEIGHT * spread[i]! +
        LEAST_ALLOCATED_WEIGHT * leastAllocated(req, n) +
        BALANCED_ALLOCATION_WEIGHT * balancedAllocation(req, n),
    };
    for (const [w, s] of extra) out[i]!.score += w * s[i]!;
  }
  return out;
}

/**
 * The highest score; ties broken uniformly at random by reservoir sampling, as upstream's
 * `selectHost`, so equal nodes share the load. `random` is injected for tests.
 */
export function selectHost(scores: readonly NodeScore[], random: () => number): string | undefined {
  let best: NodeScore | undefined;
  let ties = 0;
  for (const s of scores) {
    if (!best || s.score > best.score) {
      best = s;
      ties = 1;
    } else if (s.score === best.score) {
      ties++;
      if (random() * ties < 1) best = s;
    }
  }
  return best?.name;
}
