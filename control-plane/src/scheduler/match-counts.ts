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
import { selectorKey, type AffinityTerm } from './pod-affinity.js';
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

/** Which list of a pod's affinity terms a term came from. */
export type TermKind = 'requiredAffinity' | 'requiredAntiAffinity' | 'preferredAffinity' | 'preferredAntiAffinity';
const TERM_KINDS: readonly TermKind[] = ['requiredAffinity', 'requiredAntiAffinity', 'preferredAffinity', 'preferredAntiAffinity'];

/** Identical terms of the counted pods (replicas share theirs) and how many pods per node carry each. */
export interface TermGroup {
  readonly term: AffinityTerm;
  readonly perNode: ReadonlyMap<string, number>;
}

/**
 * The counted pods' own (anti-)affinity terms, grouped: what InterPodAffinity checks the
 * incoming pod against (symmetry, and existing pods' preferences in the score). A cycle reads
 * one entry per distinct term instead of every pod that has terms.
 */
export class TermIndex {
  readonly #groups = new Map<TermKind, Map<string, { term: AffinityTerm; perNode: Map<string, number> }>>(TERM_KINDS.map((k) => [k, new Map()]));

  groups(kind: TermKind): IterableIterator<TermGroup> {
    return this.#groups.get(kind)!.values();
  }

  added(p: PodInfo, node: string): void {
    this.#update(p, node, 1);
  }

  removed(p: PodInfo, node: string): void {
    this.#update(p, node, -1);
  }

  #update(p: PodInfo, node: string, d: 1 | -1): void {
    if (!p.affinity) return;
    for (const kind of TERM_KINDS) {
      const m = this.#groups.get(kind)!;
      for (const t of p.affinity[kind]) {
        const key = termKey(t);
        let g = m.get(key);
        if (!g) {
          if (d < 0) continue;
          m.set(key, (g = { term: t, perNode: new Map() }));
        }
        bump(g.perNode, node, d);
        if (g.perNode.size === 0) m.delete(key);
      }
    }
  }
}

function termKey(t: AffinityTerm): string {
  return JSON.stringify([t.topologyKey, t.weight, [...t.namespaces].sort(), selectorKey(t.selector), selectorKey(t.nsSelector)]);
}
