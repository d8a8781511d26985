/**
 * StatefulSet controller (upstream pkg/controller/statefulset): pods `<set>-<ordinal>` with a
 * stable identity and their own PersistentVolumeClaims, created in order and removed in reverse
 * (plan.ts), rolled by RollingUpdate (with partition) or OnDelete, history in ControllerRevisions.
 *
 *   sync ─▶ update revision (`<set>-<hash>`; a template seen before gets the next number: undo)
 *        ─▶ claims of each ordinal (created before its pod; kept when the pod or the set goes)
 *        ─▶ plan.ts actions ─▶ prune revisions ─▶ status (current/update revision, ready, …)
 *
 * Acts as kube-system/statefulset-controller: pods get/create/delete/update/patch, claims
 * get/create, controllerrevisions, and the StatefulSet only through `statefulsets/status`.
 */
import { CONTROLLERREVISIONS, labelSelectorFromObject, matchLabels, PERSISTENTVOLUMECLAIMS, PODS, STATEFULSETS, type ControllerRevision, type Pod, type PodTemplateSpec, type StatefulSet } from '@nodelet/api';
import { hasCode } from '@nodelet/base';
import { ControllerBase, type ControllerDeps } from '../controller-base.js';
import type { ReconcileResult } from '../runtime.js';
import { controllerRef, ownerKey } from '../util/pods.js';
import { maxRevisionNumber, newControllerRevision, revisionMatches, revisionsToPrune, templateHash } from '../util/history.js';
import { claimName, claimOwnersFor, claimsFor, ordinalOf, statefulPodFor } from './identity.js';
import { planStatefulSet, revisionOf, statefulSetStatus } from './plan.js';

const setKeyOf = (o: Pod | ControllerRevision): string | undefined => ownerKey(o, 'StatefulSet');

/** The template a revision stores (its `spec.template`, without the `$patch` directive). */
function templateOf(rev: ControllerRevision): PodTemplateSpec {
  const t = structuredClone(((rev.data as { spec?: { template?: Record<string, unknown> } } | undefined)?.spec?.template ?? {}) as Record<string, unknown>);
  delete t.$patch;
  return t as PodTemplateSpec;
}

export class StatefulSetController extends ControllerBase {
  readonly #sets;
  readonly #pods;
  readonly #claims;
  readonly #revisions;

  constructor(d: ControllerDeps) {
    super(d, { name: 'statefulset', eventComponent: 'statefulset-controller' });
    this.#sets = this.watch(STATEFULSETS);
    this.#pods = this.watch(PODS, setKeyOf);
    this.#claims = this.informer(PERSISTENTVOLUMECLAIMS);
    this.#revisions = this.informer(CONTROLLERREVISIONS);
  }

  async reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    const set = this.#sets.get(key);
    if (!set || set.metadata.deletionTimestamp) return;
    const ns = set.metadata.namespace;
    const now = this.clock.now();

    // 1. Revisions: the update revision is the template's; the current one is what status says.
    const all = this.#revisions.list().filter((r) => r.metadata.namespace === ns && controllerRef(r)?.uid === set.metadata.uid);
    const update = await this.#updateRevision(set, all, signal);
    const current = all.find((r) => r.metadata.name === set.status?.currentRevision) ?? update;

    // 2. Our pods by ordinal.
    const sel = labelSelectorFromObject(set.spec?.selector);
    const owned = this.#pods.list().filter((p) => p.metadata.namespace === ns && controllerRef(p)?.uid === set.metadata.uid && matchLabels(sel, p.metadata.labels));
    const byOrdinal = new Map<number, Pod>();
    for (const p of owned) {
      const o = ordinalOf(set, p);
      if (o !== undefined) byOrdinal.set(o, p);
    }

    // 3. Claims' owners under the retention policy, before a condemned pod is deleted (its claims
    // then go with it).
    await this.#claimOwners(set, byOrdinal, signal);

    // 4. Act.
    const actions = planStatefulSet({ set, pods: byOrdinal, currentRevision: current.metadata.name!, updateRevision: update.metadata.name! });
    const podsClient = this.client.resource(PODS, ns);
    await Promise.all(
      actions.map(async (a) => {
        if (a.kind === 'create') {
          await this.#ensureClaims(set, a.ordinal, signal);
          const rev = a.revision === 'current' ? current : update;
          const pod = statefulPodFor(set, a.revision === 'current' ? templateOf(rev) : set.spec!.template, a.ordinal, rev.metadata.name!);
          try {
            await podsClient.create(pod, { signal });
            void this.event(set, 'Normal', 'SuccessfulCreate', `create Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name} successful`);
          } catch (err) {
            if (hasCode(err, 'ERR_ALREADY_EXISTS')) return;
            void this.event(set, 'Warning', 'FailedCreate', `create Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name} failed error: ${err instanceof Error ? err.message : String(err)}`);
            throw err;
          }
        } else {
          try {
            await podsClient.delete(a.pod.metadata.name ?? '', { signal, preconditions: { uid: a.pod.metadata.uid } });
            void this.event(set, 'Normal', 'SuccessfulDelete', `delete Pod ${a.pod.metadata.name} in StatefulSet ${set.metadata.name} successful`);
          } catch (err) {
            if (!hasCode(err, 'ERR_NOT_FOUND') && !hasCode(err, 'ERR_CONFLICT')) throw err;
          }
        }
      }),
    );

    // 5. History beyond revisionHistoryLimit (never the current or update revision, nor one a pod runs).
    const inUse = new Set([current.metadata.name!, update.metadata.name!, ...owned.map((p) => revisionOf(p) ?? '')]);
    for (const r of revisionsToPrune(all, update, inUse, set.spec?.revisionHistoryLimit ?? 10)) {
      await this.client.resource(CONTROLLERREVISIONS, ns).delete(r.metadata.name ?? '', { signal }).catch((err: unknown) => {
        if (!hasCode(err, 'ERR_NOT_FOUND')) throw err;
      });
    }

    // 6. Status.
    const status = statefulSetStatus(set, owned, current.metadata.name!, update.metadata.name!, now);
    if (JSON.stringify(status) !== JSON.stringify({ ...set.status, conditions: undefined })) {
      try {
        await this.client.resource(STATEFULSETS, ns).updateStatus({ ...set, status }, { signal });
      } catch (err) {
        if (!hasCode(err, 'ERR_NOT_FOUND')) throw err;
      }
    }
    const minReady = set.spec?.minReadySeconds ?? 0;
    if (minReady > 0 && (status.availableReplicas ?? 0) < (status.readyReplicas ?? 0)) return { requeueAfterMs: minReady * 1000 };
  }

  /** The revision of the current template: an existing match (renumbered to the top when older), else a new one. */
  async #updateRevision(set: StatefulSet, all: ControllerRevision[], signal: AbortSignal): Promise<ControllerRevision> {
    const revs = this.client.resource(CONTROLLERREVISIONS, set.metadata.namespace);
    const max = maxRevisionNumber(all);
    const match = all.filter((r) => revisionMatches(r, set.spec?.template)).sort((a, b) => b.revision - a.revision)[0];
    if (match) return match.revision < max ? revs.update({ ...match, revision: max + 1 }, { signal }) : match;
    const collisions = set.status?.collisionCount ?? 0;
    const hash = templateHash(set.spec?.template, collisions);
    try {
      return await revs.create(newControllerRevision(set, { apiVersion: 'apps/v1', kind: 'StatefulSet' }, set.spec?.template, max + 1, hash), { signal });
    } catch (err) {
      if (!hasCode(err, 'ERR_ALREADY_EXISTS')) throw err;
      const existing = await revs.get(`${set.metadata.name}-${hash}`, { signal });
      if (controllerRef(existing)?.uid === set.metadata.uid && revisionMatches(existing, set.spec?.template)) return existing;
      await this.client.resource(STATEFULSETS, set.metadata.namespace).updateStatus({ ...set, status: { ...(set.status ?? { replicas: 0 }), collisionCount: collisions + 1 } }, { signal });
      throw err;
    }
  }

  /** Sets or removes the set's and the pods' owner references on existing claims (claimOwnersFor). */
  async #claimOwners(set: StatefulSet, pods: ReadonlyMap<number, Pod>, signal: AbortSignal): Promise<void> {
    const ns = set.metadata.namespace;
    const client = this.client.resource(PERSISTENTVOLUMECLAIMS, ns);
    for (const [ordinal, pod] of pods) {
      for (const t of set.spec?.volumeClaimTemplates ?? []) {
        const claim = this.#claims.get(`${ns}/${claimName(set, t, ordinal)}`);
        if (!claim || claim.metadata.deletionTimestamp) continue;
        const owners = claimOwnersFor(set, claim, pod, ordinal);
        if (!owners) continue;
        try {
          await client.patch(claim.metadata.name ?? '', { metadata: { ownerReferences: owners, resourceVersion: claim.metadata.resourceVersion } }, { type: 'merge', signal });
        } catch (err) {
          // Gone, or changed since the informer saw it: the claim's event requeues the set.
          if (!hasCode(err, 'ERR_NOT_FOUND') && !hasCode(err, 'ERR_CONFLICT')) throw err;
        }
      }
    }
  }

  /** Creates the ordinal's claims that do not exist yet; an existing claim (data from before) is reused. */
  async #ensureClaims(set: StatefulSet, ordinal: number, signal: AbortSignal): Promise<void> {
    const client = this.client.resource(PERSISTENTVOLUMECLAIMS, set.metadata.namespace);
    for (const claim of claimsFor(set, ordinal)) {
      if (this.#claims.get(`${set.metadata.namespace}/${claim.metadata.name}`)) continue;
      try {
        await client.create(claim, { signal });
        void this.event(set, 'Normal', 'SuccessfulCreate', `create Claim ${claim.metadata.name} Pod ${set.metadata.name}-${ordinal} in StatefulSet ${set.metadata.name} success`);
      } catch (err) {
        if (!hasCode(err, 'ERR_ALREADY_EXISTS')) {
          void this.event(set, 'Warning', 'FailedCreate', `create Claim ${claim.metadata.name} for Pod ${set.metadata.name}-${ordinal} in StatefulSet ${set.metadata.name} failed error: ${err instanceof Error ? err.message : String(err)}`);
          throw err;
        }
      }
    }
  }
}
