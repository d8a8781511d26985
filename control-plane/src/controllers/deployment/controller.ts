/**
 * Deployment controller: one ReplicaSet per pod template (named `<deployment>-<pod-template-hash>`),
 * rolled out by RollingUpdate or Recreate (planner in ./rollout.ts), revisions in the
 * `deployment.kubernetes.io/revision` annotation, history trimmed to revisionHistoryLimit, and the
 * status/conditions `kubectl rollout status` waits for. Rollback (`kubectl rollout undo`) is
 * client-side: kubectl copies an old ReplicaSet's template back, and that ReplicaSet becomes the
 * new one again with the next revision number.
 */
import { DEPLOYMENTS, PODS, REPLICASETS, rfc3339, type Deployment, type Pod, type ReplicaSet } from '@nodelet/api';
import { hasCode } from '@nodelet/base';
import { ControllerBase, type ControllerDeps } from '../controller-base.js';
import type { ReconcileResult } from '../runtime.js';
import { isControlledBy, ownerKey } from '../util/pods.js';
import { planRollout, type ScaleAction } from './rollout.js';
import { OwnWrites } from '../util/own-writes.js';
import { computeDeploymentStatus, deploymentStatusEqual, isComplete, newReplicaSetCreatedCondition, setCondition } from './status.js';
import {
  DESIRED_REPLICAS_ANNOTATION,
  MAX_REPLICAS_ANNOTATION,
  REVISION_ANNOTATION,
  computeHash,
  findNewReplicaSet,
  maxRevision,
  newReplicaSetFor,
  resolveFenceposts,
  revisionOf,
  templatesEqualIgnoringHash,
} from './util.js';

export class DeploymentController extends ControllerBase {
  readonly #deploys;
  readonly #rss;
  readonly #pods;
  readonly #ownWrites = new OwnWrites<Deployment>();

  constructor(d: ControllerDeps) {
    super(d, { name: 'deployment', eventComponent: 'deployment-controller' });
    const ofDeployment = (rs: ReplicaSet): string | undefined => ownerKey(rs, 'Deployment');
    this.#deploys = this.watch(DEPLOYMENTS);
    this.#rss = this.watch(REPLICASETS, ofDeployment);
    // Recreate waits for old pods to be gone: their deletion must wake the deployment.
    this.#pods = this.watch(
      PODS,
      (p) => {
        const rs = this.#rss.get(ownerKey(p, 'ReplicaSet') ?? '');
        return rs && ofDeployment(rs);
      },
      ['delete'],
    );
  }

  async reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    const cached = this.#deploys.get(key);
    const latest = this.#ownWrites.latest(key, cached);
    if (!cached || !latest || cached.metadata.deletionTimestamp) return;
    let d: Deployment = latest;
    const ns = d.metadata.namespace;
    const rsClient = this.client.resource(REPLICASETS, ns);
    const all = this.#rss.list().filter((rs) => rs.metadata.namespace === ns && isControlledBy(rs, d) && !rs.metadata.deletionTimestamp);
    let newRS = findNewReplicaSet(d, all);
    const oldRSs = all.filter((rs) => rs !== newRS);
    const maxOld = maxRevision(oldRSs);

    // 1. Revisions: a ReplicaSet that becomes current again (rollback) gets the next number.
    if (newRS && revisionOf(newRS) <= maxOld) {
      newRS = await rsClient.patch(newRS.metadata.name ?? '', { metadata: { annotations: { [REVISION_ANNOTATION]: String(maxOld + 1) } } }, { type: 'merge', signal });
    }

    // 2. Plan one step of the rollout.
    const now = this.clock.now();
    const before = computeDeploymentStatus(d, newRS, newRS ? [newRS, ...oldRSs] : oldRSs, now);
    const oldPodsRunning = this.#pods.list().some((p) => p.metadata.namespace === ns && podNotFinished(p) && oldRSs.some((rs) => isControlledBy(p, rs)));
    const plan = planRollout({ deployment: d, newRS, oldRSs, oldPodsRunning, complete: isComplete(d, before) });

    let status = d.status ?? {};
    const updated = new Map<string, ReplicaSet>();
    if (plan.createNew !== undefined) {
      const created = await this.#createNewRS(d, plan.createNew, maxOld + 1, signal);
      if (!created) return { requeueAfterMs: 0 };
      newRS = created;
      status = { ...status };
      setCondition(status, newReplicaSetCreatedCondition(created.metadata.name ?? '', rfc3339(now)));
    }
    for (const a of plan.scale) {
      const rs = await this.#scale(d, a, signal);
      if (rs) updated.set(rs.metadata.name ?? '', rs);
    }
    for (const name of plan.cleanup) {
      try {
        await rsClient.delete(name, { propagationPolicy: 'Background', signal });
      } catch (err) {
        if (!hasCode(err, 'ERR_NOT_FOUND')) throw err;
      }
    }

    // 3. The deployment's revision annotation follows its new ReplicaSet.
    const cur = newRS ? (updated.get(newRS.metadata.name ?? '') ?? newRS) : undefined;
    if (cur && d.metadata.annotations?.[REVISION_ANNOTATION] !== String(revisionOf(cur))) {
      // PUT at the informer's resourceVersion (the deployment-controller role grants update, not
      // patch, as upstream's): a conflict re-queues and the next pass reads the newer object.
      d = await this.client.resource(DEPLOYMENTS, ns).update({ ...d, metadata: { ...d.metadata, annotations: { ...d.metadata.annotations, [REVISION_ANNOTATION]: String(revisionOf(cur)) } } }, { signal });
    }

    // 4. Status from the freshest ReplicaSets we have.
    const fresh = [...(cur ? [cur] : []), ...oldRSs.map((rs) => updated.get(rs.metadata.name ?? '') ?? rs)];
    const next = computeDeploymentStatus({ ...d, status }, cur, fresh, now);
    if (!deploymentStatusEqual(d.status, next)) {
      this.#ownWrites.wrote(key, cached, await this.client.resource(DEPLOYMENTS, ns).updateStatus({ ...d, status: next }, { signal }));
    }
    // The progress deadline passes without any event: look again when it would expire.
    if (!isComplete(d, next)) return { requeueAfterMs: Math.min((d.spec?.progressDeadlineSeconds ?? 600) * 1000, 30_000) };
  }

  async #createNewRS(d: Deployment, replicas: number, revision: number, signal: AbortSignal): Promise<ReplicaSet | undefined> {
    const ns = d.metadata.namespace;
    const collisions = d.status?.collisionCount ?? 0;
    const hash = computeHash(d.spec!.template, collisions);
    const rs = newReplicaSetFor(d, hash, replicas, revision);
    try {
      const created = await this.client.resource(REPLICASETS, ns).create(rs, { signal });
      await this.event(d, 'Normal', 'ScalingReplicaSet', `Scaled up replica set ${created.metadata.name} from 0 to ${replicas}`);
      return created;
    } catch (err) {
      if (!hasCode(err, 'ERR_ALREADY_EXISTS')) throw err;
      const existing = await this.client.resource(REPLICASETS, ns).get(rs.metadata.name ?? '', { signal });
      if (isControlledBy(existing, d) && templatesEqualIgnoringHash(existing.spec?.template, d.spec?.template)) return existing;
      // A different object has our name: bump collisionCount so the next hash differs.
      await this.client.resource(DEPLOYMENTS, ns).updateStatus({ ...d, status: { ...d.status, collisionCount: collisions + 1 } }, { signal });
      return undefined;
    }
  }

  async #scale(d: Deployment, a: ScaleAction, signal: AbortSignal): Promise<ReplicaSet | undefined> {
    const rs = this.#rss.get(`${d.metadata.namespace}/${a.name}`);
    const from = rs?.spec?.replicas ?? 0;
    const desired = d.spec?.replicas ?? 1;
    const surge = d.spec?.strategy?.type === 'Recreate' ? 0 : resolveFenceposts(d).maxSurge;
    try {
      const out = await this.client.resource(REPLICASETS, d.metadata.namespace).patch(
        a.name,
        { spec: { replicas: a.replicas }, metadata: { annotations: { [DESIRED_REPLICAS_ANNOTATION]: String(desired), [MAX_REPLICAS_ANNOTATION]: String(desired + surge) } } },
        { type: 'merge', signal },
      );
      const verb = a.replicas > from ? 'up' : 'down';
      await this.event(d, 'Normal', 'ScalingReplicaSet', `Scaled ${verb} replica set ${a.name} from ${from} to ${a.replicas}`);
      return out;
    } catch (err) {
      if (hasCode(err, 'ERR_NOT_FOUND')) return undefined;
      throw err;
    }
  }
}

/** Running or terminating: Recreate waits until no old pod is in either state. */
function podNotFinished(p: Pod): boolean {
  const phase = p.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed';
}

