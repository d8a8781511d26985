/**
 * Facts about this machine for the Node object: capacity, identity, addresses. (The pressure
 * conditions come from the eviction manager, which reads the stats collector: eviction/.)
 *
 * Identity and capacity come from systeminformation (distro, kernel, CPU count, memory, machine
 * and system UUIDs) and are read once at start, then refreshed in the background
 * ({@link MachineInfoCache}) — they cost ~100 ms of subprocesses and file reads, far too much for
 * every 10 s status update, and they barely change. Read by hand, and why:
 *
 *   bootID          /proc/sys/kernel/random/boot_id — systeminformation does not report it
 *   osImage         PRETTY_NAME of /etc/os-release, the exact string kubelet reports
 *                   (systeminformation splits it into distro/release/codename)
 *   ephemeral storage   statfs of the agent's root dir — systeminformation's fsSize runs
 *                   `df` over every mount; statfs answers for the one that matters, in microseconds
 *   InternalIP      os.networkInterfaces() (synchronous, needed before the first status)
 */
import { readFile, statfs } from 'node:fs/promises';
import os from 'node:os';
import si from 'systeminformation';

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

export async function readMachineInfo(rootDir: string): Promise<MachineInfo> {
  const [osInfo, cpu, mem, uuid, system, fs, osRelease, bootID] = await Promise.all([
    si.osInfo(), si.cpu(), si.mem(), si.uuid(), si.system(),
    statfs(rootDir).catch(() => statfs('/')),
    readText('/etc/os-release'),
    readText('/proc/sys/kernel/random/boot_id'),
  ]);
  const pretty = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(osRelease)?.[1] ?? [osInfo.distro, osInfo.release, osInfo.codename ? `(${osInfo.codename})` : ''].filter(Boolean).join(' ');
  return {
    // Logical CPUs, as cAdvisor's NumCores (what kubelet reports as capacity.cpu).
    cpuCores: cpu.cores || os.cpus().length,
    memoryBytes: mem.total || os.totalmem(),
    ephemeralStorageBytes: fs.blocks * fs.bsize,
    machineID: uuid.os,
    systemUUID: (system.uuid || uuid.hardware || '').toLowerCase(),
    bootID,
    kernelVersion: osInfo.kernel || os.release(),
    osImage: pretty || 'Linux',
    architecture: goArch(osInfo.arch || os.arch()),
    hostname: (osInfo.hostname || os.hostname()).toLowerCase(),
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
