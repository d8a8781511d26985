/**
 * The agent's resource stats: samples the runtime, the pause processes' cgroups, /proc and the
 * filesystems every `periodMs` (10 s, kubelet's cadvisor housekeeping interval) and keeps the
 * latest Summary, which `/stats/summary` and `/metrics/resource` serve without calling anything
 * (server/stats-routes.ts). One collector per agent; `run` is its only loop.
 *
 *   run(signal) ──every periodMs──▶ collect() ──▶ latest Summary ◀── summary() (node API)
 *                                     │ 1. CRI: ready sandboxes, running containers, ListContainerStats,
 *                                     │    ListPodSandboxStats (while the runtime can answer it), ImageFsInfo
 *                                     │ 2. per sandbox without runtime pod stats: the pause pid (status, cached),
 *                                     │    its cgroup and /proc/<pid>/net/dev
 *                                     │ 3. /proc of the node, statfs of root/log/image filesystems,
 *                                     │    volume usage (cached walks), container log directories
 *                                     └ 4. buildSummary (summary.ts): sums, rates from the previous round
 *
 * containerd 1.6 answers ListPodSandboxStats only for sandboxes in a cgroup of their own
 * ("cgroupPath is empty" otherwise, and the agent sets no cgroup parent), so on it the pod
 * numbers are always the containers' plus the pause process's. After a failure the collector asks
 * again only every {@link POD_STATS_RETRY_ROUNDS} rounds, to keep the runtime's log quiet.
 */
import { setMaxListeners } from 'node:events';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describeError, hasCode, isAbortError, type Clock, type Logger } from '@nodelet/base';
import type { ImageService, RuntimeService } from '../kubecontainer/cri.js';
import { isSafePodUid, podLogDir } from '../runtime/container-config.js';
import { ephemeralPluginDirs } from '../runtime/volume-kinds.js';
import { parseMountinfo, readProcessCgroup, readText, type CgroupMounts, type ReadText } from './cgroup.js';
import { CpuRates } from './cpu-rate.js';
import { dirUsage, DirUsageCache } from './dir-usage.js';
import { fsUsage, parseNetDev, readNodeReadings, type FsUsage } from './node-readings.js';
import { buildSummary, type ContainerReading, type CriPodSandboxStats, type SandboxReading } from './summary.js';
import type { Summary } from './types.js';

/** kubelet's cadvisor housekeeping interval. */
export const DEFAULT_STATS_PERIOD_MS = 10_000;
const ROUND_TIMEOUT_MS = 30_000;
/**
 * kubelet's volumeStatsAggPeriod: a pod's volume directories and each volume's filesystem
 * figures are looked up this often, as kubelet's fs resource analyzer computes them (with the
 * usage walk, DirUsageCache), not every round: with 30 pods that was 90 file operations per round.
 */
const VOLUME_STATS_PERIOD_MS = 60_000;
const POD_STATS_RETRY_ROUNDS = 30;
/** Volume plugins whose directories hold ephemeral data (what kubelet counts into ephemeral-storage). */
const EPHEMERAL_VOLUME_DIRS = ephemeralPluginDirs();

export interface StatsCollectorOptions {
  runtime: RuntimeService;
  images: ImageService;
  nodeName: string;
  rootDir: string;
  podLogsDir: string;
  clock: Clock;
  log: Logger;
  periodMs?: number;
  /** File reader for /proc and /sys (tests). */
  read?: ReadText;
  /** statfs (tests). */
  statfs?: (path: string) => Promise<FsUsage>;
  /** Volume walks (tests inject a cache with a fake walker). */
  volumeUsage?: DirUsageCache;
}

interface SandboxInfo {
  pid?: number;
  hostNetwork: boolean;
}

export class StatsCollector {
  readonly #o: StatsCollectorOptions;
  readonly #read: ReadText;
  readonly #statfs: (path: string) => Promise<FsUsage>;
  readonly #rates = new CpuRates();
  readonly #volumes: DirUsageCache;
  readonly #sandboxInfo = new Map<string, SandboxInfo>();
  /** Each pod's volume directories and their filesystems, by pod UID, as last looked up. */
  readonly #podVolumes = new Map<string, { at: number; volumes: Array<{ name: string; dir: string; fs?: FsUsage }> }>();
  #mounts?: CgroupMounts;
  #latest?: Summary;
  #first?: Promise<Summary>;
  #podStatsSkip = 0;
  #round?: Promise<Summary>;

  constructor(o: StatsCollectorOptions) {
    this.#o = o;
    this.#read = o.read ?? readText;
    this.#statfs = o.statfs ?? fsUsage;
    this.#volumes = o.volumeUsage ?? new DirUsageCache({ clock: o.clock, log: o.log });
  }

  /**
   * The latest Summary. Before the first round finished it waits for one (started here if the
   * loop has not run yet), bounded by `signal`.
   */
  async summary(signal?: AbortSignal): Promise<Summary> {
    if (this.#latest) return this.#latest;
    this.#first ??= this.collect(signal ?? roundSignal(AbortSignal.timeout(ROUND_TIMEOUT_MS)));
    try {
      return await this.#first;
    } catch (err) {
      this.#first = undefined;
      throw err;
    }
  }

  /**
   * Samples at once, then one period after each round ends, until `signal` aborts (resolves once
   * the last round has ended). A failed round is logged and the previous Summary kept.
   */
  async run(signal: AbortSignal): Promise<void> {
    const job = this.#o.clock.every(this.#o.periodMs ?? DEFAULT_STATS_PERIOD_MS, (s) => this.collect(roundSignal(s)), {
      signal,
      immediate: true,
      timeoutMs: ROUND_TIMEOUT_MS,
      onError: (err) => this.#o.log.warn({ err: describeError(err) }, 'Stats collection failed'),
    });
    await job.stopped;
    this.#volumes.close();
  }

  /** One round (steps in the file comment). Rounds never overlap: a caller during one gets its result. */
  collect(signal: AbortSignal): Promise<Summary> {
    this.#round ??= this.#collect(signal).finally(() => (this.#round = undefined));
    return this.#round;
  }

  async #collect(signal: AbortSignal): Promise<Summary> {
    const o = this.#o;
    const call = { signal };
    this.#mounts ??= parseMountinfo(await this.#read('/proc/self/mountinfo').catch(() => ''));
    // 1. The runtime.
    const [sandboxes, containers, containerStats, podStats, imageFs] = await Promise.all([
      o.runtime.listPodSandbox({ filter: { state: { state: 'SANDBOX_READY' } } }, call),
      o.runtime.listContainers({ filter: { state: { state: 'CONTAINER_RUNNING' } } }, call),
      o.runtime.listContainerStats({}, call),
      this.#podStats(signal),
      o.images.imageFsInfo({}, call).catch((err: unknown) => {
        if (isAbortError(err)) throw err;
        return undefined;
      }),
    ]);
    const nowNs = o.clock.now() * 1e6;
    const statsById = new Map(containerStats.stats.map((s) => [s.attributes?.id ?? '', s]));
    const podStatsById = new Map((podStats ?? []).map((s) => [s.attributes?.id ?? '', s]));
    // 3a. The node and its filesystems (statfs may fail on a path not there yet: left out).
    const imageMount = imageFs?.imageFilesystems[0];
    const fsOf = (p: string | undefined): Promise<FsUsage | undefined> => (p ? this.#statfs(p).catch(() => undefined) : Promise.resolve(undefined)); // statfs of a path not there yet: left out (see above)
    const [node, rootFs, logsFs, imageFsUsage] = await Promise.all([readNodeReadings(this.#read), fsOf(o.rootDir), fsOf(o.podLogsDir), fsOf(imageMount?.fsId?.mountpoint)]);
    // 2 + 3b. Per sandbox and container.
    const sandboxReadings: SandboxReading[] = [];
    const volumeDirs = new Set<string>();
    const podUids = new Set<string>();
    for (const sb of sandboxes.items) {
      const md = sb.metadata;
      if (!md || !isSafePodUid(md.uid)) continue;
      const reading: SandboxReading = {
        id: sb.id, name: md.name, namespace: md.namespace, uid: md.uid, createdAtNs: Number(sb.createdAt),
        cri: podStatsById.get(sb.id), volumes: [],
      };
      if (!reading.cri) await this.#readPause(sb.id, reading, signal);
      podUids.add(md.uid);
      for (const v of await this.#volumesOf(md.uid, fsOf)) {
        volumeDirs.add(v.dir);
        reading.volumes.push({ name: v.name, usage: this.#volumes.get(v.dir), fs: v.fs });
      }
      sandboxReadings.push(reading);
    }
    this.#volumes.retain(volumeDirs);
    for (const uid of this.#podVolumes.keys()) if (!podUids.has(uid)) this.#podVolumes.delete(uid);
    for (const id of this.#sandboxInfo.keys()) if (!sandboxes.items.some((s) => s.id === id)) this.#sandboxInfo.delete(id);
    const containerReadings: ContainerReading[] = [];
    for (const c of containers.containers) {
      const sb = sandboxReadings.find((s) => s.id === c.podSandboxId);
      if (!sb || !c.metadata) continue;
      const logDir = join(podLogDir({ metadata: { namespace: sb.namespace, name: sb.name, uid: sb.uid } }, o.podLogsDir), c.metadata.name);
      containerReadings.push({
        id: c.id, sandboxId: c.podSandboxId, name: c.metadata.name, createdAtNs: Number(c.createdAt),
        stats: statsById.get(c.id), logs: await dirUsage(logDir, { maxEntries: 1000, signal }).catch(() => undefined), // the log dir may not exist yet: no log usage reported
      });
    }
    // 4. Assemble.
    const cpu = process.cpuUsage();
    const summary = buildSummary({
      nodeName: o.nodeName,
      nowNs,
      node,
      rootFs,
      logsFs,
      imageFs: imageMount ? { usedBytes: numOf(imageMount.usedBytes), inodesUsed: numOf(imageMount.inodesUsed), timeNs: Number(imageMount.timestamp) || undefined, fs: imageFsUsage } : undefined,
      agent: { startTimeNs: (o.clock.now() - process.uptime() * 1000) * 1e6, cpuUsageNs: (cpu.user + cpu.system) * 1000, rssBytes: process.memoryUsage.rss() },
      sandboxes: sandboxReadings,
      containers: containerReadings,
    }, this.#rates);
    this.#latest = summary;
    return summary;
  }

  /** ListPodSandboxStats, unless the runtime could not answer it lately (see the file comment). */
  async #podStats(signal: AbortSignal): Promise<CriPodSandboxStats[] | undefined> {
    if (this.#podStatsSkip > 0) {
      this.#podStatsSkip--;
      return undefined;
    }
    try {
      return (await this.#o.runtime.listPodSandboxStats({}, { signal })).stats;
    } catch (err) {
      if (isAbortError(err)) throw err;
      this.#podStatsSkip = hasCode(err, 'ERR_UNIMPLEMENTED') ? Number.POSITIVE_INFINITY : POD_STATS_RETRY_ROUNDS;
      this.#o.log.debug({ err: describeError(err) }, 'Runtime pod sandbox stats unavailable; summing container and pause stats');
      return undefined;
    }
  }

  /** The pause process's cgroup and network namespace (its pid from a verbose status, asked once per sandbox). */
  async #readPause(id: string, reading: SandboxReading, signal: AbortSignal): Promise<void> {
    let info = this.#sandboxInfo.get(id);
    if (!info) {
      const st = await this.#o.runtime.podSandboxStatus({ podSandboxId: id, verbose: true }, { signal }).catch((err: unknown) => {
        if (isAbortError(err)) throw err;
        return undefined;
      });
      if (!st) return;
      const pid = Number((JSON.parse(st.info.info ?? '{}') as { pid?: unknown }).pid);
      info = { pid: Number.isInteger(pid) && pid > 0 ? pid : undefined, hostNetwork: st.status?.linux?.namespaces?.options?.network === 'NODE' };
      this.#sandboxInfo.set(id, info);
    }
    if (!info.pid) return;
    const timeNs = this.#o.clock.now() * 1e6;
    reading.pause = { ...(await readProcessCgroup(info.pid, this.#mounts!, this.#read)), timeNs };
    if (!info.hostNetwork) {
      const dev = await this.#read(`/proc/${info.pid}/net/dev`).catch(() => undefined); // the sandbox exited meanwhile: no network stats this round
      if (dev) reading.network = { timeNs, interfaces: parseNetDev(dev) };
    }
  }

  /** The pod's volumes with their filesystems, looked up again once VOLUME_STATS_PERIOD_MS has passed. */
  async #volumesOf(uid: string, fsOf: (p: string) => Promise<FsUsage | undefined>): Promise<Array<{ name: string; dir: string; fs?: FsUsage }>> {
    const now = this.#o.clock.monotonic();
    const known = this.#podVolumes.get(uid);
    if (known && now - known.at < VOLUME_STATS_PERIOD_MS) return known.volumes;
    const volumes: Array<{ name: string; dir: string; fs?: FsUsage }> = [];
    for (const v of await this.#volumeDirs(uid)) volumes.push({ ...v, fs: await fsOf(v.dir) });
    this.#podVolumes.set(uid, { at: now, volumes });
    return volumes;
  }

  /**
   * The pod's ephemeral volume directories: `<root>/pods/<uid>/volumes/<plugin>/<name>`. One
   * readdir finds the plugins the pod has: asking for all five per pod every round was 150 failed
   * readdirs (and as many thrown errors) per round at 30 pods.
   */
  async #volumeDirs(uid: string): Promise<Array<{ name: string; dir: string }>> {
    const out: Array<{ name: string; dir: string }> = [];
    const base = join(this.#o.rootDir, 'pods', uid, 'volumes');
    const plugins = await readdir(base).catch(() => [] as string[]);
    for (const plugin of EPHEMERAL_VOLUME_DIRS) {
      if (!plugins.includes(plugin)) continue;
      const names = await readdir(join(base, plugin)).catch(() => [] as string[]);
      for (const name of names) out.push({ name, dir: join(base, plugin, name) });
    }
    return out;
  }
}

/** A round's CRI calls run at once on one short-lived signal, each listening for its abort. */
function roundSignal(s: AbortSignal): AbortSignal {
  setMaxListeners(64, s);
  return s;
}

function numOf(v: { value: string } | null | undefined): number | undefined {
  return v ? Number(v.value) : undefined;
}
