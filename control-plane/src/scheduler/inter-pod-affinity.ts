/**
 * InterPodAffinity, filter and score, with kube-scheduler's semantics:
 *
 * Filter (PreFilter counts per topology pair `key=value`, then per node):
 * 1. required affinity: the node must carry every term's topologyKey, and its domain must hold a
 *    pod matching ALL terms — unless no pod anywhere matches and the pod matches its own terms
 *    (the first replica of a self-affine group may land): UnschedulableAndUnresolvable
 *    "node(s) didn't match pod affinity rules";
 * 2. required anti-affinity: no pod matching a term in the node's domain of that term:
 *    Unschedulable "node(s) didn't match pod anti-affinity rules";
 * 3. symmetry: no existing pod whose required anti-affinity term matches this pod in the node's
 *    domain: Unschedulable "node(s) didn't satisfy existing pods anti-affinity rules".
 *
 * Score: per topology pair, + weight × matching pods for the pod's preferred affinity terms,
 * − for its preferred anti-affinity terms; existing pods add their preferred (anti-)affinity
 * weights when their term matches this pod, and 1 (hardPodAffinityWeight) per required affinity
 * term; a node scores the sum over its labels, normalised min..max to 0..100.
 *
 * The pod's own terms are counted through the cache's incremental MatchIndex, the existing pods'
 * terms read from its TermIndex (one entry per distinct term, with per-node counts): no walk of
 * the pods in either case.
 */
import { matchLabels } from '@nodelet/api';
import { allOf, nodeLabels, selectorPredicate, sumByDomain, type ClusterView, type NamespaceLookup } from './cluster-view.js';
import type { FilterPlugin, FilterStatus, PodContext } from './filters.js';
import type { PodPredicate, TermKind } from './match-counts.js';
import type { NodeInfo } from './node-info.js';
import { termMatches, type AffinityTerm } from './pod-affinity.js';
import { MAX_NODE_SCORE, type ScorePlugin } from './scores.js';

export const INTER_POD_AFFINITY = 'InterPodAffinity';
export const REASON_AFFINITY_RULES = "node(s) didn't match pod affinity rules";
export const REASON_ANTI_AFFINITY_RULES = "node(s) didn't match pod anti-affinity rules";
export const REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules";
/** Upstream InterPodAffinityArgs.hardPodAffinityWeight default. */
export const HARD_POD_AFFINITY_WEIGHT = 1;
/** Weight of InterPodAffinity in the default profile. */
export const INTER_POD_AFFINITY_WEIGHT = 2;

/** topologyKey → value → count. */
type PairCounts = Map<string, Map<string, number>>;

interface FilterState {
  affinity: readonly AffinityTerm[];
  /** Pods matching every required affinity term (undefined without such terms). */
  affinityAll: PodPredicate | undefined;
  affinityCounts: PairCounts;
  affinityEmpty: boolean;
  selfMatchesAll: boolean;
  anti: readonly AffinityTerm[];
  antiPreds: readonly PodPredicate[];
  antiCounts: PairCounts;
  existingAnti: PairCounts;
}

const EMPTY_STATE: FilterState = {
  affinity: [], affinityAll: undefined, affinityCounts: new Map(), affinityEmpty: true, selfMatchesAll: false, anti: [], antiPreds: [], antiCounts: new Map(), existingAnti: new Map(),
};

/** A copy of `m` with `delta` added at (key, node's value of key); zero counts are dropped, as upstream's pair counts. */
function withDelta(m: PairCounts, keys: Iterable<string>, labels: Readonly<Record<string, string>>, delta: number): PairCounts {
  const out: PairCounts = new Map([...m].map(([k, d]) => [k, new Map(d)]));
  for (const key of keys) {
    const v = labels[key];
    if (v === undefined) continue;
    const d = domainMap(out, key);
    const n = (d.get(v) ?? 0) + delta;
    if (n > 0) d.set(v, n);
    else d.delete(v);
  }
  return out;
}

function domainMap(m: PairCounts, key: string): Map<string, number> {
  let d = m.get(key);
  if (!d) m.set(key, (d = new Map()));
  return d;
}

function pairCount(m: PairCounts, key: string, labels: Readonly<Record<string, string>>): number {
  const v = labels[key];
  return v === undefined ? 0 : (m.get(key)?.get(v) ?? 0);
}

/**
 * Upstream mergeAffinityTermNamespacesIfNotEmpty: the pod's own term with a namespace selector
 * applies to the listed namespaces plus every namespace whose labels match.
 */
function termPredicate(t: AffinityTerm, namespaces: NamespaceLookup): PodPredicate {
  if (t.selector === null) return { key: '<nothing>', matches: () => false };
  let ns = t.namespaces;
  if (t.nsSelector !== null) {
    const all = new Set(ns);
    for (const [name, labels] of namespaces.all()) if (matchLabels(t.nsSelector, labels)) all.add(name);
    ns = all;
  }
  return selectorPredicate(ns, t.selector);
}

export function interPodAffinityFilter(view: ClusterView, namespaces: NamespaceLookup): FilterPlugin {
  return {
    name: INTER_POD_AFFINITY,
    preFilter(ctx) {
      const { info } = ctx;
      const nsLabels = namespaces.labels(info.namespace);
      const existingAnti: PairCounts = new Map();
      for (const { term, perNode } of view.terms.groups('requiredAntiAffinity')) {
        if (termMatches(term, info, nsLabels)) sumByDomain(view, perNode, term.topologyKey, domainMap(existingAnti, term.topologyKey));
      }
      const affinity = info.affinity?.requiredAffinity ?? [];
      const anti = info.affinity?.requiredAntiAffinity ?? [];
      if (affinity.length === 0 && anti.length === 0 && existingAnti.size === 0) return;
      const affinityCounts: PairCounts = new Map();
      let affinityEmpty = true;
      let selfMatchesAll = false;
      let affinityAll: PodPredicate | undefined;
      if (affinity.length > 0) {
        const preds = affinity.map((t) => termPredicate(t, namespaces));
        const all = (affinityAll = allOf(preds));
        const perNode = view.matches.counts(all);
        for (const t of affinity) sumByDomain(view, perNode, t.topologyKey, domainMap(affinityCounts, t.topologyKey));
        // Matching pods on nodes without the topology keys do not count (upstream's counts hold pairs only).
        affinityEmpty = [...affinityCounts.values()].every((d) => d.size === 0);
        selfMatchesAll = all.matches(info);
      }
      const antiCounts: PairCounts = new Map();
      const antiPreds = anti.map((t) => termPredicate(t, namespaces));
      anti.forEach((t, i) => sumByDomain(view, view.matches.counts(antiPreds[i]!), t.topologyKey, domainMap(antiCounts, t.topologyKey)));
      const s: FilterState = { affinity, affinityAll, affinityCounts, affinityEmpty, selfMatchesAll, anti, antiPreds, antiCounts, existingAnti };
      ctx.state.set(INTER_POD_AFFINITY, s);
    },
    updatePod(ctx, p, node, delta) {
      const cur = ctx.state.get(INTER_POD_AFFINITY) as FilterState | undefined;
      const labels = nodeLabels(node);
      const nsLabels = namespaces.labels(ctx.info.namespace);
      const theirAnti = (p.affinity?.requiredAntiAffinity ?? []).filter((t) => termMatches(t, ctx.info, nsLabels));
      if (!cur && theirAnti.length === 0) return;
      const s = cur ?? EMPTY_STATE;
      const next: FilterState = { ...s };
      if (s.affinityAll?.matches(p)) {
        next.affinityCounts = withDelta(s.affinityCounts, s.affinity.map((t) => t.topologyKey), labels, delta);
        next.affinityEmpty = [...next.affinityCounts.values()].every((d) => d.size === 0);
      }
      const antiKeys = s.anti.filter((_, i) => s.antiPreds[i]!.matches(p)).map((t) => t.topologyKey);
      if (antiKeys.length > 0) next.antiCounts = withDelta(s.antiCounts, antiKeys, labels, delta);
      if (theirAnti.length > 0) next.existingAnti = withDelta(s.existingAnti, theirAnti.map((t) => t.topologyKey), labels, delta);
      ctx.state.set(INTER_POD_AFFINITY, next);
    },
    filter(ctx, node) {
      const s = ctx.state.get(INTER_POD_AFFINITY) as FilterState | undefined;
      if (!s) return undefined;
      const labels = nodeLabels(node);
      if (s.affinity.length > 0) {
        let podsExist = true;
        for (const t of s.affinity) {
          if (labels[t.topologyKey] === undefined) return reject('UnschedulableAndUnresolvable', REASON_AFFINITY_RULES);
          if (pairCount(s.affinityCounts, t.topologyKey, labels) <= 0) podsExist = false;
        }
        // The first pod of a group with affinity to itself may land anywhere the rest allows.
        if (!podsExist && !(s.affinityEmpty && s.selfMatchesAll)) return reject('UnschedulableAndUnresolvable', REASON_AFFINITY_RULES);
      }
      for (const t of s.anti) {
        if (pairCount(s.antiCounts, t.topologyKey, labels) > 0) return reject('Unschedulable', REASON_ANTI_AFFINITY_RULES);
      }
      for (const key of s.existingAnti.keys()) {
        if (pairCount(s.existingAnti, key, labels) > 0) return reject('Unschedulable', REASON_EXISTING_ANTI_AFFINITY);
      }
      return undefined;
    },
  };
}

function reject(code: FilterStatus['code'], reason: string): FilterStatus {
  return { plugin: INTER_POD_AFFINITY, code, reasons: [reason] };
}

/** The raw (unnormalised) topology scores of the pod; empty when nothing applies. */
export function interPodAffinityTopologyScores(ctx: PodContext, view: ClusterView, namespaces: NamespaceLookup): PairCounts {
  const { info } = ctx;
  const scores: PairCounts = new Map();
  const own: Array<[AffinityTerm, number]> = [
    ...(info.affinity?.preferredAffinity ?? []).map((t): [AffinityTerm, number] => [t, t.weight]),
    ...(info.affinity?.preferredAntiAffinity ?? []).map((t): [AffinityTerm, number] => [t, -t.weight]),
  ];
  for (const [t, w] of own) sumByDomain(view, view.matches.counts(termPredicate(t, namespaces)), t.topologyKey, domainMap(scores, t.topologyKey), w);
  const nsLabels = namespaces.labels(info.namespace);
  // Existing pods' terms, one group per distinct term: each pod carrying it adds its weight.
  const existing: Array<[TermKind, (t: AffinityTerm) => number]> = [
    ['requiredAffinity', () => HARD_POD_AFFINITY_WEIGHT],
    ['preferredAffinity', (t) => t.weight],
    ['preferredAntiAffinity', (t) => -t.weight],
  ];
  for (const [kind, weight] of existing) {
    for (const { term, perNode } of view.terms.groups(kind)) {
      if (termMatches(term, info, nsLabels)) sumByDomain(view, perNode, term.topologyKey, domainMap(scores, term.topologyKey), weight(term));
    }
  }
  return scores;
}

export function interPodAffinityScore(view: ClusterView, namespaces: NamespaceLookup): ScorePlugin {
  return {
    name: INTER_POD_AFFINITY,
    weight: INTER_POD_AFFINITY_WEIGHT,
    score(ctx, feasible) {
      const topo = interPodAffinityTopologyScores(ctx, view, namespaces);
      if (topo.size === 0) return undefined;
      const raw = feasible.map((n: NodeInfo) => {
        const labels = nodeLabels(n);
        let s = 0;
        for (const key of topo.keys()) s += pairCount(topo, key, labels);
        return s;
      });
      let min = Infinity;
      let max = -Infinity;
      for (const s of raw) {
        if (s < min) min = s;
        if (s > max) max = s;
      }
      const diff = max - min;
      return raw.map((s) => (diff > 0 ? Math.trunc((MAX_NODE_SCORE * (s - min)) / diff) : 0));
    },
  };
}
