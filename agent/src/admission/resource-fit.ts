/**
 * The resource fit on the node (kubelet lifecycle predicate admit, the scheduler's NodeResourcesFit
 * run again where the pod lands): a pod bound with `spec.nodeName` skips the scheduler, so the node
 * is the last to check that its requests fit in the allocatable left over by the pods it already
 * runs. Refusals read as kubelet's: reason `OutOf<resource>` and
 * "Node didn't have enough resource: cpu, requested: 1500, used: 500, capacity: 1900"
 * (CPU in millicores, memory and storage in bytes, pods in pods).
 */
import type { Pod } from '@nodelet/api';
import { podRequest } from '../eviction/ranking.js';
import { parseQuantity } from '../util/quantity.js';
import { ADMIT, type PodAdmitHandler } from './admit.js';

/** The resources checked, and how one unit of each prints (CPU as millicores). */
const RESOURCES: ReadonlyArray<[name: string, scale: number]> = [['cpu', 1000], ['memory', 1], ['ephemeral-storage', 1]];

function quantity(v: string | number | undefined | null): number | undefined {
  if (v === undefined || v === null) return undefined;
  try {
    return parseQuantity(v);
  } catch {
    return undefined;
  }
}

function request(pod: Pod, resource: string): number {
  try {
    return podRequest(pod, resource);
  } catch {
    return 0; // a malformed quantity never passed API validation; do not refuse for it here
  }
}

/** `allocatable`: the node's status.allocatable, undefined until the node is registered (then all fit). */
export function resourceFitAdmitHandler(allocatable: () => Readonly<Record<string, string | number>> | undefined): PodAdmitHandler {
  return (pod, admitted) => {
    const alloc = allocatable();
    if (!alloc) return ADMIT;
    const maxPods = quantity(alloc.pods);
    if (maxPods !== undefined && admitted.length + 1 > maxPods) {
      return { admit: false, reason: 'OutOfpods', message: insufficient('pods', 1, admitted.length, maxPods) };
    }
    for (const [name, scale] of RESOURCES) {
      const want = request(pod, name);
      const capacity = quantity(alloc[name]);
      if (want <= 0 || capacity === undefined) continue;
      const used = admitted.reduce((sum, p) => sum + request(p, name), 0);
      if (want > capacity - used) {
        const n = (x: number): number => Math.ceil(x * scale - 1e-9);
        return { admit: false, reason: `OutOf${name}`, message: insufficient(name, n(want), n(used), n(capacity)) };
      }
    }
    return ADMIT;
  };
}

function insufficient(resource: string, requested: number, used: number, capacity: number): string {
  return `Node didn't have enough resource: ${resource}, requested: ${requested}, used: ${used}, capacity: ${capacity}`;
}
