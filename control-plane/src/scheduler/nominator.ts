/**
 * Nominated pods (upstream `nominator`): a pending pod whose `status.nominatedNodeName` is set —
 * by our own preemption, or seen on the pod — holds a claim on that node. When another pod is
 * filtered against the node, the nominated pods of equal or higher priority count as if they
 * were already there (upstream RunFilterPluginsWithNominatedPods), so a lower-priority pod
 * cannot take the space a preemption freed.
 */
import { runFilters, type FilterPlugin, type FilterStatus, type PodContext } from './filters.js';
import { newNodeInfo, type NodeInfo } from './node-info.js';
import type { PodInfo } from './pod-info.js';

/** The pods nominated to a node (empty when none). */
export type NominatedLookup = (node: string) => readonly PodInfo[];

const NONE: readonly PodInfo[] = [];

export class Nominator {
  readonly #byNode = new Map<string, Map<string, PodInfo>>();
  readonly #nodeOf = new Map<string, string>();

  /** Records (or moves) the nomination of `pod` to `node`. */
  add(pod: PodInfo, node: string): void {
    this.remove(pod.key);
    let m = this.#byNode.get(node);
    if (!m) this.#byNode.set(node, (m = new Map()));
    m.set(pod.key, pod);
    this.#nodeOf.set(pod.key, node);
  }

  remove(key: string): void {
    const node = this.#nodeOf.get(key);
    if (node === undefined) return;
    this.#nodeOf.delete(key);
    const m = this.#byNode.get(node);
    m?.delete(key);
    if (m?.size === 0) this.#byNode.delete(node);
  }

  nodeOf(key: string): string | undefined {
    return this.#nodeOf.get(key);
  }

  readonly forNode: NominatedLookup = (node) => {
    const m = this.#byNode.get(node);
    return m ? [...m.values()] : NONE;
  };
}

/**
 * Filters `node` for the pod as upstream does with nominated pods: when pods of equal or higher
 * priority (other than the pod itself) are nominated to the node, the filters must pass with
 * them added (a copy of the node and of the PreFilter state) and also without them (affinity
 * to a nominated pod must not be what makes the node fit).
 */
export function runFiltersWithNominated(ctx: PodContext, node: NodeInfo, filters: readonly FilterPlugin[], nominated?: NominatedLookup): FilterStatus | undefined {
  const all = nominated?.(node.name);
  const add = all?.length ? all.filter((p) => p.key !== ctx.info.key && p.priority >= ctx.info.priority && !node.hasPod(p.key)) : NONE;
  if (add.length > 0) {
    const withThem = newNodeInfo(node.node, [...node.pods(), ...add]);
    const c: PodContext = { ...ctx, state: new Map(ctx.state) };
    for (const p of add) for (const f of filters) f.updatePod?.(c, p, withThem, 1);
    const s = runFilters(c, withThem, filters);
    if (s) return s;
  }
  return runFilters(ctx, node, filters);
}
