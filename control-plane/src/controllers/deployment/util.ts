/**
 * Deployment helpers (upstream `deployment/util/deployment_util.go`): pod-template-hash, matching a
 * ReplicaSet to the current template, revisions, and maxSurge/maxUnavailable resolution.
 */
import type { Deployment, PodTemplateSpec, ReplicaSet } from '@nodelet/api';
import { safeEncode } from '../util/pods.js';

export const POD_TEMPLATE_HASH = 'pod-template-hash';
export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
export const REVISION_HISTORY_ANNOTATION = 'deployment.kubernetes.io/revision-history';
export const DESIRED_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/desired-replicas';
export const MAX_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/max-replicas';
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** Annotations a Deployment does not copy to its ReplicaSets (kubectl's rollout undo skips the same set). */
const SKIP_ANNOTATIONS = new Set([LAST_APPLIED, REVISION_ANNOTATION, REVISION_HISTORY_ANNOTATION, DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION, 'deprecated.deployment.rollback.to']);

/**
 * JSON with object keys sorted, so equal templates serialise equally. A `null` field counts as
 * absent, as in Go's semantic equality (kubectl sends `creationTimestamp: null` in templates).
 */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined && x !== null)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

function withoutHashLabel(t: PodTemplateSpec | undefined): PodTemplateSpec {
  const copy = structuredClone(t ?? {});
  if (copy.metadata?.labels) {
    delete copy.metadata.labels[POD_TEMPLATE_HASH];
    if (Object.keys(copy.metadata.labels).length === 0) delete copy.metadata.labels;
  }
  return copy;
}

/** FNV-1a, 32 bit (upstream hashes the template with FNV-32a too; the exact value differs). */
function fnv32a(s: string): number {
  let h = 0x811c9dc5;
  for (const b of Buffer.from(s, 'utf8')) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** The `pod-template-hash` of a template (+ collisionCount, so a collision yields a new name). */
export function computeHash(template: PodTemplateSpec | undefined, collisionCount?: number): string {
  let s = canonicalJson(withoutHashLabel(template));
  if (collisionCount) s += `#${collisionCount}`;
  return safeEncode(String(fnv32a(s)));
}

/** Upstream `EqualIgnoreHash`: same template apart from the pod-template-hash label. */
export function templatesEqualIgnoringHash(a: PodTemplateSpec | undefined, b: PodTemplateSpec | undefined): boolean {
  return canonicalJson(withoutHashLabel(a)) === canonicalJson(withoutHashLabel(b));
}

export function revisionOf(rs: ReplicaSet): number {
  const v = Number.parseInt(rs.metadata.annotations?.[REVISION_ANNOTATION] ?? '', 10);
  return Number.isFinite(v) ? v : 0;
}

export function maxRevision(rss: readonly ReplicaSet[]): number {
  return rss.reduce((m, rs) => Math.max(m, revisionOf(rs)), 0);
}

/** The ReplicaSet running the current template: the oldest one if several match. */
export function findNewReplicaSet(d: Deployment, rss: readonly ReplicaSet[]): ReplicaSet | undefined {
  return [...rss].sort(byCreation).find((rs) => templatesEqualIgnoringHash(rs.spec?.template, d.spec?.template));
}

export function byCreation(a: ReplicaSet, b: ReplicaSet): number {
  const ta = Date.parse(a.metadata.creationTimestamp ?? '') || 0;
  const tb = Date.parse(b.metadata.creationTimestamp ?? '') || 0;
  if (ta !== tb) return ta - tb;
  return (a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1;
}

/** An int or a percentage of `total`; surge rounds up, unavailable rounds down (upstream). */
export function resolveIntOrPercent(v: number | string | undefined, total: number, roundUp: boolean, dflt: string): number {
  const x = v ?? dflt;
  if (typeof x === 'number') return x;
  const m = /^(\d+)%$/.exec(x);
  if (!m) {
    const n = Number.parseInt(x, 10);
    if (Number.isFinite(n)) return n;
    throw new RangeError(`invalid value "${x}": must be an integer or a percentage`);
  }
  const f = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(f) : Math.floor(f);
}

/** maxSurge and maxUnavailable for a RollingUpdate; both 0 would deadlock, so unavailable becomes 1. */
export function resolveFenceposts(d: Deployment): { maxSurge: number; maxUnavailable: number } {
  const desired = d.spec?.replicas ?? 1;
  const ru = d.spec?.strategy?.rollingUpdate;
  const maxSurge = resolveIntOrPercent(ru?.maxSurge, desired, true, '25%');
  let maxUnavailable = resolveIntOrPercent(ru?.maxUnavailable, desired, false, '25%');
  if (maxSurge === 0 && maxUnavailable === 0) maxUnavailable = 1;
  return { maxSurge, maxUnavailable };
}

export function maxUnavailableOf(d: Deployment): number {
  const desired = d.spec?.replicas ?? 1;
  if (d.spec?.strategy?.type === 'Recreate' || desired === 0) return 0;
  return Math.min(resolveFenceposts(d).maxUnavailable, desired);
}

/** Deployment annotations copied to its ReplicaSets (change-cause and user annotations). */
export function copiedAnnotations(d: Deployment): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(d.metadata.annotations ?? {})) if (!SKIP_ANNOTATIONS.has(k)) out[k] = v;
  return out;
}

/** The ReplicaSet a Deployment creates for its current template. */
export function newReplicaSetFor(d: Deployment, hash: string, replicas: number, revision: number): ReplicaSet {
  const template = structuredClone(d.spec!.template);
  template.metadata = { ...(template.metadata ?? {}), labels: { ...(template.metadata?.labels ?? {}), [POD_TEMPLATE_HASH]: hash } };
  const selector = structuredClone(d.spec!.selector);
  selector.matchLabels = { ...(selector.matchLabels ?? {}), [POD_TEMPLATE_HASH]: hash };
  const { maxSurge } = d.spec?.strategy?.type === 'Recreate' ? { maxSurge: 0 } : resolveFenceposts(d);
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: `${d.metadata.name}-${hash}`,
      namespace: d.metadata.namespace,
      labels: { ...(template.metadata.labels ?? {}) },
      annotations: {
        ...copiedAnnotations(d),
        [REVISION_ANNOTATION]: String(revision),
        [DESIRED_REPLICAS_ANNOTATION]: String(d.spec?.replicas ?? 1),
        [MAX_REPLICAS_ANNOTATION]: String((d.spec?.replicas ?? 1) + maxSurge),
      },
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'Deployment', name: d.metadata.name ?? '', uid: d.metadata.uid ?? '', controller: true, blockOwnerDeletion: true },
      ],
    },
    spec: { replicas, minReadySeconds: d.spec?.minReadySeconds, selector, template },
  };
}
