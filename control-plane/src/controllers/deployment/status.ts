/**
 * Deployment status and conditions (upstream `sync.go` calculateStatus, `progress.go`
 * syncRolloutStatus). `kubectl rollout status` reads observedGeneration, updatedReplicas,
 * replicas, availableReplicas and the Progressing condition's reason.
 */
import { rfc3339, type Deployment, type DeploymentCondition, type DeploymentStatus, type ReplicaSet } from '@nodelet/api';
import { canonicalJson, maxUnavailableOf } from './util.js';

export const NEW_RS_AVAILABLE = 'NewReplicaSetAvailable';
export const RS_UPDATED = 'ReplicaSetUpdated';
export const NEW_RS_CREATED = 'NewReplicaSetCreated';
export const TIMED_OUT = 'ProgressDeadlineExceeded';
export const MIN_AVAILABLE = 'MinimumReplicasAvailable';
export const MIN_UNAVAILABLE = 'MinimumReplicasUnavailable';

const sum = (xs: readonly ReplicaSet[], f: (rs: ReplicaSet) => number): number => xs.reduce((n, rs) => n + f(rs), 0);

export function getCondition(s: DeploymentStatus | undefined, type: string): DeploymentCondition | undefined {
  return s?.conditions?.find((c) => c.type === type);
}

/** Upstream SetDeploymentCondition: same status and reason → keep; same status → keep the transition time. */
export function setCondition(s: DeploymentStatus, c: DeploymentCondition): void {
  const conds = s.conditions ?? [];
  const cur = conds.find((x) => x.type === c.type);
  if (cur && cur.status === c.status && cur.reason === c.reason) return;
  if (cur && cur.status === c.status) c.lastTransitionTime = cur.lastTransitionTime;
  s.conditions = [...conds.filter((x) => x.type !== c.type), c];
}

function condition(type: string, status: 'True' | 'False', reason: string, message: string, now: string): DeploymentCondition {
  return { type, status, lastUpdateTime: now, lastTransitionTime: now, reason, message };
}

export function newReplicaSetCreatedCondition(rsName: string, now: string): DeploymentCondition {
  return condition('Progressing', 'True', NEW_RS_CREATED, `Created new replica set "${rsName}"`, now);
}

export function isComplete(d: Deployment, s: DeploymentStatus): boolean {
  const desired = d.spec?.replicas ?? 1;
  return s.updatedReplicas === desired && s.replicas === desired && s.availableReplicas === desired && (s.observedGeneration ?? 0) >= (d.metadata.generation ?? 0);
}

function isProgressing(d: Deployment, s: DeploymentStatus): boolean {
  const o = d.status ?? {};
  const oldOld = (o.replicas ?? 0) - (o.updatedReplicas ?? 0);
  const newOld = (s.replicas ?? 0) - (s.updatedReplicas ?? 0);
  return (s.updatedReplicas ?? 0) > (o.updatedReplicas ?? 0) || newOld < oldOld || (s.readyReplicas ?? 0) > (o.readyReplicas ?? 0) || (s.availableReplicas ?? 0) > (o.availableReplicas ?? 0);
}

function timedOut(d: Deployment, s: DeploymentStatus, nowMs: number): boolean {
  const c = getCondition(s, 'Progressing');
  if (!c) return false;
  if (c.reason === TIMED_OUT) return true;
  const from = Date.parse(c.lastUpdateTime ?? c.lastTransitionTime ?? '');
  const deadline = (d.spec?.progressDeadlineSeconds ?? 600) * 1000;
  return Number.isFinite(from) && from + deadline < nowMs;
}

/** The status to write for `d` given all its ReplicaSets; `nowMs` stamps changed conditions. */
export function computeDeploymentStatus(d: Deployment, newRS: ReplicaSet | undefined, all: readonly ReplicaSet[], nowMs: number): DeploymentStatus {
  const now = rfc3339(nowMs);
  const desired = d.spec?.replicas ?? 1;
  const available = sum(all, (rs) => rs.status?.availableReplicas ?? 0);
  const total = sum(all, (rs) => rs.spec?.replicas ?? 0);
  const s: DeploymentStatus = {
    observedGeneration: d.metadata.generation,
    replicas: sum(all, (rs) => rs.status?.replicas ?? 0),
    updatedReplicas: newRS?.status?.replicas ?? 0,
    readyReplicas: sum(all, (rs) => rs.status?.readyReplicas ?? 0),
    availableReplicas: available,
    unavailableReplicas: Math.max(0, total - available),
    conditions: structuredClone(d.status?.conditions ?? []),
    collisionCount: d.status?.collisionCount,
  };
  if (available >= desired - maxUnavailableOf(d)) setCondition(s, condition('Available', 'True', MIN_AVAILABLE, 'Deployment has minimum availability.', now));
  else setCondition(s, condition('Available', 'False', MIN_UNAVAILABLE, 'Deployment does not have minimum availability.', now));

  const cur = getCondition(d.status, 'Progressing');
  const alreadyComplete = s.replicas === s.updatedReplicas && cur?.reason === NEW_RS_AVAILABLE;
  if (!alreadyComplete && newRS) {
    const rs = newRS.metadata.name ?? '';
    if (isComplete(d, s)) {
      setCondition(s, condition('Progressing', 'True', NEW_RS_AVAILABLE, `ReplicaSet "${rs}" has successfully progressed.`, now));
    } else if (isProgressing(d, s)) {
      // Progress refreshes lastUpdateTime even with the same reason (that is what the deadline measures).
      const c = condition('Progressing', 'True', RS_UPDATED, `ReplicaSet "${rs}" is progressing.`, now);
      if (cur?.status === 'True') c.lastTransitionTime = cur.lastTransitionTime;
      s.conditions = [...(s.conditions ?? []).filter((x) => x.type !== 'Progressing'), c];
    } else if (timedOut(d, s, nowMs)) {
      setCondition(s, condition('Progressing', 'False', TIMED_OUT, `ReplicaSet "${rs}" has timed out progressing.`, now));
    }
  }
  return s;
}

/** Whether writing `next` would change anything (conditions compared without timestamps churn). */
export function deploymentStatusEqual(a: DeploymentStatus | undefined, b: DeploymentStatus): boolean {
  return canonicalJson(a ?? {}) === canonicalJson(b);
}
