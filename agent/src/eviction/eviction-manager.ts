/**
 * Node-pressure eviction (kubelet eviction/eviction_manager.go): every 10 s it reads the stats
 * collector's latest Summary, decides which thresholds are met, keeps the node's pressure
 * conditions, and when a threshold is met past its grace period reclaims what the node can by
 * itself (disk: dead containers, unused images) and otherwise evicts one pod. One manager per
 * agent; `run` is its only loop, and rounds never overlap.
 *
 *   round ──▶ 1. observe the Summary's signals
 *             2. thresholds met (those met last round stay met until their minimum reclaim is free)
 *             3. conditions: True while a threshold was met within evictionPressureTransitionPeriod
 *             4. thresholds past their grace period, with numbers newer than last round's
 *             5. the first by priority (memory first): disk → node-level reclaim, enough? done
 *             6. rank the active pods, evict the first that is not critical:
 *                Warning Evicted event, kill through the pod workers (grace 1 s for a hard
 *                threshold, evictionMaxPodGracePeriod for a soft one), status Failed/Evicted
 *
 *   MemoryPressure / DiskPressure / PIDPressure ──▶ conditions() ──▶ node status (node-status.ts)
 */
import { describeError, type Clock, type Logger } from '@nodelet/base';
import type { Pod } from '@nodelet/api/agent';
import type { PodStatusFn } from '../kubecontainer/pod-update.js';
import type { PodStats, Summary } from '../stats/types.js';
import { EVICTED_REASON, evictedStatus, evictionMessage } from './message.js';
import { isCriticalForEviction, rankForEviction, type PodStatsFn } from './ranking.js';
import {
  byEvictionPriority, conditionsObservedSince, nodeConditions, observe, SIGNAL_RESOURCE, thresholdKey, thresholdsFirstObservedAt,
  thresholdsMet, thresholdsMetGracePeriod, thresholdsUpdatedStats, type Observations, type PressureCondition,
} from './signals.js';
import type { Threshold } from './thresholds.js';

/** kubelet's evictionMonitoringPeriod. */
export const EVICTION_MONITORING_PERIOD_MS = 10_000;
/** kubelet's immediateEvictionGracePeriodSeconds: the grace of a pod evicted for a hard threshold. */
export const HARD_EVICTION_GRACE_S = 1;
/** How long a round waits for an evicted pod to stop (kubelet podCleanupTimeout). */
const POD_CLEANUP_TIMEOUT_MS = 30_000;
const ROUND_TIMEOUT_MS = 60_000;

/** Node events when a condition changes (kubelet nodestatus setters' recordEventFunc). */
const CONDITION_EVENTS: Record<PressureCondition, [onTrue: string, onFalse: string]> = {
  MemoryPressure: ['NodeHasInsufficientMemory', 'NodeHasSufficientMemory'],
  DiskPressure: ['NodeHasDiskPressure', 'NodeHasNoDiskPressure'],
  PIDPressure: ['NodeHasInsufficientPID', 'NodeHasSufficientPID'],
};

export interface EvictionManagerOptions {
  nodeName: string;
  thresholds: readonly Threshold[];
  pressureTransitionPeriodMs: number;
  maxPodGracePeriodS: number;
  /** The latest Summary (`fresh`: measured now, after a node-level reclaim). */
  summary(signal: AbortSignal, fresh: boolean): Promise<Summary>;
  /** Pods whose workers still sync them (not terminating or finished). */
  activePods(): Pod[];
  /** Stops a pod that stays in the API; resolves when its containers are stopped (PodWorkers.kill). */
  killPod(pod: Pod, gracePeriodS: number, statusFn: PodStatusFn): Promise<void>;
  /** Node-level disk reclaim: dead containers, then unused images. */
  reclaimDisk?(signal: AbortSignal): Promise<void>;
  podEvent(pod: Pod, type: 'Normal' | 'Warning', reason: string, message: string): void;
  nodeEvent(type: 'Normal' | 'Warning', reason: string, message: string): void;
  /** A pressure condition changed: report the node status now. */
  onConditionsChanged(): void;
  clock: Clock;
  log: Logger;
  periodMs?: number;
}

export class EvictionManager {
  readonly #o: EvictionManagerOptions;
  #firstObservedAt = new Map<string, number>();
  readonly #conditionLastObservedAt = new Map<PressureCondition, number>();
  #conditions = new Set<PressureCondition>();
  #thresholdsMet: Threshold[] = [];
  #lastObservations?: Observations;

  constructor(o: EvictionManagerOptions) {
    this.#o = o;
  }

  /** The pressure conditions that are True now. */
  conditions(): ReadonlySet<PressureCondition> {
    return this.#conditions;
  }

  /** Rounds every period (the first at once) until `signal` aborts; a failed round is logged. */
  async run(signal: AbortSignal): Promise<void> {
    const job = this.#o.clock.every(this.#o.periodMs ?? EVICTION_MONITORING_PERIOD_MS, (s) => this.synchronize(s), {
      signal,
      immediate: true,
      timeoutMs: ROUND_TIMEOUT_MS,
      onError: (err) => this.#o.log.warn({ err: describeError(err) }, 'Eviction round failed'),
    });
    await job.stopped;
  }

  /** One round (steps in the file comment). Returns the pod it evicted, if any. */
  async synchronize(signal: AbortSignal): Promise<Pod | undefined> {
    const o = this.#o;
    if (o.thresholds.length === 0) return undefined;
    // 1. Signals.
    const summary = await o.summary(signal, false);
    const obs = observe(summary);
    // 2. Thresholds met, ignoring grace periods.
    let met = thresholdsMet(o.thresholds, obs, false);
    const unresolved = thresholdsMet(this.#thresholdsMet, obs, true).filter((t) => !met.some((m) => thresholdKey(m) === thresholdKey(t)));
    met = [...met, ...unresolved];
    const now = o.clock.now();
    this.#firstObservedAt = thresholdsFirstObservedAt(met, this.#firstObservedAt, now);
    // 3. Conditions, held for the transition period.
    for (const c of nodeConditions(met)) this.#conditionLastObservedAt.set(c, now);
    this.#setConditions(conditionsObservedSince(this.#conditionLastObservedAt, o.pressureTransitionPeriodMs, now));
    // 4. What drives eviction: past the grace period, on numbers not seen before.
    this.#thresholdsMet = thresholdsMetGracePeriod(met, this.#firstObservedAt, now);
    const actionable = thresholdsUpdatedStats(this.#thresholdsMet, obs, this.#lastObservations);
    this.#lastObservations = obs;
    if (actionable.length === 0) return undefined;
    // 5. The threshold to act on, and node-level reclaim first.
    const threshold = byEvictionPriority(actionable)[0]!;
    const resource = SIGNAL_RESOURCE[threshold.signal];
    o.log.warn({ signal: threshold.signal, threshold: threshold.raw, available: obs.get(threshold.signal)?.available }, 'Eviction threshold met, attempting to reclaim');
    o.nodeEvent('Warning', 'EvictionThresholdMet', `Attempting to reclaim ${resource}`);
    if (threshold.signal !== 'memory.available' && threshold.signal !== 'pid.available' && o.reclaimDisk && (await this.#reclaimed(signal))) return undefined;
    // 6. Rank the active pods and evict one.
    const pods = o.activePods();
    if (pods.length === 0) {
      o.log.error({ signal: threshold.signal }, 'Eviction threshold met but no pod to evict');
      return undefined;
    }
    const stats = podStatsLookup(summary);
    for (const pod of rankForEviction(pods, threshold.signal, stats)) {
      const name = `${pod.metadata.namespace}/${pod.metadata.name}`;
      if (isCriticalForEviction(pod)) {
        o.log.error({ pod: name }, 'Cannot evict a critical pod');
        continue;
      }
      const message = evictionMessage(pod, threshold, obs.get(threshold.signal), stats);
      const grace = threshold.gracePeriodMs === 0 ? HARD_EVICTION_GRACE_S : o.maxPodGracePeriodS;
      o.podEvent(pod, 'Warning', EVICTED_REASON, message);
      o.log.info({ pod: name, podUID: pod.metadata.uid, signal: threshold.signal, message }, 'Evicting pod');
      await this.#wait(o.killPod(pod, grace, evictedStatus(message, () => o.clock.now())), signal);
      return pod;
    }
    o.log.error({ signal: threshold.signal }, 'Eviction threshold met but every pod is critical');
    return undefined;
  }

  /** Runs the disk reclaim, then measures again: true when no met threshold is left (minimum reclaim included). */
  async #reclaimed(signal: AbortSignal): Promise<boolean> {
    try {
      await this.#o.reclaimDisk!(signal);
    } catch (err) {
      if (signal.aborted) throw err;
      this.#o.log.warn({ err: describeError(err) }, 'Node-level disk reclaim failed');
    }
    const fresh = observe(await this.#o.summary(signal, true));
    if (thresholdsMet(this.#thresholdsMet, fresh, true).length > 0) return false;
    this.#o.log.info({}, 'Resource pressure reduced without evicting pods');
    return true;
  }

  /** Waits for the evicted pod to stop, at most {@link POD_CLEANUP_TIMEOUT_MS}. */
  async #wait(stopped: Promise<void>, signal: AbortSignal): Promise<void> {
    const timer = new AbortController();
    const onAbort = (): void => timer.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const done = await Promise.race([stopped.then(() => true), this.#o.clock.sleep(POD_CLEANUP_TIMEOUT_MS, timer.signal).then(() => false, () => true)]);
      if (!done) this.#o.log.warn({}, 'Evicted pod did not stop in time');
    } finally {
      timer.abort();
      signal.removeEventListener('abort', onAbort);
    }
  }

  #setConditions(next: Set<PressureCondition>): void {
    const prev = this.#conditions;
    this.#conditions = next;
    let changed = false;
    for (const c of Object.keys(CONDITION_EVENTS) as PressureCondition[]) {
      if (prev.has(c) === next.has(c)) continue;
      changed = true;
      const reason = CONDITION_EVENTS[c][next.has(c) ? 0 : 1];
      this.#o.log.info({ condition: c, status: next.has(c) }, 'Node pressure condition changed');
      this.#o.nodeEvent('Normal', reason, `Node ${this.#o.nodeName} status is now: ${reason}`);
    }
    if (changed) this.#o.onConditionsChanged();
  }
}

/** The Summary's pod stats by UID. */
function podStatsLookup(s: Summary): PodStatsFn {
  const byUid = new Map<string, PodStats>(s.pods.map((p) => [p.podRef.uid, p]));
  return (pod) => byUid.get(pod.metadata.uid ?? '');
}
