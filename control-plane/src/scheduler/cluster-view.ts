/**
 * What the cluster-wide plugins (InterPodAffinity, PodTopologySpread, ImageLocality) read
 * besides one NodeInfo: every node, the per-node match counts, the counted pods' affinity terms
 * grouped (all kept by the scheduler cache) and the namespaces' labels (from the scheduler's informer).
 */
import { matchLabels, type ParsedLabelSelector } from '@nodelet/api';
import type { NodeSnapshot } from './algorithm.js';
import type { MatchIndex, PodPredicate, TermIndex } from './match-counts.js';
import type { NodeInfo } from './node-info.js';
import { selectorKey } from './pod-affinity.js';

export interface NamespaceLookup {
  labels(namespace: string): Readonly<Record<string, string>> | undefined;
  /** Every namespace with its labels. */
  all(): Iterable<readonly [string, Readonly<Record<string, string>>]>;
}

export interface ClusterView extends NodeSnapshot {
  readonly matches: MatchIndex;
  readonly terms: TermIndex;
  imageNodeCount(image: string): number;
}

/** Pods in one of `namespaces` whose labels match `selector`, optionally skipping terminating ones. */
export function selectorPredicate(namespaces: ReadonlySet<string>, selector: ParsedLabelSelector, skipTerminating = false): PodPredicate {
  return {
    key: `${[...namespaces].sort().join(',')}|${selectorKey(selector)}|${skipTerminating ? 't' : ''}`,
    matches: (p) => !(skipTerminating && p.terminating) && namespaces.has(p.namespace) && matchLabels(selector, p.labels),
  };
}

/** Pods matching every one of `preds`. */
export function allOf(preds: readonly PodPredicate[]): PodPredicate {
  return { key: preds.map((p) => p.key).join('&'), matches: (p) => preds.every((x) => x.matches(p)) };
}

/**
 * Adds each node's count into its topology domain: `into[value] += count` for the nodes that
 * carry `topologyKey`. Reads only the nodes that have matching pods.
 */
export function sumByDomain(view: NodeSnapshot, perNode: ReadonlyMap<string, number>, topologyKey: string, into: Map<string, number>, weight = 1): void {
  for (const [name, n] of perNode) {
    const v = view.get(name)?.node.metadata.labels?.[topologyKey];
    if (v !== undefined) into.set(v, (into.get(v) ?? 0) + n * weight);
  }
}

export function nodeLabels(n: NodeInfo): Readonly<Record<string, string>> {
  return n.node.metadata.labels ?? {};
}
