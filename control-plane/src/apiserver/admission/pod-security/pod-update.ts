/**
 * Which pod updates PodSecurity judges again (upstream isSignificantPodUpdate): only a change of
 * the containers' count or images, or an ephemeral container added or re-imaged. Everything
 * else a pod update may change (labels, annotations, tolerations, status) leaves the checks as
 * they were when the pod was admitted.
 */
import { isPlainObject, type ApiObject, type Json } from '../../object.js';

const list = (spec: unknown, key: string): Json[] => (isPlainObject(spec) && Array.isArray(spec[key]) ? (spec[key] as unknown[]).filter(isPlainObject) : []);

export function isSignificantPodUpdate(pod: ApiObject, oldPod: ApiObject): boolean {
  for (const key of ['containers', 'initContainers']) {
    const now = list(pod.spec, key);
    const before = list(oldPod.spec, key);
    if (now.length !== before.length) return true;
    if (now.some((c, i) => c.image !== before[i]!.image)) return true;
  }
  const oldEphemeral = list(oldPod.spec, 'ephemeralContainers');
  return list(pod.spec, 'ephemeralContainers').some((c) => {
    const old = oldEphemeral.find((o) => o.name === c.name);
    return !old || old.image !== c.image;
  });
}
