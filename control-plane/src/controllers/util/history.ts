/**
 * ControllerRevisions of DaemonSets and StatefulSets (upstream pkg/controller/history): each
 * revision stores the patch `{"spec":{"template":{…,"$patch":"replace"}}}` that `kubectl rollout
 * undo` applies (a strategic merge patch), JSON with sorted keys as Go's map marshalling writes
 * it, so equal templates give byte-equal data.
 */
import type { ControllerRevision, KubeObject, PodTemplateSpec } from '@nodelet/api';
import { canonicalJson, computeHash } from '../deployment/util.js';
import { newControllerRef } from './pods.js';

/** Label on the revision (and the pods) naming the revision hash. */
export const CONTROLLER_REVISION_HASH_LABEL = 'controller-revision-hash';

/** Go's json.Marshal of a map: keys sorted at every level (null members kept, as Go keeps them). */
export function sortedJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${sortedJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/** The revision data of a template: the replace patch kubectl applies on undo. */
export function templatePatch(template: PodTemplateSpec | undefined): Record<string, unknown> {
  return { spec: { template: { ...structuredClone(template ?? {}), $patch: 'replace' } } };
}

/** Whether a stored revision holds `template` (upstream history.Match compares the bytes). */
export function revisionMatches(rev: ControllerRevision, template: PodTemplateSpec | undefined): boolean {
  return canonicalJson(rev.data) === canonicalJson(templatePatch(template));
}

/** The revision hash of a template (+ collisionCount): FNV-32a, encoded in the safe alphabet. */
export function templateHash(template: PodTemplateSpec | undefined, collisionCount?: number): string {
  return computeHash(template, collisionCount);
}

/** A new revision `<owner>-<hash>` owned by `owner`, labelled with the template's labels and the hash. */
export function newControllerRevision(
  owner: KubeObject,
  ownerKind: { apiVersion: string; kind: string },
  template: PodTemplateSpec | undefined,
  revision: number,
  hash: string,
): ControllerRevision {
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: `${(owner.metadata.name ?? '').slice(0, 223)}-${hash}`,
      namespace: owner.metadata.namespace,
      labels: { ...(template?.metadata?.labels ?? {}), [CONTROLLER_REVISION_HASH_LABEL]: hash },
      annotations: owner.metadata.annotations?.['kubernetes.io/change-cause'] ? { 'kubernetes.io/change-cause': owner.metadata.annotations['kubernetes.io/change-cause'] } : undefined,
      ownerReferences: [newControllerRef(owner, ownerKind.apiVersion, ownerKind.kind)],
    },
    data: JSON.parse(sortedJson(templatePatch(template))) as unknown,
    revision,
  };
}

export const maxRevisionNumber = (revs: readonly ControllerRevision[]): number => revs.reduce((m, r) => Math.max(m, r.revision ?? 0), 0);

/**
 * Which revisions to delete so at most `limit` old ones remain: the oldest first, never the
 * current one nor one a live pod still runs (`inUse`: revision-hash label values or names).
 */
export function revisionsToPrune(revs: readonly ControllerRevision[], current: ControllerRevision | undefined, inUse: ReadonlySet<string>, limit: number): ControllerRevision[] {
  const old = revs
    .filter((r) => r !== current && r.metadata.name !== current?.metadata.name)
    .filter((r) => !inUse.has(r.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? '') && !inUse.has(r.metadata.name ?? ''))
    .sort((a, b) => (a.revision ?? 0) - (b.revision ?? 0));
  const liveOld = revs.filter((r) => r !== current && r.metadata.name !== current?.metadata.name).length;
  const excess = liveOld - limit;
  return excess > 0 ? old.slice(0, excess) : [];
}
