/** Pod strategy: defaulting, initial status, spec validation and update immutability. */
import { admitNewPodSpec, defaultPodSpec, forbiddenField, validatePodSpec, type FieldError } from '@nodelet/api';
import { deepClone, isPlainObject, jsonEqual, type ApiObject, type Json } from '../object.js';
import type { Strategy } from '../resource.js';

/** QoS class from requests/limits, as kubelet and the apiserver compute it. */
export function qosClass(spec: Json): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const cs = [...((spec.containers ?? []) as Json[]), ...((spec.initContainers ?? []) as Json[])];
  let any = false;
  let guaranteed = cs.length > 0;
  for (const c of cs) {
    const res = (c.resources ?? {}) as { requests?: Record<string, string>; limits?: Record<string, string> };
    const req = res.requests ?? {};
    const lim = res.limits ?? {};
    if (Object.keys(req).length || Object.keys(lim).length) any = true;
    for (const r of ['cpu', 'memory']) {
      if (lim[r] === undefined || (req[r] !== undefined && req[r] !== lim[r])) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

/** Spec fields a pod update may change (kube: image, activeDeadlineSeconds, tolerations additions, grace). */
function mutableView(spec: Json): Json {
  const copy = deepClone(spec);
  for (const list of ['containers', 'initContainers']) {
    if (Array.isArray(copy[list])) for (const c of copy[list] as Json[]) delete c.image;
  }
  delete copy.activeDeadlineSeconds;
  delete copy.tolerations;
  delete copy.terminationGracePeriodSeconds;
  return copy;
}

export const podStrategy: Strategy = {
  defaults(obj) {
    if (isPlainObject(obj.spec)) defaultPodSpec(obj.spec);
  },
  prepareForCreate(obj) {
    const spec = (obj.spec ?? {}) as Json;
    if (isPlainObject(obj.spec)) admitNewPodSpec(obj.spec, { mirror: obj.metadata.annotations?.['kubernetes.io/config.mirror'] !== undefined });
    obj.status = { phase: 'Pending', qosClass: qosClass(spec) };
  },
  validate(obj: ApiObject, old?: ApiObject): FieldError[] {
    let errs = validatePodSpec(obj.spec, 'spec');
    if (old && errs.length) {
      // Ratchet: an update (a status write, a finalizer removal) is not refused for what the
      // stored spec already had, so pods stored before a rule existed stay updatable.
      const key = (e: FieldError) => `${e.type} ${e.field} ${e.message}`;
      const before = new Set(validatePodSpec(old.spec, 'spec').map(key));
      errs = errs.filter((e) => !before.has(key(e)));
    }
    if (old && errs.length === 0 && isPlainObject(obj.spec) && isPlainObject(old.spec)) {
      if (!jsonEqual(mutableView(obj.spec), mutableView(old.spec))) {
        errs.push(
          forbiddenField(
            'spec',
            'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
          ),
        );
      }
    }
    return errs;
  },
};
