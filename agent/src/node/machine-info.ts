/**
 * Facts about this machine for the Node object, read from /proc, /sys, /etc and statfs (cheap
 * enough to read every node status update): capacity, identity, addresses, and the numbers the
 * pressure conditions compare with the eviction thresholds.
 */
import { readFile, readdir, statfs } from 'node:fs/promises';
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

export interface MachineUsage {
  memoryAvailableBytes: number;
  nodefsAvailableBytes: number;
  nodefsCapacityBytes: number;
  nodefsInodesFree: number;
  nodefsInodes: number;
  pidsInUse: number;
  pidMax: number;
}

async function readText(path: string): Promise<string> {
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch {
    return '';
  }
}

async function meminfo(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const line of (await readText('/proc/meminfo')).split('\n')) {
    const m = /^(\w+):\s+(\d+)\s*kB/.exec(line);
    if (m) out[m[1]!] = Number(m[2]) * 1024;
  }
  return out;
}

function goArch(a: string): string {
  return ({ x64: 'amd64', arm64: 'arm64', arm: 'arm', ia32: '386', ppc64: 'ppc64le', s390x: 's390x' } as Record<string, string>)[a] ?? a;
}

export async function readMachineInfo(rootDir: string): Promise<MachineInfo> {
  const mem = await meminfo();
  const fs = await statfs(rootDir).catch(() => statfs('/'));
  const osRelease = await readText('/etc/os-release');
  const pretty = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(osRelease)?.[1] ?? 'Linux';
  return {
    cpuCores: os.cpus().length,
    memoryBytes: mem.MemTotal ?? os.totalmem(),
    ephemeralStorageBytes: fs.blocks * fs.bsize,
    machineID: (await readText('/etc/machine-id')) || (await readText('/var/lib/dbus/machine-id')),
    systemUUID: (await readText('/sys/class/dmi/id/product_uuid')).toLowerCase(),
    bootID: await readText('/proc/sys/kernel/random/boot_id'),
    kernelVersion: os.release(),
    osImage: pretty,
    architecture: goArch(os.arch()),
    hostname: os.hostname().toLowerCase(),
  };
}

export async function readMachineUsage(rootDir: string): Promise<MachineUsage> {
  const mem = await meminfo();
  const fs = await statfs(rootDir).catch(() => statfs('/'));
  const pids = (await readdir('/proc').catch(() => [])).filter((n) => /^\d+$/.test(n)).length;
  return {
    memoryAvailableBytes: mem.MemAvailable ?? os.freemem(),
    nodefsAvailableBytes: fs.bavail * fs.bsize,
    nodefsCapacityBytes: fs.blocks * fs.bsize,
    nodefsInodesFree: fs.ffree,
    nodefsInodes: fs.files,
    pidsInUse: pids,
    pidMax: Number(await readText('/proc/sys/kernel/pid_max')) || 32768,
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
