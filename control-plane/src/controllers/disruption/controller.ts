/**
 * Disruption controller (upstream pkg/controller/disruption): keeps every PodDisruptionBudget's
 * status — expectedPods, desiredHealthy, currentHealthy, disruptionsAllowed, disruptedPods,
 * observedGeneration and the DisruptionAllowed condition — which the eviction subresource reads.
 *
 *   pod or budget changes ─▶ queue(budget) ─▶ selected pods ─▶ expected/desired (budget.ts; a
 *   percentage or maxUnavailable goes through the pods' controllers: Deployment, ReplicaSet,
 *   StatefulSet replicas, else the owner's /scale) ─▶ pending disruptions, healthy count
 *   ─▶ PUT poddisruptionbudgets/status (only when something changed) ─▶ requeue when the
 *   oldest disruptedPods entry expires
 *   a failure ─▶ disruptionsAllowed 0, DisruptionAllowed=False/SyncFailed (fail safe)
 *
 * Also resets a DisruptionTarget=True pod condition to False once it is 2 minutes old on a pod
 * that was not deleted after all (queue keys `pod/<ns>/<name>`).
 * Acts as kube-system/disruption-controller.
 */
import {
  DEPLOYMENTS,
  PODDISRUPTIONBUDGETS,
  PODS,
  REPLICASETS,
  STATEFULSETS,
  findResourceByKind,
  pdbSelectsPod,
  rfc3339,
  type OwnerReference,
  type Pod,
  type PodDisruptionBudget,
  type Scale,
} from '@nodelet/api';
import { errCode, hasCode } from '@nodelet/base';
import { ControllerBase, type ControllerDeps } from '../controller-base.js';
import type { ReconcileResult } from '../runtime.js';
import { controllerRef, keyOf, splitKey } from '../util/pods.js';
import { countHealthy, expectedPodCount, failSafeStatus, nextStatus, pendingDisruptions, staleDisruptionAfterMs, type ScaleFinder } from './budget.js';

const POD_KEY = 'pod/';
const isApps = (ref: OwnerReference): boolean => ref.apiVersion === 'apps/v1' || ref.apiVersion.startsWith('apps/') || ref.apiVersion.startsWith('extensions/');
const asEventObject = (pdb: PodDisruptionBudget): PodDisruptionBudget => ({ ...pdb, apiVersion: 'policy/v1', kind: 'PodDisruptionBudget' });

export class DisruptionController extends ControllerBase {
  readonly #pdbs;
  readonly #pods;
  readonly #deployments;
  readonly #replicaSets;
  readonly #statefulSets;

  constructor(d: ControllerDeps) {
    super(d, { name: 'disruption', eventComponent: 'controllermanager' });
    this.#pdbs = this.watch(PODDISRUPTIONBUDGETS);
    this.#pods = this.informer(PODS);
    this.#deployments = this.informer(DEPLOYMENTS);
    this.#replicaSets = this.informer(REPLICASETS);
    this.#statefulSets = this.informer(STATEFULSETS);
    this.handle(this.#pods, {
      onAdd: (p) => this.#podChanged(p),
      onUpdate: (o, n) => {
        this.#podChanged(n);
        if (JSON.stringify(o.metadata.labels ?? {}) !== JSON.stringify(n.metadata.labels ?? {})) this.#enqueueBudgetsOf(o);
      },
      onDelete: (p) => this.#enqueueBudgetsOf(p),
    });
  }

  #podChanged(pod: Pod): void {
    this.#enqueueBudgetsOf(pod);
    const after = staleDisruptionAfterMs(pod, this.clock.now());
    if (after !== undefined) this.queue.addAfter(POD_KEY + keyOf(pod), after);
  }

  #enqueueBudgetsOf(pod: Pod): void {
    for (const pdb of this.#pdbs.list()) if (pdbSelectsPod(pdb, pod, { emptySelectsAll: true })) this.enqueue(keyOf(pdb));
  }

  async reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    if (key.startsWith(POD_KEY)) return this.#cleanStaleCondition(key.slice(POD_KEY.length), signal);
    const pdb = this.#pdbs.get(key);
    if (!pdb || pdb.metadata.deletionTimestamp) return;
    try {
      return await this.#sync(pdb, signal);
    } catch (err) {
      if (signal.aborted || hasCode(err, 'ERR_CONFLICT')) throw err;
      // Fail safe: a budget that cannot be computed allows no disruption.
      this.log.info({ pdb: key, err: (err as Error).message, code: errCode(err) }, 'Failed to sync PDB');
      const status = failSafeStatus(pdb, (err as Error).message, rfc3339(this.clock.now()));
      await this.client.resource(PODDISRUPTIONBUDGETS, pdb.metadata.namespace).updateStatus({ ...pdb, status }, { signal });
    }
  }

  async #sync(pdb: PodDisruptionBudget, signal: AbortSignal): Promise<ReconcileResult | void> {
    const now = this.clock.now();
    // 1. The pods the budget selects (a nil selector selects none, `{}` the whole namespace).
    const pods = this.#pods.list().filter((p) => pdbSelectsPod(pdb, p, { emptySelectsAll: true }));
    if (pods.length === 0) void this.event(asEventObject(pdb), 'Normal', 'NoPods', 'No matching pods found');
    // 2. What it expects and needs healthy.
    let expected;
    try {
      expected = await expectedPodCount(pdb, pods, this.#finders(signal));
    } catch (err) {
      if (!signal.aborted) void this.event(asEventObject(pdb), 'Warning', 'CalculateExpectedPodCountFailed', `Failed to calculate the number of expected pods: ${(err as Error).message}`);
      throw err;
    }
    if (expected.unmanagedPods.length) {
      void this.event(
        asEventObject(pdb),
        'Warning',
        'UnmanagedPods',
        `Pods selected by this PodDisruptionBudget (selector: ${JSON.stringify(pdb.spec?.selector ?? null)}) were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set ".spec.minAvailable" field of the PDB to an integer value.`,
      );
    }
    // 3. Evictions still under way, and what is healthy without them.
    const { pending, recheckAtMs, expired } = pendingDisruptions(pdb, pods, now);
    for (const pod of expired) {
      void this.event({ ...pod, apiVersion: 'v1', kind: 'Pod' }, 'Warning', 'NotDeleted', `Pod was expected by PDB ${pdb.metadata.namespace}/${pdb.metadata.name} to be deleted but it wasn't`);
    }
    const currentHealthy = countHealthy(pods, pending, now);
    // 4. The status, written only when it changed.
    const status = nextStatus(pdb, { currentHealthy, desiredHealthy: expected.desiredHealthy, expectedCount: expected.expectedCount, disruptedPods: pending }, rfc3339(now));
    if (status) await this.client.resource(PODDISRUPTIONBUDGETS, pdb.metadata.namespace).updateStatus({ ...pdb, status }, { signal });
    if (recheckAtMs !== undefined) return { requeueAfterMs: Math.max(0, recheckAtMs - now) };
  }

  /** The finders in upstream's order: Deployment (through its ReplicaSet), ReplicaSet, StatefulSet, any /scale. */
  #finders(signal: AbortSignal): ScaleFinder[] {
    const byUid = <T extends { metadata: { uid?: string } }>(obj: T | undefined, uid: string): T | undefined => (obj && obj.metadata.uid === uid ? obj : undefined);
    const deployment: ScaleFinder = async (ref, ns) => {
      if (ref.kind !== 'ReplicaSet' || !isApps(ref)) return undefined;
      const rs = byUid(this.#replicaSets.get(`${ns}/${ref.name}`), ref.uid);
      const owner = rs && controllerRef(rs);
      if (!owner || owner.kind !== 'Deployment' || !isApps(owner)) return undefined;
      const d = byUid(this.#deployments.get(`${ns}/${owner.name}`), owner.uid);
      return d ? { uid: owner.uid, replicas: d.spec?.replicas ?? 1 } : undefined;
    };
    const replicaSet: ScaleFinder = async (ref, ns) => {
      if (ref.kind !== 'ReplicaSet' || !isApps(ref)) return undefined;
      const rs = byUid(this.#replicaSets.get(`${ns}/${ref.name}`), ref.uid);
      if (!rs || controllerRef(rs)?.kind === 'Deployment') return undefined;
      return { uid: ref.uid, replicas: rs.spec?.replicas ?? 1 };
    };
    const statefulSet: ScaleFinder = async (ref, ns) => {
      if (ref.kind !== 'StatefulSet' || !isApps(ref)) return undefined;
      const sts = byUid(this.#statefulSets.get(`${ns}/${ref.name}`), ref.uid);
      return sts ? { uid: ref.uid, replicas: sts.spec?.replicas ?? 1 } : undefined;
    };
    const anyScale: ScaleFinder = async (ref, ns) => {
      const r = findResourceByKind(ref.apiVersion, ref.kind);
      if (!r || !r.subresources?.includes('scale')) return undefined;
      try {
        const scale = (await this.client.get(r, ref.name, { namespace: ns, subresource: 'scale', signal })) as unknown as Scale;
        return scale.metadata.uid === ref.uid ? { uid: ref.uid, replicas: scale.spec?.replicas ?? 0 } : undefined;
      } catch (err) {
        if (hasCode(err, 'ERR_NOT_FOUND')) return undefined;
        throw err;
      }
    };
    return [deployment, replicaSet, statefulSet, anyScale];
  }

  /** Sets a stale DisruptionTarget=True condition to False (the eviction that set it did not delete the pod). */
  async #cleanStaleCondition(podKey: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    const pod = this.#pods.get(podKey);
    if (!pod) return;
    const after = staleDisruptionAfterMs(pod, this.clock.now());
    if (after === undefined) return;
    if (after > 0) return { requeueAfterMs: after };
    const { namespace, name } = splitKey(podKey);
    const patch = {
      metadata: { resourceVersion: pod.metadata.resourceVersion },
      status: { conditions: [{ type: 'DisruptionTarget', status: 'False', lastTransitionTime: rfc3339(this.clock.now()) }] },
    };
    try {
      await this.client.resource(PODS, namespace).patchStatus(name, patch, { type: 'strategic', signal });
      this.log.info({ pod: podKey }, 'Reset stale DisruptionTarget condition to False');
    } catch (err) {
      if (!hasCode(err, 'ERR_NOT_FOUND')) throw err;
    }
  }
}
