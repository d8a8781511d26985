/**
 * The pure half of the ReplicaSet controller: given a ReplicaSet and the pods it owns, how many
 * pods to create, which ones to delete, and the status to write. The controller loop executes it.
 */
import type { Pod, ReplicaSet, ReplicaSetStatus } from '@nodelet/api';
import { matchLabels, labelSelectorFromObject } from '@nodelet/api';
import { isPodActive, isPodAvailable, isPodReady, newControllerRef, podReadyCondition } from '../util/pods.js';

/** Upstream `burstReplicas`: at most this many creates or deletes per sync. */
export const BURST_REPLICAS = 500;

export interface ReplicaSetPlan {
  create: number;
  delete: Pod[];
}

export function planReplicaSet(rs: ReplicaSet, ownedPods: readonly Pod[]): ReplicaSetPlan {
  const active = ownedPods.filter(isPodActive);
  const want = rs.spec?.replicas ?? 1;
  const diff = active.length - want;
  if (diff < 0) return { create: Math.min(-diff, BURST_REPLICAS), delete: [] };
  if (diff > 0) return { create: 0, delete: podsToDelete(active, Math.min(diff, BURST_REPLICAS)) };
  return { create: 0, delete: [] };
}

const PHASE_RANK: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };

/**
 * Upstream `ActivePodsWithRanks` order, cheapest to lose first: not yet scheduled, then Pending <
 * Unknown < Running, not ready before ready, ready for less time first, more restarts first,
 * newer first.
 */
export function comparePodsForDeletion(a: Pod, b: Pod): number {
  const assigned = (p: Pod): number => (p.spec?.nodeName ? 1 : 0);
  if (assigned(a) !== assigned(b)) return assigned(a) - assigned(b);
  const phase = (p: Pod): number => PHASE_RANK[p.status?.phase ?? 'Pending'] ?? 0;
  if (phase(a) !== phase(b)) return phase(a) - phase(b);
  const ready = (p: Pod): number => (isPodReady(p) ? 1 : 0);
  if (ready(a) !== ready(b)) return ready(a) - ready(b);
  if (isPodReady(a) && isPodReady(b)) {
    const since = (p: Pod): number => Date.parse(podReadyCondition(p)?.lastTransitionTime ?? '') || 0;
    if (since(a) !== since(b)) return since(b) - since(a); // ready more recently goes first
  }
  const restarts = (p: Pod): number => Math.max(0, ...(p.status?.containerStatuses ?? []).map((c) => c.restartCount));
  if (restarts(a) !== restarts(b)) return restarts(b) - restarts(a);
  const created = (p: Pod): number => Date.parse(p.metadata.creationTimestamp ?? '') || 0;
  return created(b) - created(a);
}

export function podsToDelete(active: readonly Pod[], n: number): Pod[] {
  return [...active].sort(comparePodsForDeletion).slice(0, n);
}

export function replicaSetStatus(rs: ReplicaSet, ownedPods: readonly Pod[], nowMs: number): ReplicaSetStatus {
  const active = ownedPods.filter(isPodActive);
  const templateLabels = rs.spec?.template?.metadata?.labels ?? {};
  const fullyLabeled = active.filter((p) => Object.entries(templateLabels).every(([k, v]) => p.metadata.labels?.[k] === v));
  const minReady = rs.spec?.minReadySeconds ?? 0;
  return {
    replicas: active.length,
    fullyLabeledReplicas: fullyLabeled.length,
    readyReplicas: active.filter(isPodReady).length,
    availableReplicas: active.filter((p) => isPodAvailable(p, minReady, nowMs)).length,
    observedGeneration: rs.metadata.generation,
  };
}

export function statusEqual(a: ReplicaSetStatus | undefined, b: ReplicaSetStatus): boolean {
  return (
    (a?.replicas ?? 0) === b.replicas &&
    (a?.fullyLabeledReplicas ?? 0) === (b.fullyLabeledReplicas ?? 0) &&
    (a?.readyReplicas ?? 0) === (b.readyReplicas ?? 0) &&
    (a?.availableReplicas ?? 0) === (b.availableReplicas ?? 0) &&
    a?.observedGeneration === b.observedGeneration
  );
}

/** True when the pod's labels satisfy the ReplicaSet's selector. */
export function selectorMatches(rs: ReplicaSet, pod: Pod): boolean {
  const sel = rs.spec?.selector;
  if (!sel || (!sel.matchLabels && !sel.matchExpressions)) return false; // an empty selector matches nothing here
  return matchLabels(labelSelectorFromObject(sel), pod.metadata.labels);
}

/** The pod a ReplicaSet (or, with `owner`, a ReplicationController) creates: template labels/annotations/spec, a controller ref, a generated name. */
export function podFromTemplate(rs: ReplicaSet, name: string, owner: { apiVersion: string; kind: string } = { apiVersion: 'apps/v1', kind: 'ReplicaSet' }): Pod {
  const t = rs.spec?.template;
  const rsName = rs.metadata.name ?? '';
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      generateName: `${rsName}-`,
      namespace: rs.metadata.namespace,
      labels: { ...(t?.metadata?.labels ?? {}) },
      annotations: t?.metadata?.annotations ? { ...t.metadata.annotations } : undefined,
      ownerReferences: [newControllerRef(rs, owner.apiVersion, owner.kind)],
    },
    spec: structuredClone(t?.spec ?? { containers: [] }),
  };
}
