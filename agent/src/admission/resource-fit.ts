/**
 * The resource fit on the node (kubelet lifecycle predicate admit, the scheduler's NodeResourcesFit
 * run again where the pod lands): a pod bound with `spec.nodeName` skips the scheduler, so the node
 * is the last to check that its requests fit in the allocatable left over by the pods it already
 * runs. Refusals read as kubelet's: reason `OutOf<resource>` and
 * "Node didn't have enough resource: cpu, requested: 1500, used: 500, capacity: 1900"
 * (CPU in millicores, memory and storage in bytes, pods in pods).
 *
 * Like kubelet, every resource that is short is collected, then a failure handler may recover
 * (critical-preemption.ts evicts pods for a critical pod); when it does not, the first shortage
 * is the refusal.
 */
import type { Pod } from '@nodelet/api/agent';
import { podRequest } from '../eviction/ranking.js';
import { parseQuantity } from '../util/quantity.js';
import { ADMIT, type PodAdmitHandler, type PodAdmitResult } from './admit.js';

/** The resources checked, and how one unit of each prints (CPU as millicores). */
const RESOURCES: ReadonlyArray<[name: string, scale: number]> = [['cpu', 1000], ['memory', 1], ['ephemeral-storage', 1]];

/** One resource the pod is short of (kubelet InsufficientResourceError), in kubelet's units. */
export interface InsufficientResource {
  resource: string;
  requested: number;
  used: number;
  capacity: number;
}

/**
 * What may turn a resource refusal into an admission (kubelet AdmissionFailureHandler): returns
 * the result to use instead, or undefined to refuse with the first shortage as usual.
 */
export type AdmissionFailureHandler = (pod: Pod, short: readonly InsufficientResource[]) => PodAdmitResult | undefined;

function quantity(v: string | number | undefined | null): number | undefined {
  if (v === undefined || v === null) return undefined;
  try {
    return parseQuantity(v);
  } catch {
    return undefined;
  }
}

/**
 * The pod's request for `resource` in kubelet's integer units (CPU millicores, bytes, and 1 for
 * `pods`), as kubelet's resource.GetResourceRequest.
 */
export function requestUnits(pod: Pod, resource: string): number {
  if (resource === 'pods') return 1;
  const scale = RESOURCES.find(([n]) => n === resource)?.[1] ?? 1;
  let v: number;
  try {
    v = podRequest(pod, resource);
  } catch {
    return 0; // a malformed quantity never passed API validation; do not refuse for it here
  }
  return Math.ceil(v * scale - 1e-9);
}

/** The node's allocatable `resource` in kubelet's integer units (as requestUnits); undefined when unknown. */
export function capacityUnits(alloc: Readonly<Record<string, string | number>>, resource: string): number | undefined {
  const raw = quantity(alloc[resource]);
  if (raw === undefined) return undefined;
  const scale = RESOURCES.find(([n]) => n === resource)?.[1] ?? 1;
  return Math.ceil(raw * scale - 1e-9);
}

/** Every resource `pod` is short of on a node with `alloc` that runs `admitted`, pods first. */
export function insufficientResources(pod: Pod, admitted: readonly Pod[], alloc: Readonly<Record<string, string | number>>): InsufficientResource[] {
  const short: InsufficientResource[] = [];
  const maxPods = quantity(alloc.pods);
  if (maxPods !== undefined && admitted.length + 1 > maxPods) short.push({ resource: 'pods', requested: 1, used: admitted.length, capacity: maxPods });
  for (const [name] of RESOURCES) {
    const want = requestUnits(pod, name);
    const capacity = capacityUnits(alloc, name);
    if (want <= 0 || capacity === undefined) continue;
    const used = admitted.reduce((sum, p) => sum + requestUnits(p, name), 0);
    if (want > capacity - used) short.push({ resource: name, requested: want, used, capacity });
  }
  return short;
}

/**
 * `allocatable`: the node's status.allocatable, undefined until the node is registered (then all fit).
 * `onFailure`: kubelet's admission failure handler, consulted before a refusal.
 */
export function resourceFitAdmitHandler(allocatable: () => Readonly<Record<string, string | number>> | undefined, onFailure?: AdmissionFailureHandler): PodAdmitHandler {
  return (pod, admitted) => {
    const alloc = allocatable();
    if (!alloc) return ADMIT;
    const short = insufficientResources(pod, admitted, alloc);
    if (short.length === 0) return ADMIT;
    const recovered = onFailure?.(pod, short);
    if (recovered) return recovered;
    const first = short[0]!;
    return { admit: false, reason: `OutOf${first.resource}`, message: insufficientMessage(first) };
  };
}

function insufficientMessage(r: InsufficientResource): string {
  return `Node didn't have enough resource: ${r.resource}, requested: ${r.requested}, used: ${r.used}, capacity: ${r.capacity}`;
}
