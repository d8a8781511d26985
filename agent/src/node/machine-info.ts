/**
 * Facts about this machine for the Node object: capacity, identity, addresses. (The pressure
 * conditions come from the eviction manager, which reads the stats collector: eviction/.)
 *
 * Read once at start, then refreshed in the background ({@link MachineInfoCache}), from the
 * files cAdvisor reads for the kubelet — a few small reads, no subprocesses and no library (the
 * one this replaced ran child-process probes and loaded 715 KB of code for the handful of values
 * below; docs/performance.md, "Agent footprint"):
 *
 *   cpuCores        os.cpus().length — logical CPUs, as cAdvisor's NumCores
 *   memoryBytes     os.totalmem() — MemTotal of /proc/meminfo
 *   machineID       /etc/machine-id, else /var/lib/dbus/machine-id
 *   systemUUID      /sys/class/dmi/id/product_uuid (lower-cased; empty where there is no DMI)
 *   bootID          /proc/sys/kernel/random/boot_id
 *   kernelVersion   os.release() (uname -r)
 *   osImage         PRETTY_NAME of /etc/os-release, the exact string kubelet reports
 *   ephemeral storage   statfs of the agent's root dir
 *   InternalIP      os.networkInterfaces() (synchronous, needed before the first status)
 */
import { readFile, statfs } from 'node:fs/promises';
import os from 'node:os';

export interface MachineInfo {
  cpuCores: number;
  memoryBytes: number;
  ephemeralStorageBytes: number;
  machineID: string;
  systemUUID: string;
  bootID: string;
  kernelVersion: string;
  osImage: string;
  architecture: string;
  hostname: string;
}

async function readText(path: string): Promise<string> {
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch {
    return '';
  }
}

function goArch(a: string): string {
  return ({ x64: 'amd64', arm64: 'arm64', arm: 'arm', ia32: '386', ppc64: 'ppc64le', s390x: 's390x' } as Record<string, string>)[a] ?? a;
}

/** Where the facts are read from; tests point these at files of their own. */
export const MACHINE_FILES = {
  machineId: ['/etc/machine-id', '/var/lib/dbus/machine-id'],
  productUuid: '/sys/class/dmi/id/product_uuid',
  bootId: '/proc/sys/kernel/random/boot_id',
  osRelease: '/etc/os-release',
};

export async function readMachineInfo(rootDir: string, files = MACHINE_FILES): Promise<MachineInfo> {
  const [fs, osRelease, bootID, systemUUID, ...machineIDs] = await Promise.all([
    statfs(rootDir).catch(() => statfs('/')),
    readText(files.osRelease),
    readText(files.bootId),
    readText(files.productUuid),
    ...files.machineId.map(readText),
  ]);
  return {
    cpuCores: os.cpus().length,
    memoryBytes: os.totalmem(),
    ephemeralStorageBytes: fs.blocks * fs.bsize,
    machineID: machineIDs.find(Boolean) ?? '',
    systemUUID: systemUUID.toLowerCase(),
    bootID,
    kernelVersion: os.release(),
    osImage: /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(osRelease)?.[1] || 'Linux',
    architecture: goArch(os.arch()),
    hostname: os.hostname().toLowerCase(),
  };
}

/** The node's InternalIP: the configured one, else the first non-loopback IPv4 address. */
export function pickInternalIP(configured?: string): string {
  if (configured) return configured;
  for (const addrs of Object.values(os.networkInterfaces())) {
    for (const a of addrs ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '127.0.0.1';
}
