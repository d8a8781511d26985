/**
 * The selectors of the Services, ReplicaSets and StatefulSets of each namespace, kept from the
 * scheduler's informers, for PodTopologySpread's system default constraints (upstream
 * `helper.DefaultSelector`): a pod's default selector is the Services' selectors that match it,
 * merged, plus the requirements of every ReplicaSet and StatefulSet whose selector matches it.
 * Objects with an empty selector are skipped, as upstream does.
 */
import { labelSelectorFromObject, matchLabels, type LabelRequirement, type ParsedLabelSelector, type ReplicaSet, type Service, type StatefulSet } from '@nodelet/api';
import type { PodInfo } from './pod-info.js';
import type { DefaultSelectorSource } from './topology-spread.js';

type Kind = 'svc' | 'rs' | 'sts';

export class WorkloadSelectors implements DefaultSelectorSource {
  /** namespace → `kind/name` → [kind, selector]. */
  readonly #byNamespace = new Map<string, Map<string, readonly [Kind, ParsedLabelSelector]>>();

  /** A Service, ReplicaSet or StatefulSet was added or changed. */
  set(kind: Kind, obj: Service | ReplicaSet | StatefulSet): void {
    const ns = obj.metadata.namespace ?? 'default';
    const key = `${kind}/${obj.metadata.name ?? ''}`;
    let sel: ParsedLabelSelector = [];
    try {
      if (kind === 'svc') sel = Object.entries((obj as Service).spec?.selector ?? {}).map(([k, v]): LabelRequirement => ({ key: k, operator: 'Equals', values: [v] }));
      else sel = labelSelectorFromObject((obj as ReplicaSet | StatefulSet).spec?.selector);
    } catch {
      sel = []; // an invalid selector selects no pod here (upstream skips objects whose selector fails to parse)
    }
    let m = this.#byNamespace.get(ns);
    if (sel.length === 0) {
      m?.delete(key);
      return;
    }
    if (!m) this.#byNamespace.set(ns, (m = new Map()));
    m.set(key, [kind, sel]);
  }

  delete(kind: Kind, obj: Service | ReplicaSet | StatefulSet): void {
    const ns = obj.metadata.namespace ?? 'default';
    const m = this.#byNamespace.get(ns);
    m?.delete(`${kind}/${obj.metadata.name ?? ''}`);
    if (m?.size === 0) this.#byNamespace.delete(ns);
  }

  selectorFor(pod: PodInfo): ParsedLabelSelector | undefined {
    const m = this.#byNamespace.get(pod.namespace);
    if (!m) return undefined;
    const svcLabels = new Map<string, string>();
    const rest: LabelRequirement[] = [];
    for (const [kind, sel] of m.values()) {
      if (!matchLabels(sel, pod.labels)) continue;
      if (kind === 'svc') for (const r of sel) svcLabels.set(r.key, r.values[0]!);
      else rest.push(...sel);
    }
    const out: LabelRequirement[] = [...svcLabels].map(([key, v]) => ({ key, operator: 'Equals', values: [v] }));
    out.push(...rest);
    return out.length > 0 ? out : undefined;
  }
}
