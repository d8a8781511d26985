/**
 * ClusterRole aggregation (kube-controller-manager's clusterrole-aggregation controller): a
 * ClusterRole with an `aggregationRule` gets, as its rules, the rules of every other ClusterRole
 * whose labels match one of its selectors — in name order, duplicates dropped. This is how
 * `admin`, `edit` and `view` are filled from the `system:aggregate-to-*` roles, and how a
 * cluster admin extends them (label a ClusterRole `rbac.authorization.k8s.io/aggregate-to-view: "true"`).
 *
 *   any ClusterRole changes ──▶ enqueue every aggregated ClusterRole ──▶ recompute ──▶ update if different
 */
import { CLUSTERROLES, labelSelectorFromObject, matchLabels, type ClusterRole, type PolicyRule } from '@nodelet/api';
import { ControllerBase, type ControllerDeps } from '../controller-base.js';

/** The rules `role` aggregates from `all` (pure; exported for tests). */
export function aggregatedRules(role: ClusterRole, all: readonly ClusterRole[]): PolicyRule[] {
  const selectors = (role.aggregationRule?.clusterRoleSelectors ?? []).map((s) => labelSelectorFromObject(s));
  const sources = all
    .filter((r) => r.metadata.name !== role.metadata.name && selectors.some((sel) => matchLabels(sel, r.metadata.labels)))
    .sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : a.metadata.name! > b.metadata.name! ? 1 : 0));
  const out: PolicyRule[] = [];
  const seen = new Set<string>();
  for (const r of sources) {
    for (const rule of r.rules ?? []) {
      const key = JSON.stringify(rule);
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(rule);
    }
  }
  return out;
}

export class ClusterRoleAggregationController extends ControllerBase {
  readonly #roles;

  constructor(d: ControllerDeps) {
    super(d, { name: 'clusterrole-aggregation', workers: 1 });
    this.#roles = this.informer(CLUSTERROLES);
    // Any role's change may change what an aggregated role gathers.
    const enqueueAggregated = (): void => {
      for (const r of this.#roles.list()) if (r.aggregationRule) this.queue.add(r.metadata.name!);
    };
    this.handle(this.#roles, { onAdd: enqueueAggregated, onUpdate: enqueueAggregated, onDelete: enqueueAggregated });
  }

  async reconcile(name: string, signal: AbortSignal): Promise<void> {
    const role = this.#roles.get(name);
    if (!role?.aggregationRule) return;
    const rules = aggregatedRules(role, this.#roles.list());
    if (JSON.stringify(rules) === JSON.stringify(role.rules ?? [])) return;
    await this.client.update(CLUSTERROLES, { ...role, rules }, { signal });
    this.log.debug({ clusterRole: name, rules: rules.length }, 'Aggregated ClusterRole rules');
  }
}
