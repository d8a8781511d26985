/**
 * The node's own numbers from /proc and statfs, the same on cgroup v1, v2 and hybrid hosts:
 *
 *   cpu       /proc/stat "cpu" line: user+nice+system+irq+softirq+steal (guest time is already in
 *             user), in USER_HZ (100 on Linux) → ns; boot time from "btime"
 *   memory    /proc/meminfo: usage = MemTotal − MemFree, working set = usage − Inactive(file)
 *             (what cadvisor computes for the root cgroup), rss = AnonPages, available =
 *             MemTotal − working set (kubelet's memory.available); /proc/vmstat pgfault, pgmajfault
 *   network   /proc/<pid>/net/dev of a process in the network namespace (pid 1 side: the agent's own)
 *   rlimit    /proc/sys/kernel/pid_max and the thread count of /proc/loadavg (sysinfo's procs)
 *   fs        statfs(2) of a path
 *
 * The parsers are pure and exported for tests; the readers take a {@link ReadText}.
 */
import { statfs } from 'node:fs/promises';
import type { ReadText } from './cgroup.js';
import { parseFlatKeyed, readText, workingSet } from './cgroup.js';
import type { InterfaceStats } from './types.js';

/** Linux reports /proc/stat in USER_HZ, which is 100 on every architecture the kernel supports today. */
const USER_HZ = 100;

export interface ProcStat {
  cpuUsageNs: number;
  /** Boot time, epoch seconds. */
  bootTimeS?: number;
}

export function parseProcStat(text: string): ProcStat {
  let cpuUsageNs = 0;
  let bootTimeS: number | undefined;
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f[0] === 'cpu') {
      const [user, nice, system, , , irq, softirq, steal] = f.slice(1).map(Number);
      const ticks = [user, nice, system, irq, softirq, steal].reduce<number>((a, v) => a + (Number.isFinite(v) ? v! : 0), 0);
      cpuUsageNs = (ticks * 1e9) / USER_HZ;
    } else if (f[0] === 'btime') bootTimeS = Number(f[1]);
  }
  return { cpuUsageNs, bootTimeS };
}

export interface NodeMemory {
  capacityBytes: number;
  usageBytes: number;
  workingSetBytes: number;
  availableBytes: number;
  rssBytes?: number;
  swapTotalBytes?: number;
  swapFreeBytes?: number;
}

/** /proc/meminfo lines are `Key:   123 kB`. */
export function parseMeminfo(text: string): NodeMemory {
  const kb = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^([^:]+):\s+(\d+)(?:\s+kB)?$/.exec(line.trim());
    if (m) kb.set(m[1]!, Number(m[2]) * 1024);
  }
  const total = kb.get('MemTotal') ?? 0;
  const usage = Math.max(0, total - (kb.get('MemFree') ?? 0));
  const ws = workingSet(usage, kb.get('Inactive(file)'));
  return {
    capacityBytes: total,
    usageBytes: usage,
    workingSetBytes: ws,
    availableBytes: Math.max(0, total - ws),
    rssBytes: kb.get('AnonPages'),
    swapTotalBytes: kb.get('SwapTotal'),
    swapFreeBytes: kb.get('SwapFree'),
  };
}

/** Interfaces cadvisor leaves out of a network namespace's totals. */
const IGNORED_INTERFACES = /^(lo$|veth|docker|nerdctl)/;

/** /proc/net/dev: two header lines, then `name: rxBytes rxPackets rxErrs … txBytes txPackets txErrs …`. */
export function parseNetDev(text: string): InterfaceStats[] {
  const out: InterfaceStats[] = [];
  for (const line of text.split('\n').slice(2)) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim();
    if (!name || IGNORED_INTERFACES.test(name)) continue;
    const f = line.slice(colon + 1).trim().split(/\s+/).map(Number);
    if (f.length < 11) continue;
    out.push({ name, rxBytes: f[0], rxErrors: f[2], txBytes: f[8], txErrors: f[10] });
  }
  return out;
}

/** The interface of the default route in /proc/net/route (destination 00000000), if any. */
export function defaultRouteInterface(text: string): string | undefined {
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f[1] === '00000000' && f[0]) return f[0];
  }
  return undefined;
}

/** Threads running now: the denominator of /proc/loadavg's fourth field (what sysinfo(2) calls procs). */
export function parseLoadavgThreads(text: string): number | undefined {
  const m = /\s\d+\/(\d+)\s/.exec(` ${text} `);
  return m ? Number(m[1]) : undefined;
}

export interface FsUsage {
  capacityBytes: number;
  availableBytes: number;
  usedBytes: number;
  inodes: number;
  inodesFree: number;
  inodesUsed: number;
}

/** statfs(2) of `path` as cadvisor reports a filesystem. */
export async function fsUsage(path: string): Promise<FsUsage> {
  const s = await statfs(path);
  return {
    capacityBytes: s.blocks * s.bsize,
    availableBytes: s.bavail * s.bsize,
    usedBytes: (s.blocks - s.bfree) * s.bsize,
    inodes: s.files,
    inodesFree: s.ffree,
    inodesUsed: s.files - s.ffree,
  };
}

export interface NodeReadings {
  stat: ProcStat;
  memory: NodeMemory;
  pageFaults?: number;
  majorPageFaults?: number;
  interfaces: InterfaceStats[];
  defaultInterface?: string;
  maxPid?: number;
  threads?: number;
}

/** Everything of the node from /proc (one read of each file). */
export async function readNodeReadings(read: ReadText = readText): Promise<NodeReadings> {
  const opt = (p: string): Promise<string | undefined> => read(p).catch(() => undefined); // optional /proc files (absent on some kernels): left out
  const [stat, meminfo, vmstat, netdev, route, pidMax, loadavg] = await Promise.all([
    read('/proc/stat'), read('/proc/meminfo'), opt('/proc/vmstat'), opt('/proc/self/net/dev'), opt('/proc/self/net/route'),
    opt('/proc/sys/kernel/pid_max'), opt('/proc/loadavg'),
  ]);
  const vm = vmstat ? parseFlatKeyed(vmstat) : undefined;
  return {
    stat: parseProcStat(stat),
    memory: parseMeminfo(meminfo),
    pageFaults: vm?.get('pgfault'),
    majorPageFaults: vm?.get('pgmajfault'),
    interfaces: netdev ? parseNetDev(netdev) : [],
    defaultInterface: route ? defaultRouteInterface(route) : undefined,
    maxPid: pidMax && /^\d+$/.test(pidMax.trim()) ? Number(pidMax.trim()) : undefined,
    threads: loadavg ? parseLoadavgThreads(loadavg) : undefined,
  };
}
