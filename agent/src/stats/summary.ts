/**
 * Assembles the Summary (types.ts) from one round of readings: the runtime's container stats,
 * its pod sandbox stats when it has them, the pause process's cgroup and network namespace when
 * it does not, the node's /proc numbers and the filesystems. Pure but for the CPU rate state it
 * is handed ({@link CpuRates}), so it is table-tested with fake readings (summary.test.ts).
 *
 * How each pod number is made, kubelet's CRI stats provider being the model:
 *
 *   container cpu, memory     the runtime's ListContainerStats (cumulative CPU, working set, rss, faults)
 *   container rootfs          its writable layer (used bytes, inodes) on the image filesystem's capacity
 *   container logs            the container's log directory, on the log filesystem's capacity
 *   pod cpu, memory, network  ListPodSandboxStats when the runtime can answer it; otherwise the sum
 *                             of the containers plus the pause process's cgroup, and the pause
 *                             process's /proc/<pid>/net/dev (none for host-network pods)
 *   pod volumes               usage of each ephemeral volume directory, on its filesystem's capacity
 *   ephemeral-storage         rootfs + logs of every container + the volumes, on the node filesystem
 *   usageNanoCores            from this sample and the previous one of the same counter (cpu-rate.ts)
 *
 * Times are RFC 3339 with milliseconds here (the resource metrics need them); the Summary
 * handler writes them with whole seconds, as kubelet's metav1.Time does.
 */
import type { CgroupReading } from './cgroup.js';
import type { CpuRates } from './cpu-rate.js';
import type { DirUsage } from './dir-usage.js';
import type { FsUsage, NodeReadings } from './node-readings.js';
import type { ContainerStats, CpuStats, FsStats, InterfaceStats, MemoryStats, NetworkStats, PodStats, Summary, VolumeStats } from './types.js';
import type { RuntimeService } from '../kubecontainer/cri.js';

type Res<K extends keyof RuntimeService> = Awaited<ReturnType<RuntimeService[K]>>;
export type CriContainerStats = Res<'listContainerStats'>['stats'][number];
export type CriPodSandboxStats = Res<'listPodSandboxStats'>['stats'][number];
type CriCpu = NonNullable<CriContainerStats['cpu']>;
type CriMemory = NonNullable<CriContainerStats['memory']>;
type CriNetwork = NonNullable<NonNullable<CriPodSandboxStats['linux']>['network']>;

export interface SandboxReading {
  id: string;
  name: string;
  namespace: string;
  uid: string;
  createdAtNs: number;
  /** The runtime's pod stats, when ListPodSandboxStats answered. */
  cri?: CriPodSandboxStats;
  /** The pause process's cgroup, read at `timeNs` (without `cri`). */
  pause?: CgroupReading & { timeNs: number };
  /** The pod network namespace's interfaces, read at `timeNs` (without `cri`; not for host-network pods). */
  network?: { timeNs: number; interfaces: InterfaceStats[] };
  volumes: Array<{ name: string; usage?: DirUsage; fs?: FsUsage }>;
}

export interface ContainerReading {
  id: string;
  sandboxId: string;
  name: string;
  createdAtNs: number;
  stats?: CriContainerStats;
  logs?: DirUsage;
}

export interface SummaryInputs {
  nodeName: string;
  /** When this round was read, ns since the epoch. */
  nowNs: number;
  node: NodeReadings;
  /** The filesystem of the agent's root dir (node fs). */
  rootFs?: FsUsage;
  /** The runtime's image filesystem: its own usage numbers and the statfs of its mount. */
  imageFs?: { usedBytes?: number; inodesUsed?: number; timeNs?: number; fs?: FsUsage };
  /** The filesystem of the pod log directory. */
  logsFs?: FsUsage;
  /** The agent process itself (system container "kubelet"). */
  agent?: { startTimeNs: number; cpuUsageNs: number; rssBytes: number };
  sandboxes: SandboxReading[];
  containers: ContainerReading[];
}

/** The network interface kubelet reports inline (its defaultNetworkInterfaceName). */
const DEFAULT_INTERFACE = 'eth0';

export const rfc3339 = (ns: number): string => new Date(Math.floor(ns / 1e6)).toISOString();

const num = (v: { value: string } | null | undefined): number | undefined => (v ? Number(v.value) : undefined);
const tsOr = (ts: string | undefined, fallbackNs: number): number => (ts && ts !== '0' ? Number(ts) : fallbackNs);

function sum(...vs: Array<number | undefined>): number | undefined {
  let out: number | undefined;
  for (const v of vs) if (v !== undefined) out = (out ?? 0) + v;
  return out;
}

function cpuStats(rates: CpuRates, key: string, timeNs: number, usageNs: number | undefined): CpuStats {
  const out: CpuStats = { time: rfc3339(timeNs) };
  if (usageNs === undefined) return out;
  const rate = rates.observe(key, { timeNs, usageNs });
  if (rate !== undefined) out.usageNanoCores = rate;
  out.usageCoreNanoSeconds = usageNs;
  return out;
}

function criCpu(rates: CpuRates, key: string, c: CriCpu, fallbackNs: number): CpuStats {
  return cpuStats(rates, key, tsOr(c.timestamp, fallbackNs), num(c.usageCoreNanoSeconds));
}

function criMemory(m: CriMemory, fallbackNs: number): MemoryStats {
  const available = num(m.availableBytes);
  return dropUndefined({
    time: rfc3339(tsOr(m.timestamp, fallbackNs)),
    // containerd writes 0 when the container has no limit; kubelet has no availableBytes then.
    availableBytes: available ? available : undefined,
    usageBytes: num(m.usageBytes),
    workingSetBytes: num(m.workingSetBytes),
    rssBytes: num(m.rssBytes),
    pageFaults: num(m.pageFaults),
    majorPageFaults: num(m.majorPageFaults),
  });
}

function fsStats(timeNs: number, fs: FsUsage | undefined, used?: { usedBytes?: number; inodesUsed?: number }): FsStats {
  return dropUndefined({
    time: rfc3339(timeNs),
    availableBytes: fs?.availableBytes,
    capacityBytes: fs?.capacityBytes,
    usedBytes: used ? used.usedBytes : fs?.usedBytes,
    inodesFree: fs?.inodesFree,
    inodes: fs?.inodes,
    inodesUsed: used ? used.inodesUsed : fs?.inodesUsed,
  });
}

function networkStats(timeNs: number, interfaces: InterfaceStats[], preferred?: string): NetworkStats {
  const main = interfaces.find((i) => i.name === DEFAULT_INTERFACE) ?? interfaces.find((i) => i.name === preferred);
  return { time: rfc3339(timeNs), ...(main ?? {}), interfaces };
}

function criNetwork(n: CriNetwork, fallbackNs: number): NetworkStats {
  const iface = (i: NonNullable<CriNetwork['defaultInterface']>): InterfaceStats =>
    dropUndefined({ name: i.name, rxBytes: num(i.rxBytes), rxErrors: num(i.rxErrors), txBytes: num(i.txBytes), txErrors: num(i.txErrors) });
  const interfaces = n.interfaces.map(iface);
  return { time: rfc3339(tsOr(n.timestamp, fallbackNs)), ...(n.defaultInterface ? iface(n.defaultInterface) : {}), interfaces };
}

function containerStats(rates: CpuRates, c: ContainerReading, inputs: SummaryInputs): ContainerStats {
  const now = inputs.nowNs;
  const out: ContainerStats = { name: c.name, startTime: rfc3339(c.createdAtNs) };
  const s = c.stats;
  if (s?.cpu) out.cpu = criCpu(rates, `container/${c.id}`, s.cpu, now);
  if (s?.memory) out.memory = criMemory(s.memory, now);
  if (s?.writableLayer) {
    const w = s.writableLayer;
    out.rootfs = fsStats(tsOr(w.timestamp, tsOr(s.cpu?.timestamp, now)), inputs.imageFs?.fs, { usedBytes: num(w.usedBytes), inodesUsed: num(w.inodesUsed) });
  }
  if (c.logs) out.logs = fsStats(now, inputs.logsFs, c.logs);
  return out;
}

/** The pod's CPU and memory as the sum of its containers and its pause process (no pod cgroup to read). */
function summedPod(rates: CpuRates, sb: SandboxReading, containers: ContainerStats[], now: number): Pick<PodStats, 'cpu' | 'memory'> {
  const times = containers.map((c) => (c.cpu ? Date.parse(c.cpu.time) * 1e6 : 0));
  const timeNs = Math.max(sb.pause?.timeNs ?? 0, ...times) || now;
  const usage = sum(...containers.map((c) => c.cpu?.usageCoreNanoSeconds), sb.pause?.cpuUsageNs);
  const mem = (k: keyof MemoryStats & keyof NonNullable<CgroupReading['memory']>): number | undefined =>
    sum(...containers.map((c) => c.memory?.[k] as number | undefined), sb.pause?.memory?.[k]);
  return {
    cpu: cpuStats(rates, `pod/${sb.uid}`, timeNs, usage),
    memory: dropUndefined({
      time: rfc3339(timeNs),
      usageBytes: mem('usageBytes'),
      workingSetBytes: mem('workingSetBytes'),
      rssBytes: mem('rssBytes'),
      pageFaults: mem('pageFaults'),
      majorPageFaults: mem('majorPageFaults'),
    }),
  };
}

function podStats(rates: CpuRates, sb: SandboxReading, inputs: SummaryInputs): PodStats {
  const now = inputs.nowNs;
  const mine = inputs.containers.filter((c) => c.sandboxId === sb.id);
  const containers = mine.map((c) => containerStats(rates, c, inputs));
  const out: PodStats = { podRef: { name: sb.name, namespace: sb.namespace, uid: sb.uid }, startTime: rfc3339(sb.createdAtNs), containers };
  const linux = sb.cri?.linux;
  if (linux?.cpu || linux?.memory) {
    if (linux.cpu) out.cpu = criCpu(rates, `pod/${sb.uid}`, linux.cpu, now);
    if (linux.memory) out.memory = criMemory(linux.memory, now);
  } else {
    Object.assign(out, summedPod(rates, sb, containers, now));
  }
  if (linux?.network) out.network = criNetwork(linux.network, now);
  else if (sb.network) out.network = networkStats(sb.network.timeNs, sb.network.interfaces);
  const volumes: VolumeStats[] = sb.volumes
    .filter((v) => v.usage)
    .map((v) => ({ ...fsStats(now, v.fs, v.usage), name: v.name }));
  if (volumes.length) out.volume = volumes;
  const processes = num(linux?.process?.processCount);
  if (processes !== undefined) out.process_stats = { process_count: processes };
  out['ephemeral-storage'] = fsStats(now, inputs.rootFs, {
    usedBytes: sum(...containers.flatMap((c) => [c.rootfs?.usedBytes, c.logs?.usedBytes]), ...volumes.map((v) => v.usedBytes)) ?? 0,
    inodesUsed: sum(...containers.flatMap((c) => [c.rootfs?.inodesUsed, c.logs?.inodesUsed]), ...volumes.map((v) => v.inodesUsed)) ?? 0,
  });
  return out;
}

function nodeSummary(rates: CpuRates, inputs: SummaryInputs, pods: PodStats[]): Summary['node'] {
  const n = inputs.node;
  const now = inputs.nowNs;
  const t = rfc3339(now);
  const imageFs = inputs.imageFs ? fsStats(inputs.imageFs.timeNs || now, inputs.imageFs.fs, inputs.imageFs) : undefined;
  const systemContainers: ContainerStats[] = [];
  if (inputs.agent) {
    const a = inputs.agent;
    systemContainers.push({
      name: 'kubelet',
      startTime: rfc3339(a.startTimeNs),
      cpu: cpuStats(rates, 'system/kubelet', now, a.cpuUsageNs),
      memory: { time: t, usageBytes: a.rssBytes, workingSetBytes: a.rssBytes, rssBytes: a.rssBytes },
    });
  }
  const podCpu = sum(...pods.map((p) => p.cpu?.usageCoreNanoSeconds));
  systemContainers.push({
    name: 'pods',
    startTime: rfc3339((n.stat.bootTimeS ?? 0) * 1e9),
    cpu: cpuStats(rates, 'system/pods', now, podCpu ?? 0),
    memory: dropUndefined({
      time: t,
      usageBytes: sum(...pods.map((p) => p.memory?.usageBytes)) ?? 0,
      workingSetBytes: sum(...pods.map((p) => p.memory?.workingSetBytes)) ?? 0,
      rssBytes: sum(...pods.map((p) => p.memory?.rssBytes)),
    }),
  });
  const swap = n.memory.swapTotalBytes !== undefined && n.memory.swapFreeBytes !== undefined
    ? { time: t, swapAvailableBytes: n.memory.swapFreeBytes, swapUsageBytes: n.memory.swapTotalBytes - n.memory.swapFreeBytes }
    : undefined;
  return dropUndefined({
    nodeName: inputs.nodeName,
    systemContainers,
    startTime: rfc3339((n.stat.bootTimeS ?? 0) * 1e9),
    cpu: cpuStats(rates, 'node', now, n.stat.cpuUsageNs),
    memory: dropUndefined({
      time: t,
      availableBytes: n.memory.availableBytes,
      usageBytes: n.memory.usageBytes,
      workingSetBytes: n.memory.workingSetBytes,
      rssBytes: n.memory.rssBytes,
      pageFaults: n.pageFaults,
      majorPageFaults: n.majorPageFaults,
    }),
    network: networkStats(now, n.interfaces, n.defaultInterface),
    fs: inputs.rootFs ? fsStats(now, inputs.rootFs) : undefined,
    // containerd 1.6 keeps container writable layers on the image filesystem: one filesystem, reported twice as kubelet does.
    runtime: imageFs ? { imageFs, containerFs: imageFs } : undefined,
    rlimit: dropUndefined({ time: t, maxpid: n.maxPid, curproc: n.threads }),
    swap,
  });
}

/**
 * The Summary of one round. Pods are the ready sandboxes, containers their running containers,
 * in the order given. `rates` keeps the previous CPU samples (and is pruned of counters not seen
 * this round).
 */
export function buildSummary(inputs: SummaryInputs, rates: CpuRates): Summary {
  const pods = inputs.sandboxes.map((sb) => podStats(rates, sb, inputs));
  const node = nodeSummary(rates, inputs, pods);
  rates.prune();
  return { node, pods };
}

/** Copies `o` without its undefined fields (kubelet's omitempty). */
function dropUndefined<T extends object>(o: T): T {
  const out = {} as T;
  for (const [k, v] of Object.entries(o)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}
