/**
 * PodInfo: what the scheduler needs to know about a pod, computed once when the pod is seen
 * (upstream `framework.PodInfo`): its requests (plain and with the scoring defaults), host ports,
 * spreading owner and priority. NodeInfos add and subtract these instead of re-reading pod specs.
 */
import type { Pod } from '@nodelet/api';
import { podAffinityInfo, type PodAffinityInfo } from './pod-affinity.js';
import { podRequests, type Resources } from './resources.js';

export interface HostPort {
  hostIP: string;
  protocol: string;
  port: number;
}

export interface PodInfo {
  /** `namespace/name`, the key of the informer and the scheduling queue. */
  readonly key: string;
  readonly pod: Pod;
  /** What NodeResourcesFit counts (component-helpers `PodRequests`). */
  readonly requests: Readonly<Resources>;
  /** The same with upstream's defaults for missing requests (what LeastAllocated scores). */
  readonly nonZeroRequests: Readonly<Resources>;
  readonly hostPorts: readonly HostPort[];
  /** `namespace/controller uid` for owner spreading; undefined without a controller reference. */
  readonly ownerKey: string | undefined;
  readonly priority: number;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  /** deletionTimestamp is set: topology spread does not count it (upstream #87621). */
  readonly terminating: boolean;
  /** Parsed pod (anti-)affinity terms; undefined when the pod has none. */
  readonly affinity: PodAffinityInfo | undefined;
}

export function podKey(pod: Pod): string {
  return `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name ?? ''}`;
}

/** Host ports a pod asks for (containers only, as upstream's NodePorts plugin). */
export function podHostPorts(pod: Pod): HostPort[] {
  const out: HostPort[] = [];
  for (const c of pod.spec?.containers ?? []) {
    for (const p of c.ports ?? []) {
      if (!p.hostPort || p.hostPort <= 0) continue;
      out.push({ hostIP: p.hostIP || '0.0.0.0', protocol: p.protocol || 'TCP', port: p.hostPort });
    }
  }
  return out;
}

/** The controller ownerReference uid of a pod, if any. */
export function controllerUid(pod: Pod): string | undefined {
  return pod.metadata.ownerReferences?.find((r) => r.controller)?.uid;
}

export function podPriority(pod: Pod): number {
  return (pod.spec as { priority?: number } | undefined)?.priority ?? 0;
}

/** Builds the PodInfo; throws ERR_INVALID_ARGUMENT when a request is not a valid quantity or a selector is invalid. */
export function newPodInfo(pod: Pod, key: string = podKey(pod)): PodInfo {
  const owner = controllerUid(pod);
  return {
    key,
    pod,
    requests: podRequests(pod),
    nonZeroRequests: podRequests(pod, { nonZero: true }),
    hostPorts: podHostPorts(pod),
    ownerKey: owner === undefined ? undefined : `${pod.metadata.namespace ?? 'default'}/${owner}`,
    priority: podPriority(pod),
    namespace: pod.metadata.namespace ?? 'default',
    labels: pod.metadata.labels ?? {},
    terminating: pod.metadata.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null,
    affinity: podAffinityInfo(pod),
  };
}
