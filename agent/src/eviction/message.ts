/**
 * What an evicted pod says (kubelet eviction/helpers.go evictionMessage and
 * eviction_manager.go evictPod): the message, with its trailing spaces, is kubelet's word for
 * word because people and tools match on it; the status is phase Failed, reason Evicted, and the
 * DisruptionTarget condition with reason TerminationByKubelet.
 *
 *   The node was low on resource: memory. Threshold quantity: 100Mi, available: 81236Ki.
 *   Container web was using 1204Ki, request is 0, has larger consumption of memory.
 */
import { canonicalQuantity, formatQuantity, type Pod, type PodStatus } from '@nodelet/api/agent';
import type { PodStatusFn } from '../kubecontainer/pod-update.js';
import { markDisruptedByKubelet } from '../status/disruption-target.js';
import { parseQuantity } from '../util/quantity.js';
import type { ContainerStats } from '../stats/types.js';
import type { PodStatsFn } from './ranking.js';
import { SIGNAL_RESOURCE, type Observation } from './signals.js';
import { thresholdAmount, type Threshold } from './thresholds.js';

/** The pod status reason of an eviction (kubelet eviction.Reason), also the event's reason. */
export const EVICTED_REASON = 'Evicted';

/** How a resource's numbers print: bytes as binary quantities, counts as decimal ones. */
function fmt(resource: string, n: number): string {
  return formatQuantity(Math.max(0, Math.floor(n)), resource === 'memory' || resource === 'ephemeral-storage' ? 'BinarySI' : 'DecimalSI');
}

function containerUsage(resource: string, c: ContainerStats): number | undefined {
  if (resource === 'memory') return c.memory?.workingSetBytes;
  if (resource === 'ephemeral-storage') {
    const root = c.rootfs?.usedBytes;
    const logs = c.logs?.usedBytes;
    return root === undefined || logs === undefined ? undefined : root + logs;
  }
  return undefined;
}

/**
 * kubelet's eviction message for `pod` evicted under `threshold`: the resource, the threshold and
 * what was available, then every container using more than it requested.
 */
export function evictionMessage(pod: Pod, threshold: Threshold, observation: Observation | undefined, stats: PodStatsFn): string {
  const resource = SIGNAL_RESOURCE[threshold.signal];
  let msg = `The node was low on resource: ${resource}. `;
  if (observation) {
    const quantity = threshold.value.quantity !== undefined ? canonicalQuantity(threshold.raw) : fmt(resource, thresholdAmount(threshold.value, observation.capacity));
    msg += `Threshold quantity: ${quantity}, available: ${fmt(resource, observation.available)}. `;
  }
  const ps = stats(pod);
  if (!ps) return msg;
  for (const cs of ps.containers) {
    const spec = pod.spec?.containers.find((c) => c.name === cs.name);
    if (!spec) continue;
    const usage = containerUsage(resource, cs);
    const raw = spec.resources?.requests?.[resource];
    const none = raw === undefined || raw === null;
    const request = none ? '0' : canonicalQuantity(String(raw));
    if (usage !== undefined && usage > (none ? 0 : parseQuantity(raw))) {
      msg += `Container ${cs.name} was using ${fmt(resource, usage)}, request is ${request}, has larger consumption of ${resource}. `;
    }
  }
  return msg;
}

/** The status edit of an evicted pod (kubelet evictPod's killPodFunc callback). */
export function evictedStatus(message: string, now: () => number): PodStatusFn {
  return (status: PodStatus) => markDisruptedByKubelet(status, { reason: EVICTED_REASON, message, now: now() });
}
