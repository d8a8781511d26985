/**
 * kubelet's cgroup layout with the cgroupfs driver (cgroupsPerQOS), below `cgroupRoot`:
 *
 *   <root>/kubepods                     node allocatable: cpu shares and memory limit;
 *                                       Guaranteed pods' cgroups sit here directly
 *   <root>/kubepods/burstable           cpu shares = the Burstable pods' CPU requests
 *   <root>/kubepods/besteffort          cpu shares 2 (cgroup v2: weight 1)
 *   <root>/kubepods/<qos>/pod<uid>      one per pod, with pod-resources.ts's limits; it is the
 *                                       sandbox's linux.cgroup_parent, so containerd creates the
 *                                       pause and app containers' cgroups beneath it
 *
 * On cgroup v1 (and the hybrid layout, whose controllers are v1) the tree is made in the cpu,
 * memory and pids hierarchies; runc adds the pod directory to the others when it starts a
 * container, so removal walks every mounted hierarchy. On v2 the controllers are enabled in each
 * parent's cgroup.subtree_control and shares become cpu.weight. A pod cgroup is removed once
 * nothing wants the pod and the runtime holds none of it (housekeeping, also for pods deleted
 * while the agent was down). A process still in such a cgroup is killed first, as kubelet does;
 * rmdir refuses a cgroup until its processes are gone, so that pass leaves it for the next one.
 */
import { readdirSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AgentError, cgroupPathInEveryHierarchy, cgroupTreePids, describeError, relativeToMountRoot, removeCgroupTree, type Logger } from '@nodelet/base';
import type { Pod } from '@nodelet/api/agent';
import { parseMountinfo, readText, type CgroupMounts } from '../stats/cgroup.js';
import { MIN_SHARES, milliCpuToShares, podCgroupPath, podCgroupResources, qosCgroupShares, sharesToWeight, type CgroupResources } from './pod-resources.js';

export interface PodCgroupsOptions {
  /** kubelet `cgroupRoot`: where `kubepods` goes, as a cgroup path ("/" by default). */
  cgroupRoot: string;
  /** kubelet `podPidsLimit` (-1: unlimited). */
  podPidsLimit: number;
  log: Logger;
  /** The cgroup mounts (tests pass a directory tree that looks like one). */
  mounts: CgroupMounts;
  /**
   * Node allocatable for pods (capacity − systemReserved − kubeReserved): kubepods' cpu shares and
   * memory limit, as kubelet enforces it with `enforceNodeAllocatable: [pods]`.
   */
  allocatable?: { cpuMilli: number; memoryBytes: number };
  /** rmdir of one cgroup (tests, whose stand-in files a real rmdir would refuse). */
  removeDir?: (dir: string) => Promise<void>;
  /** SIGKILLs a process left in the cgroup of a pod that should not run (tests record it). */
  kill?: (pid: number) => void;
}

const V1_CONTROLLERS = ['cpu', 'memory', 'pids'] as const;
const POD_DIR = /^pod([0-9a-f-]+)$/;

/** The cgroup mounts of this host (from /proc/self/mountinfo). */
export async function hostCgroupMounts(): Promise<CgroupMounts> {
  return parseMountinfo(await readText('/proc/self/mountinfo'));
}

export class PodCgroups {
  readonly #o: PodCgroupsOptions;
  readonly #v1: boolean;
  /** The pods whose cgroups this agent made, for the QoS-class shares. */
  readonly #pods = new Map<string, Pod>();

  constructor(o: PodCgroupsOptions) {
    if (!o.cgroupRoot.startsWith('/')) throw new AgentError('ERR_INVALID_ARGUMENT', `cgroupRoot must be an absolute cgroup path, got ${JSON.stringify(o.cgroupRoot)}`);
    this.#o = o;
    this.#v1 = V1_CONTROLLERS.every((c) => o.mounts.v1.has(c));
    if (!this.#v1 && !o.mounts.v2) throw new AgentError('ERR_FAILED_PRECONDITION', 'no cgroup v1 cpu, memory and pids hierarchies and no cgroup v2 mount: cannot make pod cgroups (set cgroupsPerQOS: false)');
  }

  /** "v1" or "v2": which hierarchy carries the settings. */
  get version(): 'v1' | 'v2' {
    return this.#v1 ? 'v1' : 'v2';
  }

  /** A pod's cgroup as a cgroup path (the sandbox's cgroup_parent). */
  parent(pod: Pod): string {
    return join(this.#o.cgroupRoot, podCgroupPath(pod));
  }

  /** The cgroup path of a pod this agent made a cgroup for. */
  pathOf(uid: string): string | undefined {
    const pod = this.#pods.get(uid);
    return pod ? this.parent(pod) : undefined;
  }

  /** Creates kubepods and the QoS-class cgroups (agent start). */
  async init(): Promise<void> {
    for (const rel of ['kubepods', 'kubepods/burstable', 'kubepods/besteffort']) await this.#make(rel);
    const a = this.#o.allocatable;
    if (a) await this.#apply('kubepods', { cpuShares: milliCpuToShares(a.cpuMilli), memoryLimitBytes: Math.max(0, Math.floor(a.memoryBytes)) });
    await this.#updateQos();
  }

  /** Creates (or updates) the pod's cgroup with its limits; returns its path for cgroup_parent. */
  async ensure(pod: Pod): Promise<string> {
    const rel = podCgroupPath(pod);
    await this.#make(rel);
    await this.#apply(rel, podCgroupResources(pod, this.#o.podPidsLimit));
    this.#pods.set(pod.metadata.uid!, pod);
    await this.#updateQos();
    return join(this.#o.cgroupRoot, rel);
  }

  /**
   * UIDs of the pod cgroups present under kubepods in any mounted hierarchy, as kubelet's
   * GetAllPodsFromCgroups reads every subsystem: an agent killed between the rmdirs of one pod's
   * hierarchies leaves the pod's directory in some of them only, and it must still be found.
   */
  async podUIDs(): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const base of this.#allDirs('kubepods')) {
      for (const sub of ['', 'burstable', 'besteffort']) {
        for (const name of await listDirs(join(base, sub))) {
          const m = POD_DIR.exec(name);
          if (m && !out.has(m[1]!)) out.set(m[1]!, join('kubepods', sub, name));
        }
      }
    }
    return out;
  }

  /**
   * Removes the pod cgroups `keep` does not claim; returns the UIDs removed. As kubelet's pod
   * container manager does, whatever process is still in such a cgroup is killed first (a pod the
   * runtime no longer holds runs nothing legitimately: what is there escaped its container's
   * teardown); the cgroup goes once the processes are gone, on this pass or the next.
   */
  async cleanup(keep: (uid: string) => boolean): Promise<string[]> {
    const removed: string[] = [];
    for (const [uid, rel] of await this.podUIDs()) {
      if (keep(uid)) continue;
      const dirs = this.#allDirs(rel);
      const pids = [...new Set((await Promise.all(dirs.map((d) => cgroupTreePids(d).catch(() => [] as number[])))).flat())]; // unreadable: the rmdir below says why
      if (pids.length) {
        this.#o.log.warn({ podUID: uid, pids }, 'Killing processes left in the cgroup of a pod that should not run');
        for (const pid of pids) (this.#o.kill ?? killProcess)(pid);
      }
      let ok = true;
      for (const dir of dirs) {
        try {
          await removeCgroupTree(dir, this.#o.removeDir);
        } catch (err) {
          ok = false;
          this.#o.log.warn({ podUID: uid, dir, err: describeError(err) }, 'Pod cgroup not removed yet');
        }
      }
      if (!ok) continue;
      this.#pods.delete(uid);
      removed.push(uid);
    }
    if (removed.length) await this.#updateQos();
    return removed;
  }

  async #updateQos(): Promise<void> {
    const s = qosCgroupShares(this.#pods.values());
    await this.#apply('kubepods/burstable', { cpuShares: s.burstable });
    await this.#apply('kubepods/besteffort', { cpuShares: s.besteffort });
  }

  /** The directories carrying settings for `rel` (v1: cpu, memory, pids; v2: one). */
  #dirs(rel: string): string[] {
    const at = (m: { mount: string; root: string }): string => join(m.mount, relativeToMountRoot(m.root, this.#o.cgroupRoot), rel);
    if (!this.#v1) return [at(this.#o.mounts.v2!)];
    return V1_CONTROLLERS.map((c) => at(this.#o.mounts.v1.get(c)!));
  }

  /** `rel` in every mounted hierarchy (runc creates the pod's directory in each). */
  #allDirs(rel: string): string[] {
    return cgroupPathInEveryHierarchy(this.#o.mounts, join(this.#o.cgroupRoot, rel));
  }

  async #make(rel: string): Promise<void> {
    if (!this.#v1) {
      // Each level must hand the controllers down before its child can use them.
      const parts = join(relativeToMountRoot(this.#o.mounts.v2!.root, this.#o.cgroupRoot), rel).split('/').filter(Boolean);
      let dir = this.#o.mounts.v2!.mount;
      for (const p of parts) {
        await writeFile(join(dir, 'cgroup.subtree_control'), '+cpu +memory +pids');
        dir = join(dir, p);
        await mkdir(dir, { recursive: true });
      }
      return;
    }
    for (const d of this.#dirs(rel)) await mkdir(d, { recursive: true });
  }

  async #apply(rel: string, r: CgroupResources): Promise<void> {
    const set = (dir: string, file: string, value: string | number): Promise<void> => writeFile(join(dir, file), String(value));
    if (this.#v1) {
      const [cpu, memory, pids] = this.#dirs(rel) as [string, string, string];
      await set(cpu, 'cpu.shares', Math.max(MIN_SHARES, r.cpuShares));
      if (r.cpuPeriodUs !== undefined) await set(cpu, 'cpu.cfs_period_us', r.cpuPeriodUs);
      await set(cpu, 'cpu.cfs_quota_us', r.cpuQuotaUs ?? -1);
      if (!rel.endsWith('burstable') && !rel.endsWith('besteffort')) {
        await set(memory, 'memory.limit_in_bytes', r.memoryLimitBytes ?? -1);
        await set(pids, 'pids.max', r.pidsLimit ?? 'max');
      }
      return;
    }
    const [dir] = this.#dirs(rel) as [string];
    await set(dir, 'cpu.weight', sharesToWeight(Math.max(MIN_SHARES, r.cpuShares)));
    await set(dir, 'cpu.max', `${r.cpuQuotaUs ?? 'max'} ${r.cpuPeriodUs ?? 100_000}`);
    if (!rel.endsWith('burstable') && !rel.endsWith('besteffort')) {
      await set(dir, 'memory.max', r.memoryLimitBytes ?? 'max');
      await set(dir, 'pids.max', r.pidsLimit ?? 'max');
    }
  }
}

function killProcess(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/**
 * The child cgroups of `dir`; none when it is gone. Synchronous, as the stats collector reads
 * cgroupfs (stats/cgroup.ts `readText`): the kernel makes the listing, nothing waits on a disk,
 * and housekeeping lists three directories per hierarchy every 2 s (`bench/pod-cgroups-pass.ts`).
 */
async function listDirs(dir: string): Promise<string[]> {
  try {
    return readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}
