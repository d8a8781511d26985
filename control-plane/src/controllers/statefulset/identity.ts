/**
 * A StatefulSet pod's stable identity (upstream stateful_set_utils.go): the name `<set>-<ordinal>`,
 * the pod-name and pod-index labels, hostname and subdomain (so a headless Service named
 * `serviceName` resolves `<pod>.<service>.<ns>.svc.<domain>`), and its claims
 * `<template>-<set>-<ordinal>` mounted in place of the template's volumes.
 */
import type { OwnerReference, PersistentVolumeClaim, Pod, PodTemplateSpec, StatefulSet } from '@nodelet/api';
import { CONTROLLER_REVISION_HASH_LABEL } from '../util/history.js';
import { newControllerRef } from '../util/pods.js';

export const POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name';
export const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index';

/** The ordinal of a pod named `<set>-<n>`, or undefined for any other name. */
export function ordinalOf(set: StatefulSet, p: Pod): number | undefined {
  const prefix = `${set.metadata.name}-`;
  const name = p.metadata.name ?? '';
  if (!name.startsWith(prefix)) return undefined;
  const rest = name.slice(prefix.length);
  return /^(0|[1-9]\d*)$/.test(rest) ? Number(rest) : undefined;
}

export const claimName = (set: StatefulSet, template: PersistentVolumeClaim, ordinal: number): string => `${template.metadata.name}-${set.metadata.name}-${ordinal}`;

/** The claims of one ordinal (upstream getPersistentVolumeClaims): the template with the selector's labels. */
export function claimsFor(set: StatefulSet, ordinal: number): PersistentVolumeClaim[] {
  return (set.spec?.volumeClaimTemplates ?? []).map((t) => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: claimName(set, t, ordinal),
      namespace: set.metadata.namespace,
      labels: { ...(t.metadata.labels ?? {}), ...(set.spec?.selector.matchLabels ?? {}) },
      annotations: t.metadata.annotations ? { ...t.metadata.annotations } : undefined,
    },
    spec: structuredClone(t.spec ?? {}),
  }));
}

/** A new pod for `ordinal` from `template` (the update revision's or, below the partition, the current one's). */
export function statefulPodFor(set: StatefulSet, template: PodTemplateSpec, ordinal: number, revisionName: string): Pod {
  const name = `${set.metadata.name}-${ordinal}`;
  const spec = structuredClone(template.spec ?? { containers: [] });
  const claims = set.spec?.volumeClaimTemplates ?? [];
  const claimVolumes = claims.map((t) => ({ name: t.metadata.name ?? '', persistentVolumeClaim: { claimName: claimName(set, t, ordinal) } }));
  spec.volumes = [...(spec.volumes ?? []).filter((v) => !claims.some((t) => t.metadata.name === v.name)), ...claimVolumes];
  spec.hostname = name;
  if (set.spec?.serviceName) spec.subdomain = set.spec.serviceName;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: set.metadata.namespace,
      labels: { ...(template.metadata?.labels ?? {}), [POD_NAME_LABEL]: name, [POD_INDEX_LABEL]: String(ordinal), [CONTROLLER_REVISION_HASH_LABEL]: revisionName },
      annotations: template.metadata?.annotations ? { ...template.metadata.annotations } : undefined,
      ownerReferences: [newControllerRef(set, 'apps/v1', 'StatefulSet')],
    },
    spec,
  };
}

/**
 * The owner references a claim of `set`'s ordinal should carry under the set's
 * `persistentVolumeClaimRetentionPolicy` (upstream updateClaimOwnerRefForSetAndPod): the set
 * (garbage collected with it) when `whenDeleted: Delete` and the ordinal is in range; the pod when
 * `whenScaled: Delete` and the ordinal is condemned (≥ replicas: collected once the pod is gone).
 * Other owners are kept; returns undefined when nothing changes.
 */
export function claimOwnersFor(set: StatefulSet, claim: PersistentVolumeClaim, pod: Pod | undefined, ordinal: number): OwnerReference[] | undefined {
  const policy = set.spec?.persistentVolumeClaimRetentionPolicy ?? {};
  const condemned = ordinal >= (set.spec?.replicas ?? 1);
  const setRef: OwnerReference = { apiVersion: 'apps/v1', kind: 'StatefulSet', name: set.metadata.name ?? '', uid: set.metadata.uid ?? '' };
  const podRef: OwnerReference | undefined = pod ? { apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name ?? '', uid: pod.metadata.uid ?? '' } : undefined;
  const wantSet = policy.whenDeleted === 'Delete' && !(policy.whenScaled === 'Delete' && condemned);
  const wantPod = policy.whenScaled === 'Delete' && condemned && podRef !== undefined;
  const current = claim.metadata.ownerReferences ?? [];
  const isSetRef = (r: OwnerReference): boolean => r.kind === 'StatefulSet' && r.uid === setRef.uid;
  // Any pod of this ordinal's name: a ref to an earlier pod of the same ordinal goes too.
  const isPodRef = (r: OwnerReference): boolean => r.kind === 'Pod' && r.apiVersion === 'v1' && r.name === `${set.metadata.name}-${ordinal}`;
  const next = current.filter((r) => !isSetRef(r) && !isPodRef(r));
  if (wantSet) next.push(setRef);
  if (wantPod) next.push(podRef);
  const same = next.length === current.length && next.every((r) => current.some((c) => c.uid === r.uid && c.kind === r.kind));
  return same ? undefined : next;
}
