/**
 * ReplicaSet controller: keeps `spec.replicas` pods running for each ReplicaSet and reports
 * status. Pods are owned through a controller ownerReference (blockOwnerDeletion), named
 * `<rs>-<5 chars>`; expectations stop a stale cache from causing double creates. The same
 * implementation runs v1 ReplicationControllers (as upstream's replication controller wraps the
 * ReplicaSet one): an RC is seen as a ReplicaSet whose selector is `{matchLabels: <its map>}`.
 */
import { PODS, REPLICASETS, REPLICATIONCONTROLLERS, type KubeObject, type Pod, type ReplicaSet, type ReplicationController, type ResourceType } from '@nodelet/api';
import { hasCode } from '@nodelet/base';
import { ControllerBase, type ControllerDeps } from '../controller-base.js';
import type { ReconcileResult } from '../runtime.js';
import { Expectations } from '../util/expectations.js';
import { OwnWrites } from '../util/own-writes.js';
import { controllerRef, isPodActive, isPodAvailable, isPodReady, keyOf, newControllerRef, ownerKey, randomSuffix } from '../util/pods.js';
import { planReplicaSet, podFromTemplate, replicaSetStatus, selectorMatches, statusEqual } from './plan.js';

/** The claim-index key of a namespace's pods without a controller (no `ns/name` key has a NUL). */
const orphansOf = (namespace: string | undefined): string => `\0${namespace ?? ''}`;

/** The kind a {@link ReplicaSetController} keeps replicas of. */
export interface ReplicatedKind<T extends KubeObject> {
  resource: ResourceType<T>;
  /** Controller name, and the events' reporting component. */
  name: string;
  eventComponent: string;
  /** The object as a ReplicaSet (the selector as a LabelSelector). */
  asReplicaSet(obj: T): ReplicaSet;
}

export const REPLICASET_KIND: ReplicatedKind<ReplicaSet> = { resource: REPLICASETS, name: 'replicaset', eventComponent: 'replicaset-controller', asReplicaSet: (rs) => rs };

export const REPLICATIONCONTROLLER_KIND: ReplicatedKind<ReplicationController> = {
  resource: REPLICATIONCONTROLLERS,
  name: 'replicationcontroller',
  eventComponent: 'replication-controller',
  asReplicaSet: (rc) => ({ ...rc, apiVersion: 'apps/v1', kind: 'ReplicaSet', spec: { ...rc.spec, selector: { matchLabels: rc.spec?.selector ?? {} } } }) as ReplicaSet,
};

export class ReplicaSetController<T extends KubeObject = ReplicaSet> extends ControllerBase {
  readonly #kind: ReplicatedKind<T>;
  readonly #owner: { apiVersion: string; kind: string };
  readonly #rs;
  readonly #pods;
  readonly #expect: Expectations;
  /**
   * The pods a reconcile can claim, kept from the pod informer's events: those whose controller is
   * a `kind` named `ns/name` (under that key) and the orphans of a namespace (under
   * {@link orphansOf}). A reconcile reads its own and the orphans instead of every pod of the
   * cluster, which made a burst of N pods cost O(N²) (upstream indexes pods by controller UID).
   */
  readonly #claimable = new Map<string, Map<string, Pod>>();
  readonly #ownWrites = new OwnWrites<T>();

  constructor(d: ControllerDeps, kind: ReplicatedKind<T> = REPLICASET_KIND as unknown as ReplicatedKind<T>) {
    super(d, { name: kind.name, workers: 4, eventComponent: kind.eventComponent });
    this.#kind = kind;
    const r = kind.resource;
    this.#owner = { apiVersion: r.group ? `${r.group}/${r.version}` : r.version, kind: r.kind };
    this.#expect = new Expectations(d.clock);
    this.#rs = this.watch(kind.resource);
    this.#pods = this.watchOwnedPods((p) => ownerKey(p, r.kind), this.#expect, (p) => this.#enqueueAdopters(p));
    this.handle(this.#pods, {
      onAdd: (p) => this.#index(p),
      onUpdate: (o, p) => {
        if (this.#claimKey(o) !== this.#claimKey(p)) this.#unindex(o);
        this.#index(p);
      },
      onDelete: (p) => this.#unindex(p),
    });
  }

  #claimKey(p: Pod): string | undefined {
    return controllerRef(p) ? ownerKey(p, this.#kind.resource.kind) : orphansOf(p.metadata.namespace);
  }

  #index(p: Pod): void {
    const k = this.#claimKey(p);
    if (k === undefined) return;
    let pods = this.#claimable.get(k);
    if (!pods) this.#claimable.set(k, (pods = new Map()));
    // Set on an existing key keeps its place: the claim order stays the order pods appeared in.
    pods.set(keyOf(p), p);
  }

  #unindex(p: Pod): void {
    const k = this.#claimKey(p);
    const pods = k === undefined ? undefined : this.#claimable.get(k);
    if (!pods?.delete(keyOf(p)) || pods.size > 0) return;
    this.#claimable.delete(k!);
  }

  /** An orphan pod may be adopted by a ReplicaSet whose selector matches it. */
  #enqueueAdopters(p: Pod): void {
    if (!isPodActive(p)) return;
    for (const o of this.#rs.list()) if (o.metadata.namespace === p.metadata.namespace && selectorMatches(this.#kind.asReplicaSet(o), p)) this.queue.add(keyOf(o));
  }

  async reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    const cached = this.#rs.get(key);
    const obj = this.#ownWrites.latest(key, cached);
    if (!cached || !obj) {
      this.#expect.forget(key);
      return;
    }
    const rs = this.#kind.asReplicaSet(obj);
    const owned = await this.#claimPods(rs, signal);
    if (this.#expect.satisfied(key) && !rs.metadata.deletionTimestamp) {
      const plan = planReplicaSet(rs, owned);
      if (plan.create > 0 || plan.delete.length > 0) {
        this.#expect.expect(key, plan.create, plan.delete.length);
        const pods = this.client.resource(PODS, rs.metadata.namespace);
        const names = Array.from({ length: plan.create }, () => `${rs.metadata.name}-${randomSuffix(this.random)}`);
        await this.createPodsInBatches(rs, key, names, (name) => pods.create(podFromTemplate(rs, name, this.#owner), { signal }), this.#expect);
        await this.deleteOwnedPods(rs, key, plan.delete, this.#expect, signal);
      }
    }
    const now = this.clock.now();
    const status = replicaSetStatus(rs, owned, now);
    if (!statusEqual(rs.status, status)) {
      try {
        this.#ownWrites.wrote(key, cached, await this.client.resource(this.#kind.resource, rs.metadata.namespace).updateStatus({ ...obj, status } as T, { signal }));
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
    const candidates = [...(this.#claimable.get(keyOf(rs))?.values() ?? []), ...(this.#claimable.get(orphansOf(rs.metadata.namespace))?.values() ?? [])];
    for (const p of candidates) {
      if (p.metadata.namespace !== rs.metadata.namespace) continue;
      const ref = controllerRef(p);
      const refs = p.metadata.ownerReferences ?? [];
      try {
        if (ref?.uid === rs.metadata.uid) {
          if (selectorMatches(rs, p)) owned.push(p);
          else await pods.patch(p.metadata.name ?? '', { metadata: { resourceVersion: p.metadata.resourceVersion, ownerReferences: refs.filter((r) => r.uid !== rs.metadata.uid) } }, { type: 'merge', signal });
        } else if (!ref && isPodActive(p) && !rs.metadata.deletionTimestamp && selectorMatches(rs, p)) {
          const adopted = await pods.patch(p.metadata.name ?? '', { metadata: { resourceVersion: p.metadata.resourceVersion, ownerReferences: [...refs, newControllerRef(rs, this.#owner.apiVersion, this.#owner.kind)] } }, { type: 'merge', signal });
          owned.push(adopted);
        }
      } catch (err) {
        if (!hasCode(err, 'ERR_NOT_FOUND') && !hasCode(err, 'ERR_CONFLICT')) throw err;
      }
    }
    return owned;
  }
}
