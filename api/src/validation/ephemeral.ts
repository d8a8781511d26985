/**
 * Ephemeral container rules (kube's validateEphemeralContainers and
 * ValidatePodEphemeralContainersUpdate): debugging containers added to a running pod through the
 * `pods/ephemeralcontainers` subresource. They share the container fields but may not declare
 * anything that needs the pod to be set up for them (ports, probes, resources, lifecycle hooks),
 * and once added they are never changed or removed.
 */
import { forbiddenField, notFound, type FieldError } from './field-error.js';

type Obj = Record<string, unknown>;

/** Container fields an ephemeral container may not set. */
const FORBIDDEN = ['lifecycle', 'livenessProbe', 'ports', 'readinessProbe', 'resizePolicy', 'resources', 'restartPolicy', 'startupProbe'] as const;
const FORBIDDEN_WHY = 'cannot be set for an Ephemeral Container';

/** Set to something: kubectl sends `resources: {}` (a Go struct is never omitted), which is no value. */
function isSet(v: unknown): boolean {
  if (v === undefined || v === null) return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.values(v as Obj).some(isSet);
  return true;
}

/**
 * The ephemeral-only rules of each entry of `spec.ephemeralContainers` (the shared container rules
 * and the name's uniqueness across all three lists run in validatePodSpec). `targets`: the names
 * of the pod's containers and init containers.
 */
export function validateEphemeralFields(list: readonly unknown[], path: string, targets: ReadonlySet<string>): FieldError[] {
  const errs: FieldError[] = [];
  list.forEach((c, i) => {
    if (!c || typeof c !== 'object') return;
    const ec = c as Obj;
    const at = `${path}[${i}]`;
    for (const f of FORBIDDEN) if (isSet(ec[f])) errs.push(forbiddenField(`${at}.${f}`, FORBIDDEN_WHY));
    if (Array.isArray(ec.volumeMounts)) {
      ec.volumeMounts.forEach((m: Obj, j) => {
        if (m && (m.subPath || m.subPathExpr)) errs.push(forbiddenField(`${at}.volumeMounts[${j}].${m.subPath ? 'subPath' : 'subPathExpr'}`, FORBIDDEN_WHY));
      });
    }
    const target = ec.targetContainerName;
    if (target !== undefined && target !== '' && !targets.has(target as string)) errs.push(notFound(`${at}.targetContainerName`, target));
  });
  return errs;
}

const nameOf = (c: unknown): string | undefined => (c && typeof c === 'object' ? ((c as Obj).name as string | undefined) : undefined);

/**
 * An update of `spec.ephemeralContainers` through the subresource: entries may be added, never
 * removed or changed. `equal` compares two entries (the caller's deep equality).
 */
export function validateEphemeralContainersUpdate(next: unknown, old: unknown, path: string, equal: (a: unknown, b: unknown) => boolean): FieldError[] {
  const errs: FieldError[] = [];
  const nextList = Array.isArray(next) ? next : [];
  const byName = new Map(nextList.map((c, i) => [nameOf(c), i] as const));
  for (const prev of Array.isArray(old) ? old : []) {
    const name = nameOf(prev);
    const i = byName.get(name);
    if (i === undefined) errs.push(forbiddenField(path, `existing ephemeral containers ${JSON.stringify(name)} may not be removed`));
    else if (!equal(prev, nextList[i])) errs.push(forbiddenField(`${path}[${i}]`, `existing ephemeral containers ${JSON.stringify(name)} may not be changed`));
  }
  return errs;
}
