/** Pod strategy: defaulting, initial status, spec validation and update immutability. */
import { admitNewPodSpec, defaultPodSpec, defaultRequestsFromLimits, forbiddenField, podQOSClass, rfc3339, validateEphemeralContainersUpdate, validatePodSpec, type FieldError, type PodSpec } from '@nodelet/api';
import { cloneJson, isPlainObject, jsonEqual, type ApiObject, type Json } from '../object.js';
import type { Strategy } from '../resource.js';
import { podResizeErrors, resizePolicyErrors } from './pod-resize.js';

/**
 * Spec fields a pod update may change (kube: image, activeDeadlineSeconds, tolerations additions,
 * grace); `ephemeral`: the update is through pods/ephemeralcontainers, which changes only that list.
 */
function mutableView(spec: Json, ephemeral: boolean): Json {
  const copy = cloneJson(spec);
  if (ephemeral) delete copy.ephemeralContainers;
  for (const list of ['containers', 'initContainers']) {
    if (Array.isArray(copy[list])) for (const c of copy[list] as Json[]) delete c.image;
  }
  delete copy.activeDeadlineSeconds;
  delete copy.tolerations;
  delete copy.terminationGracePeriodSeconds;
  // Checked on its own: gates may only be removed (schedulingGatesUpdateErrors).
  delete copy.schedulingGates;
  return copy;
}

function gateNames(spec: Json | undefined): string[] {
  const gates = spec?.schedulingGates;
  return Array.isArray(gates) ? gates.map((g) => String((g as Json)?.name ?? '')) : [];
}

/** Upstream: after creation scheduling gates can only be removed, never added. */
function schedulingGatesUpdateErrors(spec: Json, old: Json): FieldError[] {
  const before = new Set(gateNames(old));
  return gateNames(spec).flatMap((name, i) =>
    before.has(name) ? [] : [forbiddenField(`spec.schedulingGates[${i}].name`, `only deletion is allowed, but found new scheduling gate '${name}'`)],
  );
}

/** The condition a gated pod is created with (upstream applySchedulingGatedCondition). */
export const SCHEDULING_GATED_MESSAGE = 'Scheduling is blocked due to non-empty scheduling gates';

export const podStrategy: Strategy = {
  defaults(obj) {
    if (isPlainObject(obj.spec)) defaultPodSpec(obj.spec);
  },
  prepareForCreate(obj) {
    const spec = (obj.spec ?? {}) as Json;
    if (isPlainObject(obj.spec)) {
      admitNewPodSpec(obj.spec, { mirror: obj.metadata.annotations?.['kubernetes.io/config.mirror'] !== undefined });
      defaultRequestsFromLimits(obj.spec);
    }
    const status: Json = { phase: 'Pending', qosClass: podQOSClass(spec as unknown as PodSpec) };
    if (gateNames(spec).length > 0) {
      status.conditions = [
        { type: 'PodScheduled', status: 'False', lastProbeTime: null, lastTransitionTime: rfc3339(Date.now()), reason: 'SchedulingGated', message: SCHEDULING_GATED_MESSAGE },
      ];
    }
    obj.status = status;
  },
  validate(obj: ApiObject, old?: ApiObject, subresource?: string): FieldError[] {
    // A status write (and any update that kept the stored spec object) has nothing new in its
    // spec: every error below would be one the stored spec already had, which the ratchet drops.
    if (old && obj.spec === old.spec) return [];
    let errs = [...validatePodSpec(obj.spec, 'spec'), ...resizePolicyErrors(obj.spec)];
    const ephemeral = subresource === 'ephemeralcontainers';
    const listOf = (o: ApiObject): unknown => (isPlainObject(o.spec) ? o.spec.ephemeralContainers : undefined);
    const added = listOf(obj);
    // Ephemeral containers come only through the subresource, into a pod that already exists.
    if (!old && Array.isArray(added) && added.length > 0) errs.push(forbiddenField('spec.ephemeralContainers', 'cannot be set on create'));
    if (old && ephemeral) errs.push(...validateEphemeralContainersUpdate(added, listOf(old), 'spec.ephemeralContainers', jsonEqual));
    if (old && errs.length) {
      // Ratchet: an update (a status write, a finalizer removal) is not refused for what the
      // stored spec already had, so pods stored before a rule existed stay updatable.
      const key = (e: FieldError) => `${e.type} ${e.field} ${e.message}`;
      const before = new Set([...validatePodSpec(old.spec, 'spec'), ...resizePolicyErrors(old.spec)].map(key));
      errs = errs.filter((e) => !before.has(key(e)));
    }
    if (!old && isPlainObject(obj.spec) && obj.spec.nodeName && gateNames(obj.spec).length > 0) {
      errs.push(forbiddenField('spec.nodeName', 'cannot be set until all schedulingGates have been cleared'));
    }
    if (old && subresource === 'resize') return [...errs, ...podResizeErrors(obj, old)];
    if (old && errs.length === 0 && isPlainObject(obj.spec) && isPlainObject(old.spec)) {
      errs.push(...schedulingGatesUpdateErrors(obj.spec, old.spec));
      if (!jsonEqual(mutableView(obj.spec, ephemeral), mutableView(old.spec, ephemeral))) {
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
