/**
 * The resource quota controller (upstream pkg/controller/resourcequota): keeps each
 * ResourceQuota's status — `hard` as the spec says, `used` counted from the namespace's objects
 * with the same evaluator admission charges with (@nodelet/api quota/). It recounts a quota when
 * it is created or its limits change (a new quota has no status, and admission refuses what it
 * would charge until it has one), when a counted object goes away or a pod ends (admission charges but never gives
 * back), and every {@link QUOTA_RESYNC_MS} (what it has no informer for: `count/<kind>` of other
 * kinds, a write that failed after admission charged it). The status write is a compare-and-swap
 * on the quota's resourceVersion: a conflict with an admission charge recounts.
 * Acts as kube-system/resourcequota-controller.
 */
import {
  CONFIGMAPS,
  countedKinds,
  equalLists,
  findResourceByPlural,
  maskList,
  PERSISTENTVOLUMECLAIMS,
  PODS,
  podCountsForQuota,
  RESOURCEQUOTAS,
  SECRETS,
  SERVICES,
  sumUsage,
  addLists,
  zeroList,
  type KubeObject,
  type ResourceList,
  type ResourceQuota,
} from '@nodelet/api';
import { hasCode } from '@nodelet/base';
import { ControllerBase, type ControllerDeps } from '../controller-base.js';
import { keyOf, splitKey } from '../util/pods.js';

/** How often every quota is recounted (upstream --resource-quota-sync-period, 5 min). */
export const QUOTA_RESYNC_MS = 5 * 60_000;

/** The status a quota should have given the objects `list(group, plural)` returns. */
export async function computeQuotaStatus(
  q: ResourceQuota,
  list: (group: string, plural: string) => Promise<Array<Record<string, unknown>> | undefined>,
  nowMs: number,
): Promise<{ hard: ResourceList; used: ResourceList }> {
  const hard = { ...(q.spec?.hard ?? {}) } as ResourceList;
  const names = Object.keys(hard);
  // Count with status.hard = spec.hard, the limits this status will enforce.
  const counting: ResourceQuota = { ...q, status: { ...q.status, hard } };
  let used = zeroList(names);
  for (const { group, plural } of countedKinds(names)) {
    const items = await list(group, plural);
    if (items) used = addLists(used, sumUsage(group, plural, items, counting, names, nowMs));
  }
  return { hard, used: maskList(used, names) };
}

export class ResourceQuotaController extends ControllerBase {
  readonly #quotas;

  constructor(d: ControllerDeps) {
    super(d, { name: 'resourcequota' });
    this.#quotas = this.watch(RESOURCEQUOTAS, keyOf, ['add']);
    // Not on every update: admission's charges are updates too, and a recount started between a
    // charge and the create it charged for would give the slot back (upstream recounts only when
    // the limits changed).
    this.handle(this.#quotas, {
      onUpdate: (old, cur) => {
        if (!equalLists(old.spec?.hard ?? {}, cur.spec?.hard ?? {}) || !equalLists(cur.spec?.hard ?? {}, cur.status?.hard ?? {})) this.enqueue(keyOf(cur));
      },
    });
    const recountNamespace = (o: KubeObject): void => {
      for (const q of this.#quotas.list()) if (q.metadata.namespace === o.metadata.namespace) this.enqueue(keyOf(q));
    };
    for (const r of [SERVICES, PERSISTENTVOLUMECLAIMS, CONFIGMAPS, SECRETS, RESOURCEQUOTAS]) this.handle(this.informer(r as typeof SERVICES), { onDelete: recountNamespace });
    this.handle(this.informer(PODS), {
      onDelete: recountNamespace,
      // A pod that ends stops using compute and `pods`.
      onUpdate: (old, pod) => {
        const now = this.clock.now();
        if (podCountsForQuota(old as never, now) && !podCountsForQuota(pod as never, now)) recountNamespace(pod);
      },
    });
    this.every(QUOTA_RESYNC_MS, () => this.#quotas.list().map(keyOf));
  }

  async reconcile(key: string, signal: AbortSignal): Promise<void> {
    // The cached quota, as upstream's lister: its resourceVersion guards the status write, so a
    // charge admission made since (or a stale cache) is a conflict, and the key is counted again.
    const q = this.#quotas.get(key);
    if (!q) return;
    const { namespace } = splitKey(key);
    const quotas = this.client.resource(RESOURCEQUOTAS, namespace);
    const status = await computeQuotaStatus(q, async (group, plural) => {
      const r = findResourceByPlural(group, plural);
      if (!r || !r.namespaced) return undefined;
      return (await this.client.resource(r, namespace).listAll({ signal })).items as unknown as Array<Record<string, unknown>>;
    }, this.clock.now());
    const current = q.status ?? {};
    if (equalLists(current.hard ?? {}, status.hard) && equalLists(current.used ?? {}, status.used)) return;
    try {
      await quotas.updateStatus({ ...q, status }, { signal });
    } catch (err) {
      // Gone: nothing to keep. A conflict is thrown: the key is retried.
      if (hasCode(err, 'ERR_NOT_FOUND')) return;
      throw err;
    }
  }
}
