/**
 * CPU and memory of one process's cgroup, on cgroup v1, v2 or the hybrid of both (v1
 * controllers with an empty unified hierarchy, as on this project's lab VMs). Used for what the
 * runtime does not report itself: the pod sandbox's pause process when the runtime's
 * ListPodSandboxStats is unavailable (docs/agent.md, Resource metrics).
 *
 * Where a controller lives is read, not assumed: `/proc/self/mountinfo` names the mount of each
 * v1 controller (its super options) and of the unified hierarchy, `/proc/<pid>/cgroup` the
 * process's path in each; a controller mounted as v1 is read there, otherwise from v2 when the
 * unified hierarchy has it. This works for the cgroupfs and the systemd driver alike (containerd
 * 1.6 with cgroupfs and no cgroup parent puts each container at `/k8s.io/<id>`).
 *
 *   v1   cpuacct.usage (ns)        memory.usage_in_bytes, memory.stat total_inactive_file, total_rss, pgfault, pgmajfault
 *   v2   cpu.stat usage_usec       memory.current, memory.stat inactive_file, anon, pgfault, pgmajfault
 *
 * Working set is usage − inactive file pages, floored at 0, as cadvisor and kubelet compute it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CgroupMounts } from '@nodelet/base';

// Where the hierarchies are is @nodelet/base's (the lab's teardown reads it too).
export { parseMountinfo, type CgroupMounts } from '@nodelet/base';

/** What the readers here need of the filesystem (tests pass a map). */
export type ReadText = (path: string) => Promise<string>;

/**
 * Reads a /proc or /sys (cgroupfs) file. Synchronously, on purpose: the kernel generates these
 * files on read, so no read waits on a disk (cadvisor reads them the same way), while
 * fs/promises' readFile made each one five thread-pool round trips (open, fstat, two reads,
 * close), each with its request object and promise: about 150 files per stats round at 30 pods,
 * the largest item of the idle agent's profile after GC and the gRPC calls
 * (docs/performance.md, "Agent footprint"). Rejects, as before, when the file is missing.
 */
export const readText: ReadText = async (path) => readFileSync(path, 'utf8');

export interface CgroupMemory {
  usageBytes: number;
  workingSetBytes: number;
  rssBytes?: number;
  pageFaults?: number;
  majorPageFaults?: number;
}

export interface CgroupReading {
  cpuUsageNs?: number;
  memory?: CgroupMemory;
}

/** `/proc/<pid>/cgroup`: v1 controller → path, and the v2 path (hierarchy 0). Pure. */
export function parseProcCgroup(text: string): { v1: Map<string, string>; v2?: string } {
  const v1 = new Map<string, string>();
  let v2: string | undefined;
  for (const line of text.split('\n')) {
    const m = /^(\d+):([^:]*):(.*)$/.exec(line.trim());
    if (!m) continue;
    if (m[1] === '0' && m[2] === '') v2 = m[3];
    else for (const c of m[2]!.split(',')) if (c) v1.set(c, m[3]!);
  }
  return { v1, v2 };
}

/** The directory of `path` inside a mount whose root is `root` (a cgroup namespace shows paths below its root). */
function inMount(m: { mount: string; root: string }, path: string): string {
  const rel = m.root !== '/' && path.startsWith(m.root) ? path.slice(m.root.length) : path;
  return join(m.mount, rel);
}

export interface CgroupDirs {
  cpu?: { version: 1 | 2; dir: string };
  memory?: { version: 1 | 2; dir: string };
}

/** Where the cpu accounting and memory files of a process live (pure). */
export function cgroupDirs(mounts: CgroupMounts, proc: { v1: Map<string, string>; v2?: string }): CgroupDirs {
  const pick = (v1Controller: string): { version: 1 | 2; dir: string } | undefined => {
    const m = mounts.v1.get(v1Controller);
    const p = proc.v1.get(v1Controller);
    if (m && p !== undefined) return { version: 1, dir: inMount(m, p) };
    if (mounts.v2 && proc.v2 !== undefined && !mounts.v1.has(v1Controller)) return { version: 2, dir: inMount(mounts.v2, proc.v2) };
    return undefined;
  };
  return { cpu: pick('cpuacct'), memory: pick('memory') };
}

/** `key value` lines (memory.stat, cpu.stat) as numbers (pure). */
export function parseFlatKeyed(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const [k, v] = line.trim().split(/\s+/);
    if (k && v !== undefined && /^\d+$/.test(v)) out.set(k, Number(v));
  }
  return out;
}

/** Working set as cadvisor computes it: usage minus inactive file pages, never below 0. */
export function workingSet(usageBytes: number, inactiveFileBytes: number | undefined): number {
  return Math.max(0, usageBytes - (inactiveFileBytes ?? 0));
}

async function readNumber(read: ReadText, path: string): Promise<number> {
  const t = (await read(path)).trim();
  if (!/^\d+$/.test(t)) throw new Error(`unexpected content in ${path}: ${JSON.stringify(t.slice(0, 40))}`);
  return Number(t);
}

/** Reads the cpu and memory files of `dirs`. A file that cannot be read leaves its part out. */
export async function readCgroup(dirs: CgroupDirs, read: ReadText = readText): Promise<CgroupReading> {
  const out: CgroupReading = {};
  if (dirs.cpu) {
    out.cpuUsageNs = await (dirs.cpu.version === 1
      ? readNumber(read, join(dirs.cpu.dir, 'cpuacct.usage'))
      : read(join(dirs.cpu.dir, 'cpu.stat')).then((t) => {
          const usec = parseFlatKeyed(t).get('usage_usec');
          return usec === undefined ? undefined : usec * 1000;
        })
    ).catch(() => undefined); // a reading the kernel lacks (or the cgroup just went) is left out of the summary
  }
  if (dirs.memory) {
    const v1 = dirs.memory.version === 1;
    const usage = await readNumber(read, join(dirs.memory.dir, v1 ? 'memory.usage_in_bytes' : 'memory.current')).catch(() => undefined); // as above: left out
    const stat = await read(join(dirs.memory.dir, 'memory.stat')).then(parseFlatKeyed).catch(() => undefined); // as above: left out
    if (usage !== undefined) {
      out.memory = {
        usageBytes: usage,
        workingSetBytes: workingSet(usage, stat?.get(v1 ? 'total_inactive_file' : 'inactive_file')),
        rssBytes: stat?.get(v1 ? 'total_rss' : 'anon'),
        pageFaults: stat?.get('pgfault'),
        majorPageFaults: stat?.get('pgmajfault'),
      };
    }
  }
  return out;
}

/**
 * Reads the cgroup of process `pid`. `mounts` come from {@link parseMountinfo} of the agent's
 * own mountinfo (read once: mounts do not move under a running agent). Resolves to `{}` when
 * the process is gone.
 */
export async function readProcessCgroup(pid: number, mounts: CgroupMounts, read: ReadText = readText): Promise<CgroupReading> {
  let proc: string;
  try {
    proc = await read(`/proc/${pid}/cgroup`);
  } catch {
    // The process exited between the listing and now: nothing to report for it.
    return {};
  }
  return readCgroup(cgroupDirs(mounts, parseProcCgroup(proc)), read);
}
