/**
 * Score plugins (0..100 per node, higher is better) and their weights, as kube-scheduler's
 * default profile weighs them:
 * - TaintToleration: fewer untolerated PreferNoSchedule taints, weight 3;
 * - NodeAffinity: sum of matching preferred terms' weights, normalised, weight 2;
 * - SelectorSpread by controller ownerReference (fewer pods of the same owner on a node is better),
 *   weight 2, the weight upstream gives its default spreading (PodTopologySpread);
 * - LeastAllocated (NodeResourcesFit's default strategy, cpu and memory weight 1 each), weight 1;
 * - BalancedAllocation (cpu and memory fractions close to each other), weight 1.
 */
import { tolerationsTolerate, type Pod } from '@nodelet/api';
import { nodeSelectorTermMatches } from './filters.js';
import type { NodeInfo } from './node-info.js';
import { addResources, podRequests } from './resources.js';

export const MAX_NODE_SCORE = 100;

/** `(allocatable - requested) * 100 / allocatable` per resource, averaged; requested includes the pod. */
export function leastAllocatedScore(pod: Pod, info: NodeInfo): number {
  const req = addResources(info.nonZeroRequested, podRequests(pod, { nonZero: true }));
  const one = (requested: number, capacity: number): number => {
    if (capacity === 0 || requested > capacity) return 0;
    return Math.floor(((capacity - requested) * MAX_NODE_SCORE) / capacity);
  };
  const cpu = one(req.milliCPU, info.allocatable.milliCPU);
  const mem = one(req.memory, info.allocatable.memory);
  return Math.floor((cpu + mem) / 2);
}

/** The controller ownerReference uid of a pod, if any. */
export function controllerUid(pod: Pod): string | undefined {
  return pod.metadata.ownerReferences?.find((r) => r.controller)?.uid;
}

/**
 * For each node: `100 * (max - count) / max`, where count is the pods on the node with the same
 * namespace and controller as `pod` (upstream SelectorSpread's normalisation). No owner → all 100.
 */
export function selectorSpreadScores(pod: Pod, nodes: readonly NodeInfo[]): Map<string, number> {
  const owner = controllerUid(pod);
  const out = new Map<string, number>();
  if (!owner) {
    for (const n of nodes) out.set(n.name, MAX_NODE_SCORE);
    return out;
  }
  const ns = pod.metadata.namespace;
  const counts = nodes.map((n) => n.pods.filter((p) => p.metadata.namespace === ns && controllerUid(p) === owner).length);
  const maxCount = Math.max(0, ...counts);
  nodes.forEach((n, i) => {
    const c = counts[i] ?? 0;
    out.set(n.name, maxCount === 0 ? MAX_NODE_SCORE : Math.floor((MAX_NODE_SCORE * (maxCount - c)) / maxCount));
  });
  return out;
}

/** `(1 - |cpuFraction - memFraction| / 2) * 100`: the two-resource standard deviation form. */
export function balancedAllocationScore(pod: Pod, info: NodeInfo): number {
  const req = addResources(info.nonZeroRequested, podRequests(pod, { nonZero: true }));
  const frac = (r: number, c: number): number => (c === 0 ? 1 : Math.min(1, r / c));
  const cpu = frac(req.milliCPU, info.allocatable.milliCPU);
  const mem = frac(req.memory, info.allocatable.memory);
  return Math.floor((1 - Math.abs(cpu - mem) / 2) * MAX_NODE_SCORE);
}

/** Upstream DefaultNormalizeScore: scale to 0..100 by the maximum; `reverse` turns "fewer" into "better". */
function normalize(raw: Map<string, number>, reverse: boolean): Map<string, number> {
  const max = Math.max(0, ...raw.values());
  const out = new Map<string, number>();
  for (const [k, v] of raw) {
    if (max === 0) out.set(k, reverse ? MAX_NODE_SCORE : 0);
    else {
      const s = Math.floor((MAX_NODE_SCORE * v) / max);
      out.set(k, reverse ? MAX_NODE_SCORE - s : s);
    }
  }
  return out;
}

/** Untolerated PreferNoSchedule taints per node, fewer is better. */
export function taintTolerationScores(pod: Pod, nodes: readonly NodeInfo[]): Map<string, number> {
  const tolerations = (pod.spec?.tolerations ?? []).filter((t) => !t.effect || t.effect === 'PreferNoSchedule');
  const raw = new Map<string, number>();
  for (const n of nodes) {
    raw.set(n.name, (n.node.spec?.taints ?? []).filter((t) => t.effect === 'PreferNoSchedule' && !tolerationsTolerate(tolerations, t)).length);
  }
  return normalize(raw, true);
}

/** Sum of the weights of the preferred node-affinity terms each node matches, normalised. */
export function nodeAffinityScores(pod: Pod, nodes: readonly NodeInfo[]): Map<string, number> {
  const terms = pod.spec?.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? [];
  const raw = new Map<string, number>();
  for (const n of nodes) raw.set(n.name, terms.reduce((sum, t) => sum + (t.weight > 0 && nodeSelectorTermMatches(t.preference, n.node) ? t.weight : 0), 0));
  return normalize(raw, false);
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

/** Weighted sum of every score plugin for each feasible node. */
export function scoreNodes(pod: Pod, feasible: readonly NodeInfo[]): NodeScore[] {
  const spread = selectorSpreadScores(pod, feasible);
  const taints = taintTolerationScores(pod, feasible);
  const affinity = nodeAffinityScores(pod, feasible);
  return feasible.map((n) => ({
    name: n.name,
    score:
      TAINT_TOLERATION_WEIGHT * (taints.get(n.name) ?? 0) +
      NODE_AFFINITY_WEIGHT * (affinity.get(n.name) ?? 0) +
      SELECTOR_SPREAD_WEIGHT * (spread.get(n.name) ?? 0) +
      LEAST_ALLOCATED_WEIGHT * leastAllocatedScore(pod, n) +
      BALANCED_ALLOCATION_WEIGHT * balancedAllocationScore(pod, n),
  }));
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
