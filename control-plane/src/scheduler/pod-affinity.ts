/**
 * A pod's inter-pod (anti-)affinity terms, parsed once when the pod is seen (upstream
 * `framework.AffinityTerm`): the label selector and namespace selector as requirement lists, the
 * namespaces the term applies to, the topology key, and for preferred terms the weight.
 *
 * Upstream semantics kept here:
 * - a nil `labelSelector` or `namespaceSelector` selects nothing, an empty one everything;
 * - a term with neither `namespaces` nor `namespaceSelector` applies to the pod's own namespace;
 * - `matchLabelKeys` / `mismatchLabelKeys` add `key in (value)` / `key notin (value)` with the
 *   pod's own label value (what kube-apiserver merges into the selector at creation), only for
 *   keys the pod has.
 */
import { labelSelectorFromObject, matchLabels, type LabelRequirement, type LabelSelector, type ParsedLabelSelector, type Pod, type PodAffinity, type PodAffinityTerm } from '@nodelet/api';

export interface AffinityTerm {
  readonly topologyKey: string;
  /** null = the term's selector is nil and matches no pod. */
  readonly selector: ParsedLabelSelector | null;
  readonly namespaces: ReadonlySet<string>;
  /** null = no namespace selector (nothing beyond `namespaces`). */
  readonly nsSelector: ParsedLabelSelector | null;
  /** Weight of a preferred term; 0 for required ones. */
  readonly weight: number;
}

export interface PodAffinityInfo {
  readonly requiredAffinity: readonly AffinityTerm[];
  readonly requiredAntiAffinity: readonly AffinityTerm[];
  readonly preferredAffinity: readonly AffinityTerm[];
  readonly preferredAntiAffinity: readonly AffinityTerm[];
}

/** What a term is matched against: a pod's namespace and labels. */
export interface PodLabels {
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** Parses a label selector where nil means "nothing" (metav1.LabelSelectorAsSelector). */
export function selectorOrNothing(sel: LabelSelector | undefined | null): ParsedLabelSelector | null {
  return sel ? labelSelectorFromObject(sel) : null;
}

function parseTerm(pod: Pod, t: PodAffinityTerm, weight: number): AffinityTerm {
  let selector = selectorOrNothing(t.labelSelector);
  const labels = pod.metadata.labels ?? {};
  const extra: LabelRequirement[] = [];
  for (const k of t.matchLabelKeys ?? []) if (labels[k] !== undefined) extra.push({ key: k, operator: 'In', values: [labels[k]] });
  for (const k of t.mismatchLabelKeys ?? []) if (labels[k] !== undefined) extra.push({ key: k, operator: 'NotIn', values: [labels[k]] });
  if (extra.length > 0 && selector !== null) selector = [...selector, ...extra];
  const nsSelector = selectorOrNothing(t.namespaceSelector);
  const namespaces = new Set(t.namespaces ?? []);
  if (namespaces.size === 0 && nsSelector === null) namespaces.add(pod.metadata.namespace ?? 'default');
  return { topologyKey: t.topologyKey, selector, namespaces, nsSelector, weight };
}

function terms(pod: Pod, a: PodAffinity | undefined): [AffinityTerm[], AffinityTerm[]] {
  const required = (a?.requiredDuringSchedulingIgnoredDuringExecution ?? []).map((t) => parseTerm(pod, t, 0));
  const preferred = (a?.preferredDuringSchedulingIgnoredDuringExecution ?? [])
    .filter((w) => w.weight !== 0)
    .map((w) => parseTerm(pod, w.podAffinityTerm, w.weight));
  return [required, preferred];
}

/** The pod's terms; undefined when it has no pod affinity or anti-affinity at all. Throws on a bad selector. */
export function podAffinityInfo(pod: Pod): PodAffinityInfo | undefined {
  const a = pod.spec?.affinity;
  if (!a?.podAffinity && !a?.podAntiAffinity) return undefined;
  const [requiredAffinity, preferredAffinity] = terms(pod, a.podAffinity);
  const [requiredAntiAffinity, preferredAntiAffinity] = terms(pod, a.podAntiAffinity);
  if (requiredAffinity.length + preferredAffinity.length + requiredAntiAffinity.length + preferredAntiAffinity.length === 0) return undefined;
  return { requiredAffinity, requiredAntiAffinity, preferredAffinity, preferredAntiAffinity };
}

/**
 * Upstream `AffinityTerm.Matches`: the pod is in one of the term's namespaces (or its namespace's
 * labels match the namespace selector) and its labels match the selector.
 */
export function termMatches(t: AffinityTerm, pod: PodLabels, nsLabels: Readonly<Record<string, string>> | undefined): boolean {
  if (t.selector === null) return false;
  const inNamespace = t.namespaces.has(pod.namespace) || (t.nsSelector !== null && matchLabels(t.nsSelector, nsLabels));
  return inNamespace && matchLabels(t.selector, pod.labels);
}

/** A canonical string of a selector, so equal selectors share one set of counts. */
export function selectorKey(sel: ParsedLabelSelector | null): string {
  if (sel === null) return '<nothing>';
  return JSON.stringify([...sel].map((r) => [r.key, r.operator, [...r.values].sort()]).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1)));
}
