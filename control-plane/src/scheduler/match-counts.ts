/**
 * Per-node counts of the pods that match a predicate (a label selector over some namespaces),
 * kept up to date as pods come and go, so InterPodAffinity and PodTopologySpread never walk
 * every pod in the cluster for each scheduling attempt.
 *
 * kube-scheduler's PreFilter walks all pods of all nodes (in parallel) on every attempt. Here a
 * predicate is registered the first time a pod asks for it (one walk over the cache's pods);
 * from then on every pod added to or removed from the cache updates the counts of each
 * registered predicate. Replicas of one workload share their selector, so the walk happens once
 * per workload. At most {@link MAX_PREDICATES} are kept; the least recently used is dropped.
 *
 *   pod added/removed (cache) ──▶ for each predicate: matches? ──▶ perNode[node] ± 1
 *   scheduling cycle ──counts(pred)──▶ existing: perNode  │  new: one walk, then kept
 */
import type { PodInfo } from './pod-info.js';

/** Upper bound on the predicates tracked at once (each costs one test per pod event). */
export const MAX_PREDICATES = 256;

export interface PodPredicate {
  /** Equal keys mean equal predicates. */
  readonly key: string;
  matches(p: PodInfo): boolean;
}

interface Entry {
  readonly pred: PodPredicate;
  readonly perNode: Map<string, number>;
}

export class MatchIndex {
  /** Insertion order is recency order: a hit re-inserts, eviction takes the first. */
  readonly #entries = new Map<string, Entry>();
  readonly #allPods: () => Iterable<readonly [PodInfo, string]>;
  readonly #max: number;

  /** `allPods` lists every counted pod with its node, for the first walk of a new predicate. */
  constructor(allPods: () => Iterable<readonly [PodInfo, string]>, max = MAX_PREDICATES) {
    this.#allPods = allPods;
    this.#max = max;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Node name → number of pods matching `pred` there (nodes without any are absent). Live: read within the cycle. */
  counts(pred: PodPredicate): ReadonlyMap<string, number> {
    let e = this.#entries.get(pred.key);
    if (e) {
      this.#entries.delete(pred.key);
      this.#entries.set(pred.key, e);
      return e.perNode;
    }
    e = { pred, perNode: new Map() };
    for (const [p, node] of this.#allPods()) if (pred.matches(p)) bump(e.perNode, node, 1);
    this.#entries.set(pred.key, e);
    if (this.#entries.size > this.#max) this.#entries.delete(this.#entries.keys().next().value!);
    return e.perNode;
  }

  added(p: PodInfo, node: string): void {
    for (const e of this.#entries.values()) if (e.pred.matches(p)) bump(e.perNode, node, 1);
  }

  removed(p: PodInfo, node: string): void {
    for (const e of this.#entries.values()) if (e.pred.matches(p)) bump(e.perNode, node, -1);
  }
}

function bump(m: Map<string, number>, node: string, d: number): void {
  const n = (m.get(node) ?? 0) + d;
  if (n > 0) m.set(node, n);
  else m.delete(node);
}
