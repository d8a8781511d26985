/**
 * What a pod update carries that several folders read (kubelet `types/pod_update.go`): where the pod
 * came from (the static and mirror pod annotations) and how the agent edits the status of a pod it
 * stops on its own (eviction, node shutdown, admission refusal, preemption).
 */
import type { Pod, PodStatus } from '@nodelet/api/agent';

export const CONFIG_SOURCE = 'kubernetes.io/config.source';
export const CONFIG_HASH = 'kubernetes.io/config.hash';
export const CONFIG_MIRROR = 'kubernetes.io/config.mirror';

/** A mirror pod: the API's copy of a static pod, which the agent never runs itself. */
export function isMirrorPod(p: Pod): boolean {
  return p.metadata.annotations?.[CONFIG_MIRROR] !== undefined;
}

/** A static pod, read from `--pod-manifest-path` (source/static-pods.ts). */
export function isStaticPod(p: Pod): boolean {
  return p.metadata.annotations?.[CONFIG_SOURCE] === 'file';
}

/** Edits the status the agent computed for a pod it stopped on its own (kubelet PodStatusFunc). */
export type PodStatusFn = (status: PodStatus) => void;
