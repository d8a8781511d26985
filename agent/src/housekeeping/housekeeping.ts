/**
 * The agent's periodic cleanups, each a job on the injected clock (`Clock.every`: it never
 * overlaps itself, each run has its own deadline, an error is logged and the next period runs):
 *
 *   pods        every 2 s    runtime pods no source wants and no worker has (orphans, left by
 *                            pods deleted while the agent was down) are torn down through a pod
 *                            worker; finished workers of pods nobody wants are dropped; gauges
 *   pod-dirs    every 2 s    <root-dir>/pods/<uid> of pods nobody wants (volumes, tmpfs and
 *                            subPath mounts), and their pod cgroups; a pod the runtime still has
 *                            keeps both
 *   containers  every 10 s   runtime GC: dead containers and sandboxes (gc-plan.ts, runtime-gc.ts)
 *   images      every 5 min  image GC at the thresholds (gc.ts)
 *   cni         every 5 min  CNI GC (gc.ts)
 *   image-gc-cron  on imageGCScheduleCron (if set): every unused image old enough, whatever the
 *                  thresholds (gc.ts `unusedImages`), e.g. nightly while the node is quiet; node-cron
 *                  is loaded only then
 *
 * kubelet's HandlePodCleanups and its GC loops (wait.Until periods, counted from when a run ends).
 * `pods` and `pod-dirs` do nothing until every pod source has been seen (PodConfig.sourcesReady):
 * before its first list a restarted agent cannot tell an orphan from a pod the API still has.
 */
import { describeError, linkAbort, type Clock, type Logger, type PeriodicJob } from '@nodelet/base';
import type { Pod } from '@nodelet/api/agent';
import type { PodUpdate } from '../podworkers/pod-worker.js';
import type { ObservedPod } from '../kubecontainer/observed.js';
import type { PodConfig } from '../source/pod-config.js';

/** Each run of a job is aborted after this long (a stuck CRI or umount call must not stop the schedule). */
export const JOB_TIMEOUT_MS = 120_000;
/** Grace of an orphan's stand-in pod: its spec is gone, so the kubelet's short default is used. */
const ORPHAN_GRACE_S = 2;

export interface HousekeepingOptions {
  clock: Clock;
  log: Logger;
  /** Which pods are wanted, and whether every source has been seen. */
  pods: Pick<PodConfig, 'sourcesReady' | 'wants' | 'wanted' | 'orphans'>;
  /** What the runtime holds (the PLEG's cache). */
  runtimePods(): ReadonlyMap<string, ObservedPod>;
  workers: { has(uid: string): boolean; update(u: PodUpdate): void; syncKnownPods(wanted: ReadonlySet<string>): void };
  /** Removes the pod directories `keep` does not claim; returns the UIDs removed (runtime/volumes.ts). */
  cleanupPodDirs(keep: (uid: string) => boolean, signal: AbortSignal): Promise<string[]>;
  /** Removes the pod cgroups `keep` does not claim; returns the UIDs removed (cm/pod-cgroups.ts). */
  cleanupPodCgroups?(keep: (uid: string) => boolean): Promise<string[]>;
  /** The GC passes (gc.ts), bound to the runtime. */
  gc: { containers(signal: AbortSignal): Promise<unknown>; images(signal: AbortSignal): Promise<unknown>; unusedImages?(signal: AbortSignal): Promise<number>; cni(signal: AbortSignal): Promise<unknown> };
  /** `imageGCScheduleCron`: also remove every unused image on this cron schedule. */
  imageGCScheduleCron?: string;
  /** Tests: accept a six-field (seconds) schedule. */
  cronAllowSeconds?: boolean;
  /** Called after each `pods` pass (the running pods/containers gauges). */
  afterPodCleanup?(): void;
  /** Period of `pods` and `pod-dirs` (kubelet housekeeping, 2 s). */
  housekeepingMs?: number;
}

/**
 * The jobs' periods, in ms. Runtime GC runs every 10 s where kubelet's ContainerGCPeriod is 1 min:
 * kubelet lists the runtime for it, while this pass plans from the PLEG's cache (relisted every
 * second), so a pass with nothing to remove makes no CRI call at all. And what it removes after a
 * crash matters soon: containerd keeps a sandbox whose RunPodSandbox failed half-way precisely
 * because its network teardown failed, so until the pass runs StopPodSandbox that sandbox may still
 * hold its pod IP. 10 s (the node status period) bounds that, and how long `crictl pods` shows
 * NotReady leftovers after an agent restart (issue 15's kill-during-a-burst case).
 */
export const PERIODS = { containers: 10_000, images: 5 * 60_000, cni: 5 * 60_000 } as const;

export class Housekeeping {
  readonly #o: HousekeepingOptions;
  readonly #jobs: PeriodicJob[] = [];

  constructor(o: HousekeepingOptions) {
    this.#o = o;
  }

  /** Schedules every job until `signal` aborts; resolves once each has stopped (no run in flight). */
  async run(signal: AbortSignal): Promise<void> {
    const hk = this.#o.housekeepingMs ?? 2000;
    // The jobs share one link to the caller's signal: the agent's signal is the parent of every
    // loop, and each listener on it counts towards node's leak warning (agent.ts).
    const link = linkAbort(signal);
    const every = (name: string, periodMs: number, job: (s: AbortSignal) => unknown): void => {
      this.#jobs.push(
        this.#o.clock.every(periodMs, job, {
          signal: link.signal,
          timeoutMs: JOB_TIMEOUT_MS,
          onError: (err) => this.#o.log.warn({ job: name, err: describeError(err) }, 'Housekeeping job failed'),
        }),
      );
    };
    every('pods', hk, () => this.cleanupPods());
    every('pod-dirs', hk, (s) => this.#cleanupPodDirs(s));
    every('container-gc', PERIODS.containers, (s) => this.#o.gc.containers(s));
    every('image-gc', PERIODS.images, (s) => this.#o.gc.images(s));
    every('cni-gc', PERIODS.cni, (s) => this.#o.gc.cni(s));
    const cronJob = await this.#scheduleImageGc(link.signal);
    await Promise.all(this.#jobs.map((j) => j.stopped));
    await cronJob?.close();
    link.dispose();
  }

  /** The image GC on imageGCScheduleCron, when set; node-cron is loaded only then. */
  async #scheduleImageGc(signal: AbortSignal): Promise<{ close(): Promise<void> } | undefined> {
    const expr = this.#o.imageGCScheduleCron;
    const unused = this.#o.gc.unusedImages;
    if (!expr || !unused || signal.aborted) return undefined;
    const { scheduleCron } = await import('@nodelet/base/cron');
    const log = this.#o.log;
    return scheduleCron('imageGCScheduleCron', expr, async () => {
      const freed = await unused(AbortSignal.any([signal, AbortSignal.timeout(JOB_TIMEOUT_MS)]));
      log.info({ job: 'image-gc-cron', bytes: freed }, 'Scheduled image garbage collection done');
    }, { log, name: 'image-gc-cron', ...(this.#o.cronAllowSeconds ? { allowSeconds: true } : {}) });
  }

  /** One `pods` pass (kubelet HandlePodCleanups). Public for tests. */
  cleanupPods(): void {
    const { pods, workers, log } = this.#o;
    if (!pods.sourcesReady) return;
    for (const p of pods.orphans(this.#o.runtimePods().values(), (uid) => workers.has(uid))) {
      log.info({ pod: `${p.namespace}/${p.name}`, podUID: p.uid }, 'Tearing down orphaned pod');
      const standIn: Pod = { metadata: { uid: p.uid, name: p.name, namespace: p.namespace }, spec: { containers: [], terminationGracePeriodSeconds: ORPHAN_GRACE_S } };
      workers.update({ pod: standIn, terminationRequested: true, gracePeriodS: ORPHAN_GRACE_S });
    }
    workers.syncKnownPods(pods.wanted());
    this.#o.afterPodCleanup?.();
  }

  async #cleanupPodDirs(signal: AbortSignal): Promise<void> {
    if (!this.#o.pods.sourcesReady) return;
    const removed = await this.#o.cleanupPodDirs((uid) => this.#wantsPodDir(uid), signal);
    if (removed.length) this.#o.log.info({ podUIDs: removed }, 'Orphaned pod directories removed');
    const cgroups = (await this.#o.cleanupPodCgroups?.((uid) => this.#wantsPodDir(uid))) ?? [];
    if (cgroups.length) this.#o.log.info({ podUIDs: cgroups }, 'Pod cgroups removed');
  }

  /** A pod directory is kept while a source wants the pod, a worker has it, or the runtime still holds any of it. */
  #wantsPodDir(uid: string): boolean {
    if (this.#o.pods.wants(uid) || this.#o.workers.has(uid)) return true;
    const p = this.#o.runtimePods().get(uid);
    return !!p && (p.sandboxes.length > 0 || p.containers.length > 0);
  }
}
