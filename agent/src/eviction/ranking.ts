/**
 * Which pod goes first (kubelet eviction/helpers.go rankMemoryPressure, rankDiskPressureFunc,
 * rankPIDPressure), a stable sort by, in order:
 *
 *   1. pods without stats first; then pods whose usage exceeds their requests
 *   2. lower priority (spec.priority, 0 when unset)
 *   3. more usage above requests (memory, disk); for pids, more processes
 *
 * Critical pods are ranked like the others; the manager skips them when evicting.
 */
import type { Pod } from '@nodelet/api/agent';
import { isCriticalPod } from '../nodeshutdown/shutdown-pods.js';
import { isMirrorPod, isStaticPod } from '../kubecontainer/pod-update.js';
import type { PodStats } from '../stats/types.js';
import { parseQuantity } from '../util/quantity.js';
import type { EvictionSignal } from './thresholds.js';

/** A pod's stats from the Summary, looked up by UID. */
export type PodStatsFn = (pod: Pod) => PodStats | undefined;

type Cmp = (a: Pod, b: Pod) => number;

/** kubelet types.IsCriticalPod: static and mirror pods, and pods at system-critical priority. Never evicted. */
export function isCriticalForEviction(pod: Pod): boolean {
  return isStaticPod(pod) || isMirrorPod(pod) || isCriticalPod(pod);
}

/**
 * The pod's request for `resource` as the scheduler counts it: the sum over app containers, at
 * least the largest init container's, plus the pod overhead.
 */
export function podRequest(pod: Pod, resource: string): number {
  const q = (c: { resources?: { requests?: Record<string, string | number> | null } | null }): number => {
    const v = c.resources?.requests?.[resource];
    return v === undefined || v === null ? 0 : parseQuantity(v);
  };
  const spec = pod.spec;
  const sum = (spec?.containers ?? []).reduce((a, c) => a + q(c), 0);
  const init = Math.max(0, ...(spec?.initContainers ?? []).map(q));
  const overhead = spec?.overhead?.[resource];
  return Math.max(sum, init) + (overhead === undefined ? 0 : parseQuantity(overhead));
}

/** Usage of the resource a signal reclaims, per pod (kubelet podDiskUsage, memoryUsage, process count). */
export function podUsage(stats: PodStats, signal: EvictionSignal): number | undefined {
  switch (signal) {
    case 'memory.available':
      return stats.memory?.workingSetBytes;
    case 'nodefs.available':
    case 'imagefs.available':
      return stats['ephemeral-storage']?.usedBytes;
    case 'nodefs.inodesFree':
    case 'imagefs.inodesFree':
      return stats['ephemeral-storage']?.inodesUsed;
    case 'pid.available':
      return stats.process_stats?.process_count;
  }
}

/** The request that usage is compared with; inodes and pids have none. */
function requestFor(pod: Pod, signal: EvictionSignal): number {
  if (signal === 'memory.available') return podRequest(pod, 'memory');
  if (signal === 'nodefs.available' || signal === 'imagefs.available') return podRequest(pod, 'ephemeral-storage');
  return 0;
}

/** true before false, as kubelet's cmpBool. */
function trueFirst(a: boolean, b: boolean): number {
  return a === b ? 0 : a ? -1 : 1;
}

function orderedBy(...cmps: Cmp[]): Cmp {
  return (a, b) => {
    for (const c of cmps) {
      const r = c(a, b);
      if (r !== 0) return r;
    }
    return 0;
  };
}

/** Pods sorted for eviction under `signal`: the first one goes first. Does not modify `pods`. */
export function rankForEviction(pods: readonly Pod[], signal: EvictionSignal, stats: PodStatsFn): Pod[] {
  const usage = (p: Pod): number | undefined => {
    const s = stats(p);
    return s ? podUsage(s, signal) : undefined;
  };
  // Pods without numbers cannot be compared on them and go first, as kubelet does.
  const bothMeasured = (inner: (ua: number, ub: number, a: Pod, b: Pod) => number): Cmp => (a, b) => {
    const ua = usage(a);
    const ub = usage(b);
    if (ua === undefined || ub === undefined) return trueFirst(ua === undefined, ub === undefined);
    return inner(ua, ub, a, b);
  };
  const exceedsRequests = bothMeasured((ua, ub, a, b) => trueFirst(ua > requestFor(a, signal), ub > requestFor(b, signal)));
  const priority: Cmp = (a, b) => (a.spec?.priority ?? 0) - (b.spec?.priority ?? 0);
  const aboveRequests = bothMeasured((ua, ub, a, b) => ub - requestFor(b, signal) - (ua - requestFor(a, signal)));
  const order = signal === 'pid.available' ? orderedBy(priority, aboveRequests) : orderedBy(exceedsRequests, priority, aboveRequests);
  return [...pods].sort(order);
}
