/**
 * Score plugins (0..100 per node, higher is better) and their weights:
 * - LeastAllocated (NodeResourcesFit's default strategy, cpu and memory weight 1 each), weight 1;
 * - SelectorSpread by controller ownerReference (fewer pods of the same owner on a node is better),
 *   weight 2, the weight upstream gives its default spreading (PodTopologySpread).
 */
import type { Pod } from '@nodelet/api';
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

export const LEAST_ALLOCATED_WEIGHT = 1;
export const SELECTOR_SPREAD_WEIGHT = 2;

export interface NodeScore {
  name: string;
  score: number;
}

/** Weighted sum of every score plugin for each feasible node. */
export function scoreNodes(pod: Pod, feasible: readonly NodeInfo[]): NodeScore[] {
  const spread = selectorSpreadScores(pod, feasible);
  return feasible.map((n) => ({
    name: n.name,
    score: LEAST_ALLOCATED_WEIGHT * leastAllocatedScore(pod, n) + SELECTOR_SPREAD_WEIGHT * (spread.get(n.name) ?? 0),
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
