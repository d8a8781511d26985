/**
 * Filter plugins, in kube-scheduler's default order (NodeUnschedulable, NodeName, TaintToleration,
 * NodeAffinity, NodePorts, NodeResourcesFit). A node is rejected by the first filter that fails;
 * the reasons are the exact strings kube-scheduler 1.32 reports, because users grep for them.
 *
 * `UnschedulableAndUnresolvable` means evicting other pods cannot help (preemption skips the node);
 * `Unschedulable` means it might (resources, ports).
 *
 * Filters run once per node per scheduling cycle, so they read what {@link PodContext} (the pod's
 * side, computed once per cycle) and NodeInfo (the node's side, kept incrementally) precomputed.
 */
import { tolerationsTolerate, type Node, type NodeSelectorRequirement, type NodeSelectorTerm, type Pod, type Taint } from '@nodelet/api';
import type { NodeInfo } from './node-info.js';
import { newPodInfo, type PodInfo } from './pod-info.js';
import type { Resources } from './resources.js';

export type FilterCode = 'Unschedulable' | 'UnschedulableAndUnresolvable';

export interface FilterStatus {
  plugin: string;
  code: FilterCode;
  reasons: string[];
}

/** Per-cycle precomputation shared by the filters and scores (upstream CycleState). */
export interface PodContext {
  pod: Pod;
  info: PodInfo;
  requests: Readonly<Resources>;
  /** `spec.nodeSelector` as entries, so NodeAffinity does not rebuild them per node. */
  nodeSelector: ReadonlyArray<readonly [string, string]>;
  /** What PreFilter/PreScore steps computed for this cycle, by plugin name (upstream CycleState). */
  state: Map<string, unknown>;
}

export function newPodContext(pod: Pod | PodInfo): PodContext {
  const info = 'nonZeroRequests' in pod ? pod : newPodInfo(pod);
  return { pod: info.pod, info, requests: info.requests, nodeSelector: Object.entries(info.pod.spec?.nodeSelector ?? {}), state: new Map() };
}

export interface FilterPlugin {
  name: string;
  /** Once per cycle before any filter: precompute into `ctx.state` (upstream PreFilter). */
  preFilter?(ctx: PodContext): void;
  filter(ctx: PodContext, node: NodeInfo): FilterStatus | undefined;
  /**
   * Upstream PreFilterExtensions: `pod` (bound, nominated or a preemption victim) is added to or
   * removed from `node`, so the PreFilter state must count it or stop counting it. The plugin
   * replaces its entry in `ctx.state` instead of mutating it, so a shallow copy of the state
   * map is a private copy (each preemption candidate node gets one).
   */
  updatePod?(ctx: PodContext, pod: PodInfo, node: NodeInfo, delta: 1 | -1): void;
}

export const REASON_UNSCHEDULABLE = 'node(s) were unschedulable';
export const REASON_NODE_NAME = "node(s) didn't match the requested node name";
export const REASON_NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector";
export const REASON_NODE_PORTS = "node(s) didn't have free ports for the requested pod ports";
export const REASON_TOO_MANY_PODS = 'Too many pods';
export const untoleratedTaintReason = (t: Taint): string => `node(s) had untolerated taint {${t.key}: ${t.value ?? ''}}`;

const TAINT_UNSCHEDULABLE = 'node.kubernetes.io/unschedulable';

function reject(plugin: string, code: FilterCode, ...reasons: string[]): FilterStatus {
  return { plugin, code, reasons };
}

export const nodeUnschedulable: FilterPlugin = {
  name: 'NodeUnschedulable',
  filter({ pod }, { node }) {
    if (!node.spec?.unschedulable) return undefined;
    // A pod that tolerates the cordon taint may still land on a cordoned node (DaemonSets do).
    if (tolerationsTolerate(pod.spec?.tolerations, { key: TAINT_UNSCHEDULABLE, effect: 'NoSchedule' })) return undefined;
    return reject('NodeUnschedulable', 'UnschedulableAndUnresolvable', REASON_UNSCHEDULABLE);
  },
};

export const nodeName: FilterPlugin = {
  name: 'NodeName',
  filter({ pod }, { name }) {
    const want = pod.spec?.nodeName;
    if (!want || want === name) return undefined;
    return reject('NodeName', 'UnschedulableAndUnresolvable', REASON_NODE_NAME);
  },
};

export const taintToleration: FilterPlugin = {
  name: 'TaintToleration',
  filter({ pod }, { node }) {
    for (const taint of node.spec?.taints ?? []) {
      // PreferNoSchedule only affects scoring.
      if (taint.effect !== 'NoSchedule' && taint.effect !== 'NoExecute') continue;
      if (!tolerationsTolerate(pod.spec?.tolerations, taint)) {
        return reject('TaintToleration', 'UnschedulableAndUnresolvable', untoleratedTaintReason(taint));
      }
    }
    return undefined;
  },
};

/** labels.Requirement.Matches for node selector operators (Gt/Lt compare integers). */
export function requirementMatches(r: NodeSelectorRequirement, labels: Record<string, string>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const value = labels[r.key];
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return has && values.includes(value as string);
    case 'NotIn':
      return !has || !values.includes(value as string);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'Gt':
    case 'Lt': {
      if (!has || values.length !== 1) return false;
      const have = parseStrictInt(value as string);
      const bound = parseStrictInt(values[0] as string);
      if (have === undefined || bound === undefined) return false;
      return r.operator === 'Gt' ? have > bound : have < bound;
    }
    default:
      return false;
  }
}

function parseStrictInt(s: string): number | undefined {
  return /^[+-]?\d+$/.test(s) ? Number(s) : undefined;
}

/** One term: all expressions and fields match; an empty term matches nothing (upstream). */
export function nodeSelectorTermMatches(term: NodeSelectorTerm, node: Node): boolean {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false;
  const labels = node.metadata.labels ?? {};
  if (!exprs.every((r) => requirementMatches(r, labels))) return false;
  // Only metadata.name is a supported field (API validation rejects others).
  const fieldSet = { 'metadata.name': node.metadata.name ?? '' };
  return fields.every((r) => r.key === 'metadata.name' && requirementMatches(r, fieldSet));
}

/** nodeSelector AND (any of the required node affinity terms). */
export function podMatchesNodeSelectorAndAffinity(pod: Pod, node: Node): boolean {
  return matchesSelectorAndAffinity(pod, Object.entries(pod.spec?.nodeSelector ?? {}), node);
}

function matchesSelectorAndAffinity(pod: Pod, nodeSelector: ReadonlyArray<readonly [string, string]>, node: Node): boolean {
  const labels = node.metadata.labels ?? {};
  for (const [k, v] of nodeSelector) {
    if (labels[k] !== v) return false;
  }
  const required = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (!required) return true;
  return required.nodeSelectorTerms.some((t) => nodeSelectorTermMatches(t, node));
}

export const nodeAffinity: FilterPlugin = {
  name: 'NodeAffinity',
  filter({ pod, nodeSelector }, { node }) {
    if (matchesSelectorAndAffinity(pod, nodeSelector, node)) return undefined;
    return reject('NodeAffinity', 'UnschedulableAndUnresolvable', REASON_NODE_AFFINITY);
  },
};

export const REASON_AFFINITY_TERMS_CONFLICT = 'pod affinity terms conflict';

/**
 * NodeAffinity's PreFilter: when every required term names nodes through `matchFields
 * metadata.name In [...]` (how the DaemonSet controller pins its pods), only those nodes can
 * fit, so the cycle evaluates them alone instead of every node. Returns the names, `conflict`
 * when the terms' names cannot all hold at once, or undefined (every node is a candidate).
 */
export function nodeAffinityPreFilter(pod: Pod): ReadonlySet<string> | 'conflict' | undefined {
  const terms = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (!terms || terms.length === 0) return undefined;
  let names: Set<string> | undefined;
  for (const t of terms) {
    let termNames: Set<string> | undefined;
    for (const r of t.matchFields ?? []) {
      if (r.key !== 'metadata.name' || r.operator !== 'In') continue;
      // Requirements of one term are ANDed: intersect.
      const s = new Set(r.values ?? []);
      termNames = termNames === undefined ? s : new Set([...termNames].filter((n) => s.has(n)));
    }
    // A term without a name requirement may match any node, and terms are ORed.
    if (termNames === undefined) return undefined;
    names = names === undefined ? termNames : new Set([...names, ...termNames]);
  }
  if (names !== undefined && names.size === 0) return 'conflict';
  return names;
}

export const nodePorts: FilterPlugin = {
  name: 'NodePorts',
  filter({ info }, { usedPorts }) {
    for (const want of info.hostPorts) {
      if (usedPorts.conflicts(want)) return reject('NodePorts', 'Unschedulable', REASON_NODE_PORTS);
    }
    return undefined;
  },
};

export const nodeResourcesFit: FilterPlugin = {
  name: 'NodeResourcesFit',
  filter({ requests }, info) {
    const reasons: string[] = [];
    if (info.podCount + 1 > info.allocatable.pods) reasons.push(REASON_TOO_MANY_PODS);
    const a = info.allocatable;
    const used = info.requested;
    if (requests.milliCPU > 0 && requests.milliCPU > a.milliCPU - used.milliCPU) reasons.push('Insufficient cpu');
    if (requests.memory > 0 && requests.memory > a.memory - used.memory) reasons.push('Insufficient memory');
    if (requests.ephemeralStorage > 0 && requests.ephemeralStorage > a.ephemeralStorage - used.ephemeralStorage) {
      reasons.push('Insufficient ephemeral-storage');
    }
    return reasons.length ? reject('NodeResourcesFit', 'Unschedulable', ...reasons) : undefined;
  },
};

export const DEFAULT_FILTERS: readonly FilterPlugin[] = [
  nodeUnschedulable,
  nodeName,
  taintToleration,
  nodeAffinity,
  nodePorts,
  nodeResourcesFit,
];

/** Runs the filters in order; the first rejection wins, as in kube-scheduler's framework. */
export function runFilters(ctx: PodContext, node: NodeInfo, filters: readonly FilterPlugin[] = DEFAULT_FILTERS): FilterStatus | undefined {
  for (const f of filters) {
    const s = f.filter(ctx, node);
    if (s) return s;
  }
  return undefined;
}
