/**
 * ClusterRole aggregation (kube-controller-manager's clusterrole-aggregation controller): a
 * ClusterRole with an `aggregationRule` gets, as its rules, the rules of every other ClusterRole
 * whose labels match one of its selectors — in name order, duplicates dropped. This is how
 * `admin`, `edit` and `view` are filled from the `system:aggregate-to-*` roles, and how a
 * cluster admin extends them (label a ClusterRole `rbac.authorization.k8s.io/aggregate-to-view: "true"`).
 *
 *   any ClusterRole changes ──▶ enqueue every aggregated ClusterRole ──▶ recompute ──▶ update if different
 */
import { CLUSTERROLES, labelSelectorFromObject, matchLabels, type ApiClient, type ClusterRole, type PolicyRule } from '@nodelet/api';
import type { Clock, Logger } from '@nodelet/base';
import { newQueue, type Controller, type SharedInformers } from '../runtime.js';

export interface ClusterRoleAggregationDeps {
  client: ApiClient;
  informers: SharedInformers;
  clock: Clock;
  logger: Logger;
}

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

export class ClusterRoleAggregationController implements Controller {
  readonly name = 'clusterrole-aggregation';
  readonly queue;
  readonly workers = 1;
  readonly #d: ClusterRoleAggregationDeps;
  readonly #roles;

  constructor(d: ClusterRoleAggregationDeps) {
    this.#d = d;
    this.queue = newQueue(d.clock);
    this.#roles = d.informers.for(CLUSTERROLES);
    const enqueueAggregated = (): void => {
      for (const r of this.#roles.list()) if (r.aggregationRule) this.queue.add(r.metadata.name!);
    };
    this.#roles.on({ onAdd: enqueueAggregated, onUpdate: enqueueAggregated, onDelete: enqueueAggregated });
  }

  async reconcile(name: string, signal: AbortSignal): Promise<void> {
    const role = this.#roles.get(name);
    if (!role?.aggregationRule) return;
    const rules = aggregatedRules(role, this.#roles.list());
    if (JSON.stringify(rules) === JSON.stringify(role.rules ?? [])) return;
    await this.#d.client.update(CLUSTERROLES, { ...role, rules }, { signal });
    this.#d.logger.debug({ clusterRole: name, rules: rules.length }, 'Aggregated ClusterRole rules');
  }
}
