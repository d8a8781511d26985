/**
 * The RuntimeClass admission plugin (upstream plugin/pkg/admission/runtimeclass), for new pods
 * that name `spec.runtimeClassName`:
 *
 *   - the RuntimeClass must exist (403 `pod rejected: RuntimeClass "x" not found`);
 *   - its `overhead.podFixed` becomes `spec.overhead` (a pod that sets a different overhead, or
 *     sets one without a class that defines it, is refused);
 *   - its `scheduling.nodeSelector` is merged into the pod's (a key with another value is a
 *     conflict) and its tolerations are merged with the pod's, keeping only the wider of two
 *     tolerations that overlap.
 *
 * Mutating and validating, as upstream's plugin is both.
 */
import type { Toleration } from '@nodelet/api';
import { forbidden } from '../status.js';
import { isPlainObject, jsonEqual, type Json } from '../object.js';
import type { AdmissionPlugin } from './types.js';

/** Whether `ss` tolerates everything `t` does (upstream isSuperset). */
function isSuperset(ss: Toleration, t: Toleration): boolean {
  if (jsonEqual(ss, t)) return true;
  if ((t.key ?? '') !== (ss.key ?? '') && ((ss.key ?? '') !== '' || ss.operator !== 'Exists')) return false;
  if ((t.effect ?? '') !== (ss.effect ?? '') && (ss.effect ?? '') !== '') return false;
  if (ss.effect === 'NoExecute' && ss.tolerationSeconds !== undefined) {
    if (t.tolerationSeconds === undefined || t.tolerationSeconds > ss.tolerationSeconds) return false;
  }
  if (ss.operator === 'Exists') return true;
  if (ss.operator === undefined || ss.operator === 'Equal') return t.operator === 'Equal' && (t.value ?? '') === (ss.value ?? '');
  return false;
}

/** Both lists in order, without a toleration another one already covers (upstream MergeTolerations). */
export function mergeTolerations(first: readonly Toleration[], second: readonly Toleration[]): Toleration[] {
  const all = [...first, ...second];
  const merged: Toleration[] = [];
  all.forEach((t, i) => {
    if (merged.some((m) => isSuperset(m, t))) return;
    if (all.slice(i + 1).some((later) => !jsonEqual(t, later) && isSuperset(later, t))) return;
    merged.push(t);
  });
  return merged;
}

export const runtimeClassAdmission: AdmissionPlugin = async (ctx, r) => {
  if (r.operation !== 'CREATE' || r.subresource || r.def.group !== '' || r.def.plural !== 'pods' || !r.object) return;
  const spec = r.object.spec;
  if (!isPlainObject(spec)) return;
  const refuse = (why: string): never => {
    throw forbidden(`pods "${r.object!.metadata.name ?? ''}" is forbidden: ${why}`);
  };
  const className = spec.runtimeClassName;
  let rc: Json | undefined;
  if (typeof className === 'string' && className !== '') {
    rc = await ctx.resource('node.k8s.io', 'v1', 'runtimeclasses')?.registry.find(undefined, className);
    if (!rc) refuse(`pod rejected: RuntimeClass "${className}" not found`);
  }
  // 1. Overhead: the class's, or none.
  const podFixed = isPlainObject(rc?.overhead) && isPlainObject(rc.overhead.podFixed) ? rc.overhead.podFixed : undefined;
  if (podFixed) {
    if (spec.overhead !== undefined && !jsonEqual(spec.overhead, podFixed)) refuse("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
    spec.overhead = structuredClone(podFixed);
  } else if (spec.overhead !== undefined) {
    refuse('pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');
  }
  // 2. Scheduling: node selector and tolerations merged into the pod's.
  const scheduling = isPlainObject(rc?.scheduling) ? rc.scheduling : undefined;
  if (!scheduling) return;
  const classSelector = (isPlainObject(scheduling.nodeSelector) ? scheduling.nodeSelector : {}) as Record<string, string>;
  if (isPlainObject(spec.nodeSelector)) {
    const podSelector = spec.nodeSelector as Record<string, string>;
    for (const [key, value] of Object.entries(classSelector)) {
      if (key in podSelector && podSelector[key] !== value) {
        refuse(`conflict: runtimeClass.scheduling.nodeSelector[${key}] = ${value}; pod.spec.nodeSelector[${key}] = ${podSelector[key]}`);
      }
      podSelector[key] = value;
    }
  } else if (Object.keys(classSelector).length) {
    spec.nodeSelector = { ...classSelector };
  }
  const classTolerations = (Array.isArray(scheduling.tolerations) ? scheduling.tolerations : []) as Toleration[];
  const merged = mergeTolerations((Array.isArray(spec.tolerations) ? spec.tolerations : []) as Toleration[], classTolerations);
  if (merged.length) spec.tolerations = merged;
};
