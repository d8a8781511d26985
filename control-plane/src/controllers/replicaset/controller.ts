/**
 * ReplicaSet controller: keeps `spec.replicas` pods running for each ReplicaSet and reports
 * status. Pods are owned through a controller ownerReference (blockOwnerDeletion), named
 * `<rs>-<5 chars>`; expectations stop a stale cache from causing double creates.
 */
import { PODS, REPLICASETS, type Pod, type ReplicaSet } from '@nodelet/api';
import { hasCode } from '@nodelet/base';
import { ControllerBase, type ControllerDeps } from '../controller-base.js';
import type { ReconcileResult } from '../runtime.js';
import { Expectations } from '../util/expectations.js';
import { controllerRef, isPodActive, isPodAvailable, isPodReady, keyOf, newControllerRef, ownerKey, randomSuffix } from '../util/pods.js';
import { planReplicaSet, podFromTemplate, replicaSetStatus, selectorMatches, statusEqual } from './plan.js';

export class ReplicaSetController extends ControllerBase {
  readonly #rs;
  readonly #pods;
  readonly #expect: Expectations;

  constructor(d: ControllerDeps) {
    super(d, { name: 'replicaset', workers: 4, eventComponent: 'replicaset-controller' });
    this.#expect = new Expectations(d.clock);
    this.#rs = this.watch(REPLICASETS);
    this.#pods = this.watchOwnedPods((p) => ownerKey(p, 'ReplicaSet'), this.#expect, (p) => this.#enqueueAdopters(p));
  }

  /** An orphan pod may be adopted by a ReplicaSet whose selector matches it. */
  #enqueueAdopters(p: Pod): void {
    if (!isPodActive(p)) return;
    for (const rs of this.#rs.list()) if (rs.metadata.namespace === p.metadata.namespace && selectorMatches(rs, p)) this.queue.add(keyOf(rs));
  }

  async reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    const rs = this.#rs.get(key);
    if (!rs) {
      this.#expect.forget(key);
      return;
    }
    const owned = await this.#claimPods(rs, signal);
    if (this.#expect.satisfied(key) && !rs.metadata.deletionTimestamp) {
      const plan = planReplicaSet(rs, owned);
      if (plan.create > 0 || plan.delete.length > 0) {
        this.#expect.expect(key, plan.create, plan.delete.length);
        const pods = this.client.resource(PODS, rs.metadata.namespace);
        const names = Array.from({ length: plan.create }, () => `${rs.metadata.name}-${randomSuffix(this.random)}`);
        await this.createPodsInBatches(rs, key, names, (name) => pods.create(podFromTemplate(rs, name), { signal }), this.#expect);
        await this.deleteOwnedPods(rs, key, plan.delete, this.#expect, signal);
      }
    }
    const now = this.clock.now();
    const status = replicaSetStatus(rs, owned, now);
    if (!statusEqual(rs.status, status)) {
      try {
        await this.client.resource(REPLICASETS, rs.metadata.namespace).updateStatus({ ...rs, status }, { signal });
      } catch (err) {
        if (!hasCode(err, 'ERR_NOT_FOUND')) throw err;
      }
    }
    // Pods ready but not yet for minReadySeconds become available later without any event.
    const minReady = rs.spec?.minReadySeconds ?? 0;
    if (minReady > 0 && owned.some((p) => isPodReady(p) && !isPodAvailable(p, minReady, now))) return { requeueAfterMs: minReady * 1000 };
  }

  /**
   * Upstream ClaimPods: keeps the pods this ReplicaSet controls and still selects, releases the
   * ones it no longer selects, and adopts active orphans it selects (conditional patches, so a
   * concurrent change makes the patch fail instead of stealing a pod).
   */
  async #claimPods(rs: ReplicaSet, signal: AbortSignal): Promise<Pod[]> {
    const pods = this.client.resource(PODS, rs.metadata.namespace);
    const owned: Pod[] = [];
    for (const p of this.#pods.list()) {
      if (p.metadata.namespace !== rs.metadata.namespace) continue;
      const ref = controllerRef(p);
      const refs = p.metadata.ownerReferences ?? [];
      try {
        if (ref?.uid === rs.metadata.uid) {
          if (selectorMatches(rs, p)) owned.push(p);
          else await pods.patch(p.metadata.name ?? '', { metadata: { resourceVersion: p.metadata.resourceVersion, ownerReferences: refs.filter((r) => r.uid !== rs.metadata.uid) } }, { type: 'merge', signal });
        } else if (!ref && isPodActive(p) && !rs.metadata.deletionTimestamp && selectorMatches(rs, p)) {
          const adopted = await pods.patch(p.metadata.name ?? '', { metadata: { resourceVersion: p.metadata.resourceVersion, ownerReferences: [...refs, newControllerRef(rs, 'apps/v1', 'ReplicaSet')] } }, { type: 'merge', signal });
          owned.push(adopted);
        }
      } catch (err) {
        if (!hasCode(err, 'ERR_NOT_FOUND') && !hasCode(err, 'ERR_CONFLICT')) throw err;
      }
    }
    return owned;
  }
}

