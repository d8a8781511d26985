/** Pod and owner predicates shared by the controllers (upstream `controller_utils.go`, `podutil`). */
import type { KubeObject, OwnerReference, Pod } from '@nodelet/api';

/** Not terminal and not being deleted: counts toward a ReplicaSet's replicas. */
export function isPodActive(p: Pod): boolean {
  const phase = p.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && !p.metadata.deletionTimestamp;
}

export function podReadyCondition(p: Pod): { status: string; lastTransitionTime?: string } | undefined {
  return p.status?.conditions?.find((c) => c.type === 'Ready');
}

export function isPodReady(p: Pod): boolean {
  return podReadyCondition(p)?.status === 'True';
}

/** Ready for at least `minReadySeconds` (0: ready is available). */
export function isPodAvailable(p: Pod, minReadySeconds: number, nowMs: number): boolean {
  const c = podReadyCondition(p);
  if (c?.status !== 'True') return false;
  if (!minReadySeconds) return true;
  const since = c.lastTransitionTime ? Date.parse(c.lastTransitionTime) : NaN;
  return Number.isFinite(since) && since + minReadySeconds * 1000 <= nowMs;
}

export function controllerRef(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata.ownerReferences?.find((r) => r.controller === true);
}

/**
 * `namespace/name` of the `kind` that controls `obj` (of API group `group`, when given), as the
 * work-queue key of that owner; undefined when something else or nothing controls it.
 */
export function ownerKey(obj: KubeObject, kind: string, group?: string): string | undefined {
  const ref = controllerRef(obj);
  if (ref?.kind !== kind || (group !== undefined && !ref.apiVersion.startsWith(`${group}/`))) return undefined;
  return `${obj.metadata.namespace}/${ref.name}`;
}

export function isControlledBy(obj: KubeObject, owner: KubeObject): boolean {
  const ref = controllerRef(obj);
  return ref !== undefined && ref.uid === owner.metadata.uid;
}

/** The ownerReference a controller puts on what it creates (blocks foreground deletion of the owner). */
export function newControllerRef(owner: KubeObject, apiVersion: string, kind: string): OwnerReference {
  return {
    apiVersion,
    kind,
    name: owner.metadata.name ?? '',
    uid: owner.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

export function keyOf(obj: KubeObject): string {
  const ns = obj.metadata.namespace;
  return ns ? `${ns}/${obj.metadata.name}` : (obj.metadata.name ?? '');
}

export function splitKey(key: string): { namespace?: string; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

/** The alphabet upstream uses for generated names (no vowels, no look-alike characters). */
const ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';

/** `n` random characters of that alphabet: pod names `<rs>-<5 chars>`. */
export function randomSuffix(random: () => number, n = 5): string {
  let s = '';
  for (let i = 0; i < n; i++) s += ALPHANUMS[Math.floor(random() * ALPHANUMS.length)] ?? 'x';
  return s;
}

/** Upstream `rand.SafeEncodeString`: maps each character of a number's digits into the same alphabet. */
export function safeEncode(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) out += ALPHANUMS[s.charCodeAt(i) % ALPHANUMS.length];
  return out;
}
