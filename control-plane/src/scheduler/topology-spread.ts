/**
 * PodTopologySpread, filter and score, with kube-scheduler's semantics.
 *
 * Constraints: `maxSkew`, `topologyKey`, `whenUnsatisfiable` (DoNotSchedule filters,
 * ScheduleAnyway scores), `labelSelector` (nil selects nothing), `matchLabelKeys` (the pod's
 * values added as `key in (value)`), `minDomains` (fewer eligible domains → global minimum 0),
 * `nodeAffinityPolicy` (Honor by default: nodes the pod's nodeSelector/required node affinity
 * excludes are not counted) and `nodeTaintsPolicy` (Ignore by default; Honor skips nodes with an
 * untolerated NoSchedule/NoExecute taint). Only pods of the pod's namespace count, terminating
 * ones do not.
 *
 * Filter: a node lacking a constraint's topologyKey is UnschedulableAndUnresolvable
 * "node(s) didn't match pod topology spread constraints (missing required label)"; a node where
 * `matching pods in its domain + (1 if the pod matches itself) − global minimum > maxSkew` is
 * Unschedulable "node(s) didn't match pod topology spread constraints".
 *
 * Score: for each node `Σ count(domain) × ln(domains + 2) + (maxSkew − 1)`, then
 * `100 × (max + min − score) / max`; nodes missing a key score 0. A pod without constraints that
 * belongs to a Service, ReplicationController, ReplicaSet or StatefulSet gets the system default
 * constraints (hostname maxSkew 3, zone maxSkew 5, ScheduleAnyway) over the merged selectors.
 *
 * Per-node counts come from the cache's incremental MatchIndex; a cycle walks the node list
 * (for the domains), never the pods.
 */
import { matchLabels, tolerationsTolerate, type LabelRequirement, type ParsedLabelSelector, type Pod, type TopologySpreadConstraint } from '@nodelet/api';
import { nodeLabels, selectorPredicate, type ClusterView } from './cluster-view.js';
import { podMatchesNodeSelectorAndAffinity, type FilterPlugin, type FilterStatus, type PodContext } from './filters.js';
import type { NodeInfo } from './node-info.js';
import { selectorOrNothing } from './pod-affinity.js';
import type { PodInfo } from './pod-info.js';
import { MAX_NODE_SCORE, type ScorePlugin } from './scores.js';

export const POD_TOPOLOGY_SPREAD = 'PodTopologySpread';
export const REASON_SPREAD_MISSING_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)";
export const REASON_SPREAD_NOT_MATCH = "node(s) didn't match pod topology spread constraints";
export const LABEL_HOSTNAME = 'kubernetes.io/hostname';
export const LABEL_ZONE = 'topology.kubernetes.io/zone';
/** Weight of PodTopologySpread in the default profile. */
export const POD_TOPOLOGY_SPREAD_WEIGHT = 2;

/** Upstream's system default constraints, applied to pods without their own. */
export const SYSTEM_DEFAULT_CONSTRAINTS: readonly TopologySpreadConstraint[] = [
  { topologyKey: LABEL_HOSTNAME, whenUnsatisfiable: 'ScheduleAnyway', maxSkew: 3 },
  { topologyKey: LABEL_ZONE, whenUnsatisfiable: 'ScheduleAnyway', maxSkew: 5 },
];

/** The merged selector of the Services, RCs, ReplicaSets and StatefulSets that select a pod (upstream DefaultSelector). */
export interface DefaultSelectorSource {
  selectorFor(pod: PodInfo): ParsedLabelSelector | undefined;
}

interface Constraint {
  maxSkew: number;
  topologyKey: string;
  selector: ParsedLabelSelector | null;
  minDomains: number;
  honorNodeAffinity: boolean;
  honorTaints: boolean;
}

function parseConstraints(pod: Pod, action: 'DoNotSchedule' | 'ScheduleAnyway', list: readonly TopologySpreadConstraint[], selector?: ParsedLabelSelector): Constraint[] {
  const labels = pod.metadata.labels ?? {};
  const out: Constraint[] = [];
  for (const c of list) {
    if (c.whenUnsatisfiable !== action) continue;
    let sel = selector ?? selectorOrNothing(c.labelSelector);
    const extra: LabelRequirement[] = [];
    for (const k of c.matchLabelKeys ?? []) if (labels[k] !== undefined) extra.push({ key: k, operator: 'In', values: [labels[k]] });
    if (extra.length > 0) sel = [...extra, ...(sel ?? [])];
    out.push({
      maxSkew: c.maxSkew,
      topologyKey: c.topologyKey,
      selector: sel,
      minDomains: c.minDomains ?? 1,
      honorNodeAffinity: (c.nodeAffinityPolicy ?? 'Honor') === 'Honor',
      honorTaints: (c.nodeTaintsPolicy ?? 'Ignore') === 'Honor',
    });
  }
  return out;
}

function hasAllKeys(labels: Readonly<Record<string, string>>, cs: readonly Constraint[]): boolean {
  for (const c of cs) if (labels[c.topologyKey] === undefined) return false;
  return true;
}

/** Upstream matchNodeInclusionPolicies. `affinityOk` is computed lazily once per node. */
function included(c: Constraint, pod: Pod, n: NodeInfo, affinityOk: () => boolean): boolean {
  if (c.honorNodeAffinity && !affinityOk()) return false;
  if (c.honorTaints) {
    for (const t of n.node.spec?.taints ?? []) {
      if ((t.effect === 'NoSchedule' || t.effect === 'NoExecute') && !tolerationsTolerate(pod.spec?.tolerations, t)) return false;
    }
  }
  return true;
}

function affinityCheck(pod: Pod, n: NodeInfo): () => boolean {
  const trivial = !pod.spec?.nodeSelector && !pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  let v: boolean | undefined;
  return () => (trivial ? true : (v ??= podMatchesNodeSelectorAndAffinity(pod, n.node)));
}

function perNodeCounts(view: ClusterView, info: PodInfo, c: Constraint): ReadonlyMap<string, number> {
  if (c.selector === null) return new Map();
  return view.matches.counts(selectorPredicate(new Set([info.namespace]), c.selector, true));
}

/** The global minimum of each constraint: 0 when fewer than minDomains domains are eligible. */
function minMatches(constraints: readonly Constraint[], domains: ReadonlyArray<ReadonlyMap<string, number>>): number[] {
  return constraints.map((c, i) => {
    const d = domains[i]!;
    if (d.size < c.minDomains) return 0;
    let min = Infinity;
    for (const v of d.values()) if (v < min) min = v;
    return min;
  });
}

interface FilterState {
  constraints: Constraint[];
  domains: Array<Map<string, number>>;
  minMatch: number[];
}

export function podTopologySpreadFilter(view: ClusterView): FilterPlugin {
  return {
    name: POD_TOPOLOGY_SPREAD,
    preFilter(ctx) {
      const { pod, info } = ctx;
      const constraints = parseConstraints(pod, 'DoNotSchedule', pod.spec?.topologySpreadConstraints ?? []);
      if (constraints.length === 0) return;
      const counts = constraints.map((c) => perNodeCounts(view, info, c));
      const domains = constraints.map(() => new Map<string, number>());
      for (const n of view.list) {
        const labels = nodeLabels(n);
        if (!hasAllKeys(labels, constraints)) continue;
        const affinityOk = affinityCheck(pod, n);
        constraints.forEach((c, i) => {
          if (!included(c, pod, n, affinityOk)) return;
          const v = labels[c.topologyKey]!;
          domains[i]!.set(v, (domains[i]!.get(v) ?? 0) + (counts[i]!.get(n.name) ?? 0));
        });
      }
      const minMatch = minMatches(constraints, domains);
      const s: FilterState = { constraints, domains, minMatch };
      ctx.state.set(POD_TOPOLOGY_SPREAD, s);
    },
    updatePod(ctx, p, node, delta) {
      const s = ctx.state.get(POD_TOPOLOGY_SPREAD) as FilterState | undefined;
      if (!s || p.namespace !== ctx.info.namespace || p.terminating) return;
      const labels = nodeLabels(node);
      if (!hasAllKeys(labels, s.constraints)) return;
      const affinityOk = affinityCheck(ctx.pod, node);
      const domains = s.domains.map((d, i) => {
        const c = s.constraints[i]!;
        if (c.selector === null || !matchLabels(c.selector, p.labels) || !included(c, ctx.pod, node, affinityOk)) return d;
        const v = labels[c.topologyKey]!;
        const copy = new Map(d);
        copy.set(v, (copy.get(v) ?? 0) + delta);
        return copy;
      });
      const next: FilterState = { constraints: s.constraints, domains, minMatch: minMatches(s.constraints, domains) };
      ctx.state.set(POD_TOPOLOGY_SPREAD, next);
    },
    filter(ctx, node) {
      const s = ctx.state.get(POD_TOPOLOGY_SPREAD) as FilterState | undefined;
      if (!s) return undefined;
      const labels = nodeLabels(node);
      for (let i = 0; i < s.constraints.length; i++) {
        const c = s.constraints[i]!;
        const v = labels[c.topologyKey];
        if (v === undefined) return reject('UnschedulableAndUnresolvable', REASON_SPREAD_MISSING_LABEL);
        const self = c.selector !== null && matchLabels(c.selector, ctx.info.labels) ? 1 : 0;
        const skew = (s.domains[i]!.get(v) ?? 0) + self - s.minMatch[i]!;
        if (skew > c.maxSkew) return reject('Unschedulable', REASON_SPREAD_NOT_MATCH);
      }
      return undefined;
    },
  };
}

function reject(code: FilterStatus['code'], reason: string): FilterStatus {
  return { plugin: POD_TOPOLOGY_SPREAD, code, reasons: [reason] };
}

/** The ScheduleAnyway constraints the score uses: the pod's own, else the system defaults when a workload selects it. */
function scoringConstraints(ctx: PodContext, defaults: DefaultSelectorSource): { constraints: Constraint[]; requireAll: boolean } {
  const own = ctx.pod.spec?.topologySpreadConstraints ?? [];
  if (own.length > 0) return { constraints: parseConstraints(ctx.pod, 'ScheduleAnyway', own), requireAll: true };
  const sel = defaults.selectorFor(ctx.info);
  if (!sel || sel.length === 0) return { constraints: [], requireAll: false };
  return { constraints: parseConstraints(ctx.pod, 'ScheduleAnyway', SYSTEM_DEFAULT_CONSTRAINTS, sel), requireAll: false };
}

export function podTopologySpreadScore(view: ClusterView, defaults: DefaultSelectorSource): ScorePlugin {
  return {
    name: POD_TOPOLOGY_SPREAD,
    weight: POD_TOPOLOGY_SPREAD_WEIGHT,
    score(ctx, feasible) {
      const { constraints, requireAll } = scoringConstraints(ctx, defaults);
      if (constraints.length === 0) return undefined;
      const ignored = feasible.map((n) => requireAll && !hasAllKeys(nodeLabels(n), constraints));
      const scored = ignored.filter((x) => !x).length;
      const domains = constraints.map(() => new Map<string, number>());
      feasible.forEach((n, j) => {
        if (ignored[j]) return;
        constraints.forEach((c, i) => {
          if (c.topologyKey !== LABEL_HOSTNAME) domains[i]!.set(nodeLabels(n)[c.topologyKey] ?? '', 0);
        });
      });
      const weights = constraints.map((c, i) => Math.log((c.topologyKey === LABEL_HOSTNAME ? scored : domains[i]!.size) + 2));
      const counts = constraints.map((c) => perNodeCounts(view, ctx.info, c));
      // Domain totals over every node with matching pods (nodes without any add nothing).
      constraints.forEach((c, i) => {
        if (c.topologyKey === LABEL_HOSTNAME) return;
        for (const [name, cnt] of counts[i]!) {
          const n = view.get(name);
          if (!n) continue;
          const labels = nodeLabels(n);
          if (requireAll && !hasAllKeys(labels, constraints)) continue;
          if (!included(c, ctx.pod, n, affinityCheck(ctx.pod, n))) continue;
          const v = labels[c.topologyKey] ?? '';
          const d = domains[i]!;
          if (d.has(v)) d.set(v, d.get(v)! + cnt);
        }
      });
      const raw = feasible.map((n, j) => {
        if (ignored[j]) return 0;
        const labels = nodeLabels(n);
        let s = 0;
        constraints.forEach((c, i) => {
          const v = labels[c.topologyKey];
          if (v === undefined) return;
          const cnt = c.topologyKey === LABEL_HOSTNAME ? (counts[i]!.get(n.name) ?? 0) : (domains[i]!.get(v) ?? 0);
          s += cnt * weights[i]! + (c.maxSkew - 1);
        });
        return Math.round(s);
      });
      let min = Infinity;
      let max = 0;
      raw.forEach((s, j) => {
        if (ignored[j]) return;
        if (s < min) min = s;
        if (s > max) max = s;
      });
      return raw.map((s, j) => (ignored[j] ? 0 : max === 0 ? MAX_NODE_SCORE : Math.trunc((MAX_NODE_SCORE * (max + min - s)) / max)));
    },
  };
}
