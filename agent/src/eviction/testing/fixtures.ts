/**
 * Summaries and pods for the eviction unit tests: a node with the given memory and filesystems,
 * pods with the given working sets and requests.
 */
import type { Pod } from '@nodelet/api';
import type { PodStats, Summary } from '../../stats/types.js';

export const Mi = 2 ** 20;
export const Gi = 2 ** 30;

export interface NodeNumbers {
  /** ms since the epoch of the measurement. */
  at: number;
  memAvailable: number;
  memWorkingSet: number;
  fs?: { available: number; capacity: number; inodesFree?: number; inodes?: number };
  imageFs?: { available: number; capacity: number };
}

export function summary(n: NodeNumbers, pods: PodStats[] = []): Summary {
  const time = new Date(n.at).toISOString();
  return {
    node: {
      nodeName: 'n1',
      startTime: time,
      memory: { time, availableBytes: n.memAvailable, workingSetBytes: n.memWorkingSet },
      fs: n.fs ? { time, availableBytes: n.fs.available, capacityBytes: n.fs.capacity, inodesFree: n.fs.inodesFree, inodes: n.fs.inodes } : undefined,
      runtime: n.imageFs ? { imageFs: { time, availableBytes: n.imageFs.available, capacityBytes: n.imageFs.capacity } } : undefined,
    },
    pods,
  };
}

/** Stats of a pod whose containers use `ws` bytes of memory each. */
export function podStats(pod: Pod, ws: Record<string, number>, extra: Partial<PodStats> = {}): PodStats {
  const time = '2026-01-01T00:00:00Z';
  const total = Object.values(ws).reduce((a, b) => a + b, 0);
  return {
    podRef: { name: pod.metadata.name!, namespace: pod.metadata.namespace!, uid: pod.metadata.uid! },
    startTime: time,
    containers: Object.entries(ws).map(([name, b]) => ({ name, startTime: time, memory: { time, workingSetBytes: b } })),
    memory: { time, workingSetBytes: total },
    ...extra,
  };
}

/** A pod with one container per entry of `requests` (memory request, or none). */
export function pod(name: string, requests: Record<string, string | undefined>, o: { priority?: number; priorityClassName?: string; annotations?: Record<string, string> } = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, annotations: o.annotations },
    spec: {
      containers: Object.entries(requests).map(([c, r]) => ({ name: c, image: 'busybox', resources: r ? { requests: { memory: r }, limits: { memory: r } } : {} })),
      priority: o.priority,
      priorityClassName: o.priorityClassName,
    },
  };
}
