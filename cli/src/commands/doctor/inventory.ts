/**
 * The node inventory of `nodelet doctor` and `nodelet node info`: OS, CPU, memory, disks, network
 * interfaces and virtualisation, read by the systeminformation package. It is loaded with a dynamic
 * import here and nowhere else, so only these two commands pay for it (the agent never loads it:
 * eslint.config.js refuses a static import, and cli/src/commands/doctor/inventory.test.ts checks
 * that no package the agent may import names it).
 */
import { humanSize as formatBytes } from '../cri/format.js';

export interface NodeInventory {
  os: { platform: string; distro: string; release: string; kernel: string; arch: string; hostname: string };
  /** speedGHz is 0 where the machine does not report it (many VMs). */
  cpu: { brand: string; cores: number; physicalCores: number; speedGHz: number; hardwareVirtualization: boolean };
  memory: { totalBytes: number; availableBytes: number; swapTotalBytes: number };
  disks: Array<{ mount: string; fs: string; type: string; sizeBytes: number; usedBytes: number; availableBytes: number }>;
  network: Array<{ name: string; ipv4: string; ipv6: string; mac: string; state: string; virtual: boolean }>;
  /** Whether this node is itself a virtual machine or container, and of what kind. */
  virtualization: { virtual: boolean; host: string; manufacturer: string; model: string };
}

/** The systeminformation calls used here, so its types need no static import. */
interface Si {
  osInfo(): Promise<{ platform: string; distro: string; release: string; kernel: string; arch: string; hostname: string }>;
  cpu(): Promise<{ manufacturer: string; brand: string; cores: number; physicalCores: number; speed: number; virtualization: boolean }>;
  mem(): Promise<{ total: number; available: number; swaptotal: number }>;
  fsSize(): Promise<Array<{ fs: string; type: string; size: number; used: number; available: number; mount: string }>>;
  networkInterfaces(): Promise<Array<{ iface: string; ip4: string; ip6: string; mac: string; operstate: string; virtual: boolean }> | { iface: string; ip4: string; ip6: string; mac: string; operstate: string; virtual: boolean }>;
  system(): Promise<{ manufacturer: string; model: string; virtual: boolean; virtualHost?: string }>;
}

/** Filesystems that hold no node data: pseudo and per-boot mounts. */
const PSEUDO_FS = /^(tmpfs|devtmpfs|overlay|squashfs|proc|sysfs|cgroup2?|nsfs|ramfs)$/;

/** Reads the inventory. `load` is the module loader (tests may pass their own). */
export async function collectInventory(load: () => Promise<Si> = loadSi): Promise<NodeInventory> {
  const si = await load();
  const [os, cpu, mem, fs, nics, sys] = await Promise.all([si.osInfo(), si.cpu(), si.mem(), si.fsSize(), si.networkInterfaces(), si.system()]);
  return {
    os: { platform: os.platform, distro: os.distro, release: os.release, kernel: os.kernel, arch: os.arch, hostname: os.hostname },
    cpu: { brand: `${cpu.manufacturer} ${cpu.brand}`.trim(), cores: cpu.cores, physicalCores: cpu.physicalCores, speedGHz: cpu.speed, hardwareVirtualization: cpu.virtualization },
    memory: { totalBytes: mem.total, availableBytes: mem.available, swapTotalBytes: mem.swaptotal },
    disks: fs
      .filter((d) => !PSEUDO_FS.test(d.type) && d.size > 0)
      .map((d) => ({ mount: d.mount, fs: d.fs, type: d.type, sizeBytes: d.size, usedBytes: d.used, availableBytes: d.available })),
    network: (Array.isArray(nics) ? nics : [nics]).map((n) => ({ name: n.iface, ipv4: n.ip4, ipv6: n.ip6, mac: n.mac, state: n.operstate, virtual: n.virtual })),
    virtualization: { virtual: sys.virtual, host: sys.virtualHost ?? '', manufacturer: sys.manufacturer, model: sys.model },
  };
}

async function loadSi(): Promise<Si> {
  const mod = (await import('systeminformation')) as unknown as Si & { default?: Si };
  return mod.default ?? mod;
}

/** The inventory as aligned `key: value` lines, one section per kind. */
export function formatInventory(inv: NodeInventory): string {
  const lines = [
    `os:       ${inv.os.distro} ${inv.os.release} (${inv.os.platform}/${inv.os.arch}, kernel ${inv.os.kernel}), host ${inv.os.hostname}`,
    `cpu:      ${inv.cpu.brand}, ${inv.cpu.cores} logical / ${inv.cpu.physicalCores} physical cores${inv.cpu.speedGHz > 0 ? ` at ${inv.cpu.speedGHz} GHz` : ''}${inv.cpu.hardwareVirtualization ? ', hardware virtualisation' : ''}`,
    `memory:   ${formatBytes(inv.memory.totalBytes)} total, ${formatBytes(inv.memory.availableBytes)} available, swap ${inv.memory.swapTotalBytes ? formatBytes(inv.memory.swapTotalBytes) : 'off'}`,
    `virtual:  ${inv.virtualization.virtual ? `yes${inv.virtualization.host ? ` (${inv.virtualization.host})` : ''}` : 'no'}; ${[inv.virtualization.manufacturer, inv.virtualization.model].filter(Boolean).join(' ') || 'unknown hardware'}`,
    ...inv.disks.map((d) => `disk:     ${d.mount} ${d.type} ${formatBytes(d.sizeBytes)}, ${formatBytes(d.availableBytes)} free (${d.fs})`),
    ...inv.network.map((n) => `network:  ${n.name} ${n.state}${n.ipv4 ? ` ${n.ipv4}` : ''}${n.ipv6 ? ` ${n.ipv6}` : ''}${n.mac ? ` ${n.mac}` : ''}${n.virtual ? ' (virtual)' : ''}`),
  ];
  return lines.join('\n');
}
