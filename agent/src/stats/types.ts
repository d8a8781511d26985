/**
 * The kubelet's Summary API (`GET /stats/summary`, stats/v1alpha1): field names, nesting and
 * units exactly as kubelet writes them, so metrics-server, `kubectl get --raw` users and
 * dashboards read nodelet's answer unchanged. Times are RFC 3339 strings; byte and nanosecond
 * counts are numbers. A field the agent cannot measure is left out, as kubelet leaves it nil.
 */

export interface Summary {
  node: NodeStats;
  pods: PodStats[];
}

export interface NodeStats {
  nodeName: string;
  systemContainers?: ContainerStats[];
  startTime: string;
  cpu?: CpuStats;
  memory?: MemoryStats;
  network?: NetworkStats;
  fs?: FsStats;
  runtime?: RuntimeStats;
  rlimit?: RlimitStats;
  swap?: SwapStats;
}

export interface RlimitStats {
  time: string;
  maxpid?: number;
  curproc?: number;
}

export interface RuntimeStats {
  imageFs?: FsStats;
  containerFs?: FsStats;
}

export interface PodReference {
  name: string;
  namespace: string;
  uid: string;
}

export interface PodStats {
  podRef: PodReference;
  startTime: string;
  containers: ContainerStats[];
  cpu?: CpuStats;
  memory?: MemoryStats;
  network?: NetworkStats;
  volume?: VolumeStats[];
  'ephemeral-storage'?: FsStats;
  process_stats?: ProcessStats;
}

export interface ProcessStats {
  process_count?: number;
}

export interface ContainerStats {
  name: string;
  startTime: string;
  cpu?: CpuStats;
  memory?: MemoryStats;
  rootfs?: FsStats;
  logs?: FsStats;
  swap?: SwapStats;
}

export interface CpuStats {
  time: string;
  /** Average over the last sampling interval; absent until there are two samples. */
  usageNanoCores?: number;
  usageCoreNanoSeconds?: number;
}

export interface MemoryStats {
  time: string;
  availableBytes?: number;
  usageBytes?: number;
  workingSetBytes?: number;
  rssBytes?: number;
  pageFaults?: number;
  majorPageFaults?: number;
}

export interface SwapStats {
  time: string;
  swapAvailableBytes?: number;
  swapUsageBytes?: number;
}

export interface InterfaceStats {
  name: string;
  rxBytes?: number;
  rxErrors?: number;
  txBytes?: number;
  txErrors?: number;
}

/** The default interface's counters inline (`name`, `rxBytes`, …) plus every interface. */
export interface NetworkStats extends Partial<InterfaceStats> {
  time: string;
  interfaces?: InterfaceStats[];
}

export interface FsStats {
  time: string;
  availableBytes?: number;
  capacityBytes?: number;
  usedBytes?: number;
  inodesFree?: number;
  inodes?: number;
  inodesUsed?: number;
}

export interface VolumeStats extends FsStats {
  name: string;
}
